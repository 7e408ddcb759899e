package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/compare/load"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// inputFlags are the flags compare and decide share: how inputs are
// checked and replayed, and which differences are accepted.
type inputFlags struct {
	imports       verify.ImportChecker
	keys          []string
	allowUnsigned bool
	definitions   string
	slo           string
	allowWorkload bool
	allowDiff     []string
	alpha         float64
	output        string
	sweep         string
	report        reportOut
}

// exampleLatencySLO is the SLO the examples of compare and decide pass:
// limits on TTFT and E2E latency, none on TPOT.
var exampleLatencySLO = replay.SLOPairs(map[string]string{schema.SLOTTFT: "200ms", schema.SLOE2E: "5s"})

func (f *inputFlags) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.keys, "key", nil, "pinned public key PEM (repeatable): each bundle must verify under one of them, and the key that did is printed")
	fl.BoolVar(&f.allowUnsigned, "allow-unsigned", false, "UNSAFE: accept bundles without checking signatures (integrity only); each is labelled unsigned")
	enumFlag(fl, &f.definitions, "definitions", "benchseal", replay.DefinitionNames(), "metric definitions for every input: "+strings.Join(replay.DefinitionNames(), "|"))
	fl.StringVar(&f.slo, "slo", "", "one SLO for every input, e.g. "+replay.SLOExample+" (default: the manifests', which must agree)")
	fl.BoolVar(&f.allowWorkload, "allow-different-workload", false, "compare runs whose workload hashes differ (said in the result)")
	fl.StringArrayVar(&f.allowDiff, "allow-difference", nil, "accept a difference in this required check (repeatable): "+strings.Join(allowableChecks(), ", "))
	fl.Float64Var(&f.alpha, "alpha", compare.DefaultAlpha, "significance level of the Mann–Whitney U test")
	enumFlag(fl, &f.output, "output", "text", []string{"text", "json", "markdown", "html"}, "output format: text|json|markdown|html")
	f.report.bind(fl, "the comparison, or the comparability guard's refusal, which exits 3", "a usage error, a file it cannot read or an input it rejects")
	fl.StringVar(&f.sweep, "sweep-slo", "", "HTML: also chart goodput against one SLO limit per configuration, e.g. "+replay.SweepExample)
}

func allowableChecks() []string {
	var out []string
	for _, c := range compare.RequiredChecks {
		if c != compare.CheckQualityGate {
			out = append(out, c)
		}
	}
	return out
}

// loadOptions validates the shared flags and turns them into load and
// guard options.
func (f *inputFlags) loadOptions(target string) (load.Options, compare.GuardOptions, error) {
	var lo load.Options
	var g compare.GuardOptions
	lo.Import = f.imports
	lo.Replay.Definitions = f.definitions
	if f.slo != "" {
		s, err := replay.ParseSLO(f.slo)
		if err != nil {
			return lo, g, usagef("--slo: %v", err)
		}
		s.Source = "flag"
		lo.Replay.SLO = &s
	}
	if f.sweep != "" {
		sw, err := replay.ParseSweep(f.sweep)
		if err != nil {
			return lo, g, usagef("--sweep-slo: %v", err)
		}
		lo.Replay.Sweep = sw
	}
	if target != "" {
		t, err := replay.ParseFraction(target)
		if err != nil {
			return lo, g, usagef("--attainment-target: %v", err)
		}
		lo.Replay.AttainmentTarget = t
	}
	if !(f.alpha > 0 && f.alpha < 1) {
		return lo, g, usagef("--alpha %s: want 0 < alpha < 1", digits.Shortest(f.alpha))
	}
	if len(f.keys) > 0 && f.allowUnsigned {
		return lo, g, usagef("--key and --allow-unsigned cannot be used together")
	}
	lo.AllowUnsignedUnsafe = f.allowUnsigned
	for _, p := range f.keys {
		b, err := os.ReadFile(p)
		if err != nil {
			return lo, g, err
		}
		k, err := artifact.ParsePublicKey(b)
		if err != nil {
			return lo, g, fmt.Errorf("%s: %w", p, err)
		}
		lo.Keys = append(lo.Keys, k)
	}
	for _, a := range f.allowDiff {
		for _, n := range strings.Split(a, ",") {
			n = strings.TrimSpace(n)
			ok := false
			for _, c := range allowableChecks() {
				ok = ok || c == n
			}
			if !ok {
				return lo, g, usagef("--allow-difference %q: want one of %s", n, strings.Join(allowableChecks(), ", "))
			}
			g.Allow = append(g.Allow, n)
		}
	}
	if f.allowWorkload {
		g.Allow = append(g.Allow, compare.CheckWorkload)
	}
	return lo, g, nil
}

// loadInputs reads every path through the verifier (bundles) or the
// validator (run directories) and replays it; a rejected input exits 3.
func loadInputs(ctx context.Context, errOut io.Writer, paths []string, lo load.Options) ([]*compare.Input, error) {
	if lo.AllowUnsignedUnsafe {
		fmt.Fprintln(errOut, "benchseal: WARNING: --allow-unsigned: bundle signatures are NOT checked; NOTHING IS AUTHENTICATED")
	}
	var ins []*compare.Input
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil && !isRunDir(p) {
			if err := checkBundleArg(p); err != nil {
				return nil, err
			}
		}
		in, err := load.Input(ctx, p, lo)
		if err != nil {
			if errors.Is(err, load.ErrRejected) {
				return nil, rejected(err)
			}
			if errors.Is(err, load.ErrNeedKey) {
				return nil, usagef("%v", err)
			}
			return nil, err
		}
		ins = append(ins, in)
	}
	return ins, nil
}

type compareOptions struct {
	inputFlags
	correction string
}

func newCompareCmd(io *IO, d *Deps) *cobra.Command {
	o := &compareOptions{}
	o.imports = d.Imports
	cmd := &cobra.Command{
		Use:   "compare A B [C ...]",
		Short: "Compare runs or bundles: comparability guard, then every matched load point and metric with a significance test",
		Long: `compare reads each input — a bundle through the verifier (it must verify under
one of the --key keys, e.g. one per publisher, and the key that verified it is
printed; --allow-unsigned checks integrity only and labels it unsigned), or a
run directory after validation (labelled: not signed) — replays it under one set
of definitions and one SLO, and compares B, C, … against A.

First the comparability guard, before any number: workload hash (or
--allow-different-workload, printed in the result), model name and revision,
tokenizer, boundary, definitions, input and output length distributions, load
mode and SLO must match; a quantized run needs a passing quality gate; precision,
prefix-cache state, evidence class, client, hardware and engine are shown as
differences. Each check is pass, differs (what) or unknown (not stated or
declared unknown). A required difference refuses the comparison (exit 3) unless
accepted with --allow-difference CHECK.

Load points are matched by offered load (concurrency or rate), not by name;
unmatched points are listed. The sample is the repeat (requests within a run
are correlated): per matched point and metric, the medians over repeats with
their distribution-free 95 % intervals, the relative change and a two-sided
Mann–Whitney U test at --alpha, as benchstat prints it: "~" when p > alpha,
and "need >= 4 repeats on each side to detect a difference at alpha level
0.05" when the repeats cannot show a difference. The number of tests is printed;
--correction holm applies Holm–Bonferroni over all of them. Undefined values
stay null with their reason; nothing is filled in.

External evidence (an imported MLPerf result) is shown as a linked reference
only, never compared or divided per accelerator.

JSON output (schema benchseal/compare/v1) is described by 'benchseal schema
compare'. Exit codes: 0 compared, 3 an input was rejected or the guard refused,
1 error, 2 usage.`,
		Example: `  benchseal compare a.oci.tar b.oci.tar --key publisher.pub
  benchseal compare runs/a runs/b --slo ` + exampleLatencySLO + ` --output markdown
  benchseal compare a b --allow-different-workload --correction holm --output json`,
		Args: minimumArgs(2, "two bundles or run directories"),
		RunE: func(cmd *cobra.Command, args []string) error {
			lo, g, err := o.loadOptions("")
			if err != nil {
				return err
			}
			rf, err := o.report.open(io, append(args, o.keys...)...)
			if err != nil {
				return err
			}
			defer rf.Discard()
			ins, err := loadInputs(cmd.Context(), io.ErrOut, args, lo)
			if err != nil {
				return err
			}
			res, err := compare.Compare(ins, compare.Options{Guard: g, Alpha: o.alpha, Correction: o.correction})
			if err != nil {
				return err
			}
			if err := report.WriteCompare(rf.w, report.Format(o.output), res); err != nil {
				return err
			}
			if err := rf.Commit(); err != nil {
				return err
			}
			if res.Guard.Verdict == compare.Refused {
				return silentExit{ExitRejected}
			}
			return nil
		},
	}
	o.bind(cmd)
	enumFlag(cmd.Flags(), &o.correction, "correction", compare.CorrectionNone, []string{compare.CorrectionNone, compare.CorrectionHolm}, "multiple-comparison correction: none|holm")
	return cmd
}

type decideOptions struct {
	inputFlags
	objective string
	target    string
}

func newDecideCmd(io *IO, d *Deps) *cobra.Command {
	o := &decideOptions{}
	o.imports = d.Imports
	cmd := &cobra.Command{
		Use:   "decide A B [C ...] --objective max-goodput|min-cost-per-good-token|max-capacity|min-energy-per-good-token",
		Short: "Choose a configuration under the buyer's objective and SLO, or say that none wins significantly",
		Long: `decide reads and checks the inputs as compare does (same guard, same flags) and
answers which configuration wins under one objective, under the SLO (--slo, or
the manifests' when they agree):

  max-goodput               highest goodput (requests meeting the SLO per
                            second) at each configuration's best load point
  min-cost-per-good-token   lowest cost per million output tokens of good
                            requests (manifest cost.price_per_hour over the
                            measurement window); no price → unknown, cannot win
  max-capacity              per repeat, the highest offered load up to which
                            every tested load's SLO attainment meets
                            --attainment-target (the first crossing: a load
                            passing above a failing one does not count, and
                            the notes say so); met at every tested load:
                            "≥ highest load, never crossed" (null)
  min-energy-per-good-token lowest accelerator energy per good token (J), from
                            each run's stored accelerator scrapes (capture
                            --gpu-metrics; board energy, not wall power); a
                            run without them has no value and cannot win

The decision table lists, per configuration: goodput, errors by kind,
completed output tokens, cost per million good tokens (or unknown), capacity,
prefix-cache state and confidence notes. The best median wins only when a
two-sided Mann–Whitney U test over the repeats finds it better than every other
eligible configuration at --alpha (Holm over those tests); otherwise decide
says no configuration wins significantly. The answer gives the margin, the
Hodges–Lehmann difference with its exact 95 % interval when the repeats allow
one, and the limits (unknowns, differences, too few repeats). A synthetic run
never wins a decision between different hardware.

JSON output (schema benchseal/decide/v1) is described by 'benchseal schema
decide'. Exit codes: 0 decided (including "no significant winner"), 3 an input
was rejected or the guard refused, 1 error, 2 usage.`,
		Example: `  benchseal decide a.oci.tar b.oci.tar --key publisher.pub --objective max-goodput --slo ` + exampleLatencySLO + `
  benchseal decide runs/a runs/b --objective max-capacity --attainment-target 0.95 --output html --out decision.html`,
		Args: minimumArgs(2, "two bundles or run directories"),
		RunE: func(cmd *cobra.Command, args []string) error {
			lo, g, err := o.loadOptions(o.target)
			if err != nil {
				return err
			}
			rf, err := o.report.open(io, append(args, o.keys...)...)
			if err != nil {
				return err
			}
			defer rf.Discard()
			ins, err := loadInputs(cmd.Context(), io.ErrOut, args, lo)
			if err != nil {
				return err
			}
			d, err := compare.Decide(ins, compare.DecideOptions{Objective: o.objective, Target: lo.Replay.AttainmentTarget, Guard: g, Alpha: o.alpha})
			if err != nil {
				return err
			}
			if err := report.WriteDecide(rf.w, report.Format(o.output), d); err != nil {
				return err
			}
			if err := rf.Commit(); err != nil {
				return err
			}
			if d.Guard.Verdict == compare.Refused {
				return silentExit{ExitRejected}
			}
			return nil
		},
	}
	o.bind(cmd)
	f := cmd.Flags()
	enumFlag(f, &o.objective, "objective", "", compare.Objectives, "what to optimise: "+strings.Join(compare.Objectives, "|")+" (required)")
	f.StringVar(&o.target, "attainment-target", "0.9", "SLO attainment a load point must reach to count for capacity")
	_ = cmd.MarkFlagRequired("objective")
	return cmd
}
