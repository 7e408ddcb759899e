package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

type validateOptions struct {
	report      reportOut
	io          *IO
	imports     verify.ImportChecker
	dir         string
	maxProblems int
	output      string
}

func newValidateCmd(io *IO, d *Deps) *cobra.Command {
	o := &validateOptions{io: io, imports: d.Imports}
	cmd := &cobra.Command{
		Use:   "validate RUNDIR",
		Short: "Check a run directory against the run format v1 (exit 3 when invalid)",
		Long: `validate checks a run directory: manifest.json and claims.json against their
published JSON Schemas and semantic rules (must-state fields, quantized
precisions need a quality gate, image digests, SLO), every record streamed from
records.jsonl or records.jsonl.zst (types, time ordering, chunk tokens, status
rules, unique ids, declared points and repeats), every declared point×repeat
measured, and the workload hash; an imported run must be exactly what its
importer derives from the source files under attachments/. It reports every problem with file, line and
field, up to --max-problems, and exits 3 when the run is invalid.`,
		Example: `  benchseal validate demo-run
  benchseal validate --output json --max-problems 10 run`,
		Args: exactArgs(1, "one run directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dir = args[0]
			if o.maxProblems < 1 {
				return usagef("--max-problems must be ≥ 1")
			}
			return runValidate(cmd.Context(), o)
		},
	}
	cmd.Flags().IntVar(&o.maxProblems, "max-problems", 50, "report at most this many problems, then count the rest")
	enumFlag(cmd.Flags(), &o.output, "output", "text", []string{"text", "json"}, "report format: text or json")
	o.report.bind(cmd.Flags(), "valid, or invalid with its problems, which exits 3", "a usage error or a file it cannot read")
	return cmd
}

// validateReport is the --output json report.
type validateReport struct {
	Run      string             `json:"run"`
	Valid    bool               `json:"valid"`
	Problems []schema.Problem   `json:"problems"`
	Omitted  int                `json:"omitted"`
	Summary  *schema.RunSummary `json:"summary,omitempty"`
}

func runValidate(ctx context.Context, o *validateOptions) error {
	if err := checkRunDirArg(o.dir); err != nil {
		return err
	}
	rf, err := o.report.open(o.io, o.dir)
	if err != nil {
		return err
	}
	defer rf.Discard()
	out := rf.w
	sum, err := artifact.ValidatePackable(ctx, o.dir, o.maxProblems)
	var ve *schema.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return err
	}
	if ve == nil {
		// An imported run must be what its importer derives from the
		// source files it attaches.
		if err := checkImportedDir(ctx, o.imports, o.dir); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			ve = &schema.ValidationError{Problems: []schema.Problem{{File: schema.ManifestFile, Message: err.Error()}}}
		}
	}
	if o.output == "json" {
		rep := validateReport{Run: o.dir, Valid: ve == nil, Problems: []schema.Problem{}, Summary: sum}
		if ve != nil {
			rep.Problems, rep.Omitted = ve.Problems, ve.Omitted
		}
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", b)
		if err := rf.Commit(); err != nil {
			return err
		}
		if ve != nil {
			return silentExit{ExitRejected}
		}
		return nil
	}
	if ve != nil {
		for _, p := range ve.Problems {
			fmt.Fprintln(out, p.String())
		}
		if ve.Omitted > 0 {
			fmt.Fprintf(out, "... and %d more (raise --max-problems to see them)\n", ve.Omitted)
		}
		if err := rf.Commit(); err != nil {
			return err
		}
		return rejected(fmt.Errorf("%s: invalid run: %d problem(s)", o.dir, len(ve.Problems)+ve.Omitted))
	}
	fmt.Fprintf(out, "%s: valid (%d records: %d measured, %d warmup; %d chunks)\n",
		o.dir, sum.Records, sum.Measure, sum.Warmup, sum.Chunks)
	if m := shardOfRun(o.dir); m != "" {
		fmt.Fprintln(out, m)
	}
	if h := scrapedHardware(o.dir); h != "" {
		fmt.Fprintf(out, "hardware %s\n", h)
	}
	if sum.Incomplete {
		fmt.Fprintf(out, "WARNING: the run is marked INCOMPLETE (%s): %d declared measured request(s) have no record: replay counts them as not sent and as misses in SLO attainment\n",
			sum.IncompleteReason, sum.Missing)
	}
	return rf.Commit()
}

// checkImportedDir re-derives the imported run directory dir from its
// attachments (nil when the run is not imported).
func checkImportedDir(ctx context.Context, imports verify.ImportChecker, dir string) error {
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		return err
	}
	if !rd.Manifest().Imported() {
		return nil
	}
	return imports.CheckImport(ctx, rd, rd.ReadAttachment)
}

// shardOfRun says, for a shard run, that it holds one shard's share ("" for
// any other run or when the manifest cannot be read).
func shardOfRun(dir string) string {
	rd, err := schema.OpenRunDir(dir)
	if err != nil || rd.Manifest().Shard == nil || rd.Manifest().Shard.Count < 2 {
		return ""
	}
	s := rd.Manifest().Shard
	return fmt.Sprintf("NOTE: this run is shard %d of %d of a sharded capture: it holds only that shard's share of the plan; benchseal merge joins the shards into the run", s.Index, s.Count)
}

// scrapedHardware is the run's HardwareSummary when it has accelerator
// scrapes (the stated hardware beside the devices scraped), else "".
func scrapedHardware(dir string) string {
	f, err := os.Open(filepath.Join(dir, schema.ManifestFile))
	if err != nil {
		return ""
	}
	defer f.Close()
	m, err := schema.DecodeManifest(f, schema.ManifestFile)
	if err != nil || m.GPUMetrics == nil {
		return ""
	}
	return m.HardwareSummary()
}
