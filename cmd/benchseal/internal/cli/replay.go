package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
)

type replayOptions struct {
	report      reportOut
	path        string
	slo         string
	definitions string
	version     string
	output      string
	sweep       string
	mlperf      string
	target      string
	smooth      string
	stall       string
	writeClaims string
	force       bool
	detail      bool
	tolerance   float64
}

func replayLong() string {
	var b strings.Builder
	b.WriteString(`Recompute every metric of a run (a run directory or a bundle) from its raw
per-request records, for every load point and repeat, warmup records excluded.
The same input gives byte-identical output on any machine: all inputs are
integer nanoseconds, sums are exact, values are rounded once (half to even)
when printed.

--slo overrides the manifest's SLO (inclusive limits; one_token=pass|fail says
whether a one-token answer, which has no TPOT, passes a TPOT limit). It never
changes the run: it answers "what is the goodput under my SLO".

Meanings:
  ` + report.Meanings[schema.MetricTPOT] + `
  ` + report.Meanings[schema.MetricITL] + `

Definitions (--definitions):
`)
	for _, d := range replay.Definitions() {
		fmt.Fprintf(&b, "\n  %s — %s\n", d.Name(), d.Summary())
		for _, line := range strings.Split(d.Help(), "\n") {
			fmt.Fprintf(&b, "      %s\n", line)
		}
	}
	b.WriteString(`
Definitions versions (--definitions-version; docs/format.md "Versions"): a
changed definition is a new version and the old one stays, so claims made
under it still recompute. Default: the current version of --definitions.
`)
	for _, v := range replay.Versions() {
		if v.Definitions != "benchseal" {
			continue
		}
		fmt.Fprintf(&b, "\n  %s", v.Name)
		if v.Changed != "" {
			fmt.Fprintf(&b, " — %s", v.Changed)
		}
		if v.Defect != "" {
			fmt.Fprintf(&b, " (known defect: %s)", v.Defect)
		}
	}
	b.WriteString(`
  TOOL/2026.11 — each peer's first rules, not kept; TOOL/2026.12 its current ones

Smooth goodput (--smooth alpha=2.5,v=200ms,f=linear:2s) follows arXiv 2410.14257:
deadlines d_i = C + v·i from the scheduled (else sent) time, idle latency
l = max_i(t_i − d_i), benefit n − alpha·clamp(max(l,0)/L, 0, 1); without
--smooth it is reported as null (there is no default penalty function).

--sweep-slo ` + replay.SweepExample + ` tabulates goodput against one limit (the
text output prints the sweep alone; without :steps the limits are FROM, TO and
every multiple between them of one round step, 1, 2 or 5 × a power of ten,
the smallest giving at most ` + strconv.Itoa(replay.MaxRoundIntervals) + ` intervals: 50ms..2s gives 50ms, 100ms, 200ms,
300ms, … 2s, in 100 ms steps);
--mlperf ` + replay.MLPerfExample + ` runs the MLPerf server validity check (p99 by
index ⌊0.99·n⌋, early stopping with exact binomials, 600 s, 100 queries; as in
LoadGen every issued query counts: a failed one is +∞, over both limits, and
makes the check INVALID);
--attainment-target sets the attainment of the capacity (the highest rate up to
which every rate meets it: the first crossing).

--write-claims FILE records the result as the publisher's claims (per point and
repeat: request accounting, window, rates, goodput, attainment and the quoted
latency percentiles; medians across repeats), under these definitions and,
when --slo is given, that SLO; pack the run and verify recomputes every one.
A run captured under a pre-registered plan (capture --plan) claims exactly the
plan's metrics (its manifest copies them), as verify --plan requires.
It prints what it wrote (the file, the count of claims, definitions, SLO), not
the report; with --output it prints the report too and the note on stderr.
An existing FILE is never replaced without --force: an imported run's
claims.json holds the tool's own published figures, which verify checks.

JSON output (schema benchseal/replay/v1) is documented in docs/replay.md.
--output html writes one self-contained page (inline CSS and SVG charts, no
script, nothing fetched): benchseal replay RUN --output html --out report.html`)
	return b.String()
}

func newReplayCmd(io *IO) *cobra.Command {
	o := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay PATH",
		Short: "Recompute every metric of a run or bundle from its raw records",
		Long:  replayLong(),
		Args:  exactArgs(1, "one run directory or bundle"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			return runReplay(cmd, io, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.slo, "slo", "", "SLO overriding the manifest's, e.g. "+replay.SLOExample+","+schema.SLOOneToken+"="+schema.OneTokenFail)
	enumFlag(f, &o.definitions, "definitions", "benchseal", replay.DefinitionNames(), "metric definitions: "+strings.Join(replay.DefinitionNames(), "|"))
	f.StringVar(&o.version, "definitions-version", "", "definitions version to compute under, e.g. benchseal/2026.11 (default: the current one)")
	enumFlag(f, &o.output, "output", "text", []string{"text", "json", "csv", "markdown", "html"}, "output format: text|json|csv|markdown|html")
	o.report.bind(f, "the recomputed metrics", "a usage error, a file it cannot read or an invalid run or bundle (exit 3)")
	f.BoolVar(&o.detail, "detail", false, "text output: every metric, percentile, count, cold, server and overload line of each point and repeat (default: one summary table)")
	f.StringVar(&o.sweep, "sweep-slo", "", "goodput as a function of one SLO limit, e.g. "+replay.SweepExample)
	f.StringVar(&o.mlperf, "mlperf", "", "run the MLPerf server validity check with these limits, e.g. "+replay.MLPerfExample)
	f.StringVar(&o.target, "attainment-target", "0.9", "SLO attainment for the capacity estimate")
	f.StringVar(&o.smooth, "smooth", "", "smooth goodput parameters, e.g. alpha=2.5,v=200ms,f=linear:2s")
	f.StringVar(&o.stall, "stall-threshold", "", "stall threshold (default: the TPOT limit, else 1s)")
	f.StringVar(&o.writeClaims, "write-claims", "", "also write the headline results as claims to this file (e.g. RUNDIR/claims.json)")
	f.BoolVar(&o.force, "force", false, "with --write-claims: replace the file when it exists and holds claims (never one of the input's files other than RUNDIR/claims.json)")
	f.Float64Var(&o.tolerance, "claims-tolerance", replay.DefaultClaimTolerance, "relative tolerance recorded in the written claims")
	return cmd
}

// refuseReplace is the error of --write-claims onto a directory, or onto
// a file that exists without force (nil otherwise).
func refuseReplace(path string, force bool) error {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.IsDir():
		return usagef("replay: --write-claims %s is a directory: name the claims file (e.g. RUNDIR/claims.json)", path)
	case err == nil && !isClaimsDocument(path):
		return usagef("replay: --write-claims %s: the file exists and is not a claims document (schema %s); --force replaces only claims: name another file", path, schema.ClaimsSchemaV1)
	case err == nil && force:
		return nil
	case err == nil:
		return fmt.Errorf("replay: --write-claims %s: the file exists (refusing to replace the claims in it, which may be the ones a bundle was packed with); "+
			"pass --force to replace it, or write the claims elsewhere", path)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return fmt.Errorf("replay: --write-claims %s: %w", path, err)
	}
}

// isClaimsDocument reports whether path holds one JSON object whose schema
// names a claims document (any version: --force may replace claims an
// older benchseal wrote). A records file (many lines), a manifest or
// anything else is not one.
func isClaimsDocument(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, schema.MaxClaimsSize+1))
	if err != nil || int64(len(b)) > schema.MaxClaimsSize {
		return false
	}
	var doc struct {
		Schema string `json:"schema"`
	}
	return json.Unmarshal(b, &doc) == nil && strings.HasPrefix(doc.Schema, "benchseal/claims/")
}

// refuseClaimsOverInput refuses a --write-claims path that is the input
// or inside it, or the --out report: the claims would replace the run's
// manifest, records or workload (and --force does not change that). The
// one file of a run directory it may name is the run's own claims file
// (RUNDIR/claims.json), which replay does not read and pack does.
func refuseClaimsOverInput(claims, input, out string) error {
	if out != "" {
		if a, b := filepath.Clean(claims), filepath.Clean(out); a == b {
			return usagef("--write-claims %s is also the --out report: name two files", claims)
		}
	}
	dir, derr := filepath.EvalSymlinks(filepath.Dir(claims))
	root, rerr := filepath.EvalSymlinks(input)
	if derr == nil && rerr == nil && dir == root && filepath.Base(claims) == schema.ClaimsFile {
		if _, err := os.Stat(filepath.Join(input, schema.ManifestFile)); err == nil {
			return nil // the run directory's claims file
		}
	}
	return refuseInputAsOut("--write-claims", claims, []string{input})
}

// runReplay parses the flags into replay options, recomputes the run,
// writes the claims when asked and then the report.
func runReplay(cmd *cobra.Command, io *IO, o *replayOptions) error {
	opts, err := o.engineOptions(cmd)
	if err != nil {
		return err
	}
	if o.writeClaims != "" {
		if err := refuseClaimsOverInput(o.writeClaims, o.path, o.report.path); err != nil {
			return err
		}
		if err := refuseReplace(o.writeClaims, o.force); err != nil {
			return err
		}
	}
	rf, err := o.report.open(io, o.path)
	if err != nil {
		return err
	}
	defer rf.Discard()
	run, closeRun, err := openRunOrBundle(o.path)
	if err != nil {
		return invalidAsRejected(err)
	}
	defer closeRun()
	res, err := replayWithWorkload(cmd.Context(), run, opts)
	if err != nil {
		return invalidAsRejected(err)
	}
	empty := len(res.Results) == 0 && !run.Manifest().ExternalReference()
	if o.writeClaims != "" && !empty {
		if done, err := o.writeClaimsFile(cmd, io, run.Manifest(), res); done || err != nil {
			return err
		}
	}
	err = writeReplayReport(rf.w, o, run.Manifest(), res)
	if err == nil {
		err = rf.Commit()
	}
	if err != nil {
		return err
	}
	if empty {
		// Nothing was recomputed: as validate, not a success (and no
		// claims were written).
		return rejected(fmt.Errorf("%s: the run has no records: nothing to recompute", o.path))
	}
	return nil
}

// engineOptions is runReplay's first phase: the replay options its flags
// give, a usage error naming the flag that does not parse.
func (o *replayOptions) engineOptions(cmd *cobra.Command) (replay.Options, error) {
	var opts replay.Options
	var err error
	opts.Definitions = o.definitions
	opts.Version = o.version
	if o.version != "" {
		if _, err := replay.LookupVersion(o.definitions, o.version); err != nil {
			return opts, usagef("--definitions-version: %v", err)
		}
	}
	if o.slo != "" || cmd.Flags().Changed("slo") {
		s, err := replay.ParseSLO(o.slo)
		if err != nil {
			return opts, usagef("--slo: %v", err)
		}
		opts.SLO = &s
	}
	if o.sweep != "" {
		if opts.Sweep, err = replay.ParseSweep(o.sweep); err != nil {
			return opts, usagef("--sweep-slo: %v", err)
		}
	}
	if o.mlperf != "" {
		if opts.MLPerf, err = replay.ParseMLPerf(o.mlperf); err != nil {
			return opts, usagef("--mlperf: %v", err)
		}
	}
	if opts.AttainmentTarget, err = replay.ParseFraction(o.target); err != nil {
		return opts, usagef("--attainment-target: %v", err)
	}
	if o.smooth != "" {
		if opts.Smooth, err = replay.ParseSmooth(o.smooth); err != nil {
			return opts, usagef("--smooth: %v", err)
		}
	}
	if o.stall != "" {
		s, err := replay.ParseSLO(schema.SLOTTFT + "=" + o.stall)
		if err != nil || *s.TTFTNS <= 0 {
			return opts, usagef("--stall-threshold %q: want a positive duration", o.stall)
		}
		opts.StallThresholdNS = *s.TTFTNS
	}
	return opts, nil
}

// writeClaimsFile is runReplay's --write-claims phase: it writes the
// claims res gives and says so. done: the note went to stdout and no
// report follows (--output was not given).
func (o *replayOptions) writeClaimsFile(cmd *cobra.Command, io *IO, m *schema.Manifest, res *replay.Result) (done bool, err error) {
	if !(o.tolerance >= 0 && o.tolerance <= schema.MaxClaimTolerance) {
		return false, usagef("--claims-tolerance %s: want 0 ≤ t ≤ %s", digits.Shortest(o.tolerance), digits.Shortest(schema.MaxClaimTolerance))
	}
	claims, planNote := claimsToWrite(m, res, o.tolerance)
	b, err := schema.MarshalDocument(claims)
	if err != nil {
		return false, err
	}
	if err := refuseReplace(o.writeClaims, o.force); err != nil {
		return false, err
	}
	if err := schema.WriteFileAtomic(o.writeClaims, b, 0o644); err != nil {
		return false, err
	}
	// What was written, not the report it was taken from: --output
	// asks for the report as well (on stdout; the note then goes to
	// stderr, so the report stays parseable).
	note := report.ClaimsWrittenText(o.writeClaims, claims) + planNote
	if m.Incomplete {
		note += "; the run is INCOMPLETE (" + m.IncompleteReason + "): replay without --write-claims shows how the missing work is counted"
	}
	if !cmd.Flags().Changed("output") {
		fmt.Fprintln(io.Out, note)
		return true, nil
	}
	fmt.Fprintln(io.ErrOut, note)
	return false, nil
}

// writeReplayReport writes the report in the format asked for: text is
// the summary table unless --detail asks for every line.
func writeReplayReport(w io.Writer, o *replayOptions, m *schema.Manifest, res *replay.Result) error {
	f := report.Format(o.output)
	switch {
	case f == report.FormatHTML:
		in := &compare.Input{Name: o.path, Manifest: m, Result: res, Verification: compare.Verification{Status: compare.NotChecked}}
		return report.HTMLRun(w, res, in)
	case f == report.FormatText && !o.detail:
		f = report.FormatBrief
	}
	return report.WriteRun(w, f, res, m)
}

// openRunOrBundle opens a run directory (one holding manifest.json) or a
// bundle (a layout directory or tar file).
// invalidAsRejected maps bad input (a manifest beyond the limits, a record
// line too long, a damaged bundle), whether found while opening the run or
// while replaying it, to exit 3, as validate and verify say; other errors
// pass through.
func invalidAsRejected(err error) error {
	if errors.Is(err, schema.ErrInvalid) || errors.Is(err, artifact.ErrInvalid) {
		return rejected(err)
	}
	return err
}

// maxReplayProblems is how many problems replay lists for an invalid run
// directory (compare and decide list as many).
const maxReplayProblems = 20

func openRunOrBundle(path string) (schema.Run, func(), error) {
	if _, err := os.Stat(filepath.Join(path, schema.ManifestFile)); err == nil {
		// Checked as validate checks it, in replay's pass over the records:
		// an invalid run is refused (exit 3), never reported. So is a
		// bundle, below: its signer may have crafted every byte.
		rd, err := schema.OpenCheckedRunDir(path, maxReplayProblems)
		if err != nil {
			return nil, nil, err
		}
		return rd, func() {}, nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("open %s: no such run directory or bundle", path)
	}
	if err := checkBundleArg(path); err != nil {
		return nil, nil, err
	}
	b, err := artifact.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return b.Checked(maxReplayProblems), func() { b.Close() }, nil
}

// claimsToWrite returns the claims replay --write-claims writes, and a
// note on them: exactly the planned metrics when the manifest names a
// pre-registered plan and copies its metric list (a plan check rejects any
// other claim), else the headline metrics.
func claimsToWrite(m *schema.Manifest, res *replay.Result, tolerance float64) (*schema.Claims, string) {
	switch {
	case m.Plan == nil:
		return res.Claims(nil, tolerance), ""
	case m.Plan.Metrics == nil:
		return res.Claims(nil, tolerance), fmt.Sprintf("; the run names pre-registered plan sha256:%s but its manifest does not copy the plan's metrics "+
			"(plan.metrics: it was captured before capture recorded them): every headline metric is claimed, and verify --plan rejects any the plan does not list", m.Plan.SHA256)
	default:
		return res.PlannedClaims(m.Plan.Metrics, tolerance), fmt.Sprintf("; only the metrics of pre-registered plan sha256:%s (%s)", m.Plan.SHA256, strings.Join(m.Plan.Metrics, ","))
	}
}

// replayWithWorkload replays run, with its workload items when it is a
// trace replay (traceWorkload).
func replayWithWorkload(ctx context.Context, run schema.Run, opts replay.Options) (*replay.Result, error) {
	w, err := traceWorkload(run)
	if err != nil {
		return nil, err
	}
	opts.Workload = w
	return replay.Replay(ctx, run, opts)
}

// traceWorkload reads the workload items of a trace replay, whose items
// state their expected cacheable tokens: a run directory's workload.jsonl,
// or a bundle's workload layer (artifact.CheckedBundle.Workload: streamed
// through the bundle's checked reader, stored and uncompressed digest and
// size checked as it streams, decompression bounded by the declared size).
// nil, nil for other runs.
func traceWorkload(run schema.Run) (*schema.WorkloadItems, error) {
	if run.Manifest().Workload.Trace == nil {
		return nil, nil
	}
	var r io.ReadCloser
	name := schema.WorkloadFile
	switch run := run.(type) {
	case *schema.CheckedRunDir:
		if run.WorkloadPath == "" {
			return nil, nil
		}
		f, err := os.Open(run.WorkloadPath)
		if err != nil {
			return nil, fmt.Errorf("read workload: %w", err)
		}
		r, name = f, run.WorkloadPath
	case *artifact.CheckedBundle:
		// Read once, for this and for the record checks.
		w, err := run.Workload()
		if err != nil {
			return nil, fmt.Errorf("read workload: %w", err)
		}
		return w, nil
	default:
		return nil, nil
	}
	defer r.Close()
	w := schema.NewWorkloadItems()
	if _, err := io.Copy(w, r); err != nil {
		return nil, fmt.Errorf("read workload %s: %w", name, err)
	}
	w.Close()
	return w, nil
}
