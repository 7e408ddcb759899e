package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

func newPlanCmd(io *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan init|validate|sign|show",
		Short: "Write, check, sign and show a pre-registered test plan",
		Long: `A pre-registered plan fixes, before any request is sent, what a benchmark
will do and claim: the workload (synthetic lengths per point, or a dataset by
its sha256), the load points (concurrency or rate, arrival, requests), warmup,
repeats, seed, timeout, the SLO, the definitions, the boundary and the metrics
to be claimed (JSON Schema: 'benchseal schema plan'). Its digest is the sha256
of its canonical JSON. 'plan sign' signs it (a Sigstore bundle over the plan
digest, PLAN.sigstore.json) so it can be published before the run;
'capture --plan' executes exactly the plan and records its digest in the run's
manifest; 'verify --plan' names every deviation.`,
	}
	cmd.AddCommand(newPlanInitCmd(io), newPlanValidateCmd(io), newPlanSignCmd(io), newPlanShowCmd(io))
	return cmd
}

type planInitOptions struct {
	out, title, concurrency, rate, preset, slo, definitions, metrics, workloadSHA string
	requests, warmup, repeats, inputTokens, outputTokens, workloadItems           int
	seed                                                                          int64
	timeout                                                                       time.Duration
	configurations                                                                []string
}

// defaultPlanMetrics are the families plan init plans by default: the
// counts, the window and the rates, goodput and attainment under the
// plan's SLO, and the four latency distributions.
var defaultPlanMetrics = []string{"counts", schema.MetricWindow, schema.MetricRequestThroughput, schema.MetricOutputTokenThroughput,
	schema.MetricTotalTokenThroughput, schema.MetricGoodput, schema.MetricTokenGoodput, schema.MetricSLOAttainment,
	schema.MetricTTFT, schema.MetricE2E, schema.MetricTPOT, schema.MetricITL}

// sloPlaceholders is --slo's syntax with every limit a placeholder
// ("ttft=..,e2e=..,tpot=..").
var sloPlaceholders = replay.SLOPairs(map[string]string{schema.SLOTTFT: "..", schema.SLOE2E: "..", schema.SLOTPOT: ".."})

// planSLOText writes a plan's SLO as plan show prints it: every limit as
// key=duration in table order, then the one-token policy.
func planSLOText(s schema.SLO) string {
	var b strings.Builder
	for _, k := range schema.SLOKeys {
		fmt.Fprintf(&b, "%s=%s ", k, s.Limit(k))
	}
	fmt.Fprintf(&b, "%s=%s", schema.SLOOneToken, s.OneToken)
	return b.String()
}

func newPlanInitCmd(io *IO) *cobra.Command {
	o := &planInitOptions{}
	cmd := &cobra.Command{
		Use:   "init --out PLAN.json (--concurrency N,... | --rate R,... | --preset protocol) --slo " + sloPlaceholders,
		Short: "Write a new plan (canonical JSON)",
		Example: `  benchseal plan init --out plan.json --concurrency 1,4,16 --requests 200 --repeats 3 \
      --slo ` + replay.SLOPairs(map[string]string{schema.SLOTTFT: "300ms", schema.SLOE2E: "4s", schema.SLOTPOT: "50ms"}) + ` --metrics ` + schema.MetricGoodput + "," + schema.MetricPath(schema.MetricTTFT, "p99"),
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, args []string) error { return runPlanInit(io, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "plan file to write (must not exist; required)")
	f.StringVar(&o.title, "title", "", "title")
	f.StringVar(&o.concurrency, "concurrency", "", "closed-loop points: comma-separated concurrencies")
	f.StringVar(&o.rate, "rate", "", "open-loop points: comma-separated rates (requests/s, poisson arrivals)")
	f.StringVar(&o.preset, "preset", "", "protocol: short/long prompts × short/long outputs × the loads given (or 1,4,16,64)")
	f.IntVar(&o.requests, "requests", 100, "measured requests per point")
	f.IntVar(&o.warmup, "warmup-requests", 10, "warmup requests before each point × repeat")
	f.IntVar(&o.repeats, "repeats", 3, "repeats of the whole sweep")
	f.Int64Var(&o.seed, "seed", 1, "seed of request order, arrivals and synthetic prompts")
	f.DurationVar(&o.timeout, "timeout", 0, "per-request timeout (0: none)")
	f.IntVar(&o.inputTokens, "input-tokens", 128, "synthetic prompt length of points without a preset")
	f.IntVar(&o.outputTokens, "output-tokens", 128, "output length of points without a preset")
	f.StringVar(&o.slo, "slo", "", "the SLO: "+sloPlaceholders+","+schema.SLOOneToken+"="+schema.OneTokenPass+"|"+schema.OneTokenFail+" (required)")
	f.StringVar(&o.definitions, "definitions", "benchseal", "metric definitions the claims will follow")
	f.StringVar(&o.metrics, "metrics", strings.Join(defaultPlanMetrics, ","), "metric paths (or families: "+schema.MetricTTFT+" covers "+schema.MetricPath(schema.MetricTTFT, "p99")+" and its summary) that will be claimed, comma-separated")
	f.StringVar(&o.workloadSHA, "workload-sha256", "", "a dataset workload: the sha256 its workload.jsonl must have")
	f.IntVar(&o.workloadItems, "workload-items", 0, "a dataset workload: its number of items")
	f.StringArrayVar(&o.configurations, "configuration", nil, "a configuration to be compared under this plan (repeatable)")
	cmd.MarkFlagRequired("out")
	cmd.MarkFlagRequired("slo")
	cmd.MarkFlagsMutuallyExclusive("concurrency", "rate")
	return cmd
}

func runPlanInit(io *IO, o *planInitOptions) error {
	if _, err := os.Lstat(o.out); err == nil {
		return fmt.Errorf("%s already exists (refusing to overwrite)", o.out)
	}
	spec, err := replay.ParseSLO(o.slo)
	if err != nil {
		return usagef("--slo: %v", err)
	}
	slo := schema.SLO{OneToken: spec.OneToken}
	if spec.TTFTNS != nil {
		slo.TTFT = schema.Duration(*spec.TTFTNS)
	}
	if spec.E2ENS != nil {
		slo.E2E = schema.Duration(*spec.E2ENS)
	}
	if spec.TPOTNS != nil {
		slo.TPOT = schema.Duration(*spec.TPOTNS)
	}
	p := &plan.Plan{
		Schema: plan.SchemaV1, Title: o.title,
		Workload:    plan.Workload{Kind: "synthetic"},
		Load:        plan.Load{Mode: schema.ModeConcurrency, Warmup: schema.Warmup{Requests: o.warmup}, Repeats: o.repeats, Seed: o.seed, RequestTimeout: schema.Duration(o.timeout)},
		SLO:         slo,
		Definitions: o.definitions,
		Boundary:    schema.BoundaryClientStreaming,
		Metrics:     []string{},
	}
	if o.workloadSHA != "" {
		p.Workload = plan.Workload{Kind: "dataset", SHA256: o.workloadSHA, Items: o.workloadItems}
	}
	for _, m := range strings.Split(o.metrics, ",") {
		if m = strings.TrimSpace(m); m != "" {
			p.Metrics = append(p.Metrics, m)
		}
	}
	for _, c := range o.configurations {
		p.Configurations = append(p.Configurations, plan.Configuration{Name: c})
	}
	var loads []float64
	switch {
	case o.rate != "":
		p.Load.Mode = schema.ModeRate
		if loads, err = parseList(o.rate, "rate", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }); err != nil {
			return err
		}
	case o.concurrency != "":
		cs, err := parseList(o.concurrency, "concurrency", strconv.Atoi)
		if err != nil {
			return err
		}
		for _, c := range cs {
			loads = append(loads, float64(c))
		}
	}
	switch {
	case o.preset == "protocol":
		p.Load.Points = capture.ProtocolPoints(p.Load.Mode, loads, o.requests)
	case o.preset != "":
		return usagef("--preset %q: the only preset is protocol", o.preset)
	case len(loads) == 0:
		return usagef("give --concurrency, --rate or --preset protocol")
	default:
		for _, l := range loads {
			pt := schema.Point{Requests: o.requests, InputTokens: o.inputTokens, OutputTokens: o.outputTokens}
			if p.Load.Mode == schema.ModeRate {
				pt.Name, pt.Rate, pt.Arrival = fmt.Sprintf("rate-%s", digits.Shortest(l)), l, schema.ArrivalPoisson
			} else {
				pt.Name, pt.Concurrency = fmt.Sprintf("c%d", int(l)), int(l)
			}
			p.Load.Points = append(p.Load.Points, pt)
		}
	}
	if err := p.Validate(); err != nil {
		return usagef("%v", err)
	}
	if _, err := capture.FromPlan(p); err != nil {
		return usagef("%v", err)
	}
	b, err := p.Indent()
	if err != nil {
		return err
	}
	if err := writeAtomic(o.out, b); err != nil {
		return err
	}
	d, _ := p.Digest()
	fmt.Fprintf(io.Out, "wrote %s\n  plan       %s\n  points     %d × %d repeat(s)\n", o.out, d, len(p.Load.Points), p.Load.Repeats)
	return nil
}

// loadPlan decodes a plan file and checks that capture can execute it.
func loadPlan(path string) (*plan.Plan, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	p, err := plan.Decode(f, path)
	if err != nil {
		return nil, "", rejected(err)
	}
	if _, err := capture.FromPlan(p); err != nil {
		return nil, "", rejected(fmt.Errorf("%s: %w", path, err))
	}
	d, err := p.Digest()
	return p, d, err
}

func newPlanValidateCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "validate PLAN",
		Short: "Check a plan (exit 3 when invalid) and print its digest",
		Args:  exactArgs(1, "one plan file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, d, err := loadPlan(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(io.Out, "%s: valid plan %s\n", args[0], d)
			return nil
		},
	}
}

func newPlanSignCmd(io *IO) *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "sign PLAN --key KEY",
		Short: "Sign a plan: a Sigstore bundle over its digest, written to PLAN.sigstore.json",
		Long: `sign signs the plan's in-toto statement (subject: plan.json with the plan's
canonical sha256; predicate type https://benchseal.dev/attestation/plan/v1;
predicate: the plan) with KEY and writes the Sigstore bundle to
PLAN.sigstore.json. An offline keyed signature proves who fixed the plan, not
when: only a keyless signature with a transparency-log or TSA timestamp
proves the plan existed before the run started.`,
		Args: exactArgs(1, "one plan file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlanSign(cmd.Context(), io, args[0], key)
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "private key (required)")
	cmd.MarkFlagRequired("key")
	return cmd
}

func runPlanSign(ctx context.Context, io *IO, path, key string) error {
	p, d, err := loadPlan(path)
	if err != nil {
		return err
	}
	s, err := loadSigner(io, key)
	if err != nil {
		return err
	}
	st, err := p.Statement()
	if err != nil {
		return err
	}
	sb, err := artifact.SignStatement(ctx, st, s)
	if err != nil {
		return err
	}
	out := artifact.DetachedPath(path)
	if err := writeAtomic(out, sb); err != nil {
		return err
	}
	fmt.Fprintf(io.Out, "signed %s\n  plan       %s\n  key        %s\n  signature  %s\n", path, d, s.Public().Fingerprint(), out)
	return nil
}

func newPlanShowCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "show PLAN",
		Short: "Print a plan's digest and contents",
		Args:  exactArgs(1, "one plan file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, d, err := loadPlan(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(io.Out, "plan       %s\n", d)
			if p.Title != "" {
				fmt.Fprintf(io.Out, "title      %s\n", p.Title)
			}
			sig := "none (" + artifact.DetachedPath(args[0]) + " not found)"
			if _, err := os.Stat(artifact.DetachedPath(args[0])); err == nil {
				sig = artifact.DetachedPath(args[0]) + " (not verified here: verify --plan checks it)"
			}
			fmt.Fprintf(io.Out, "signature  %s\n", sig)
			fmt.Fprintf(io.Out, "load       %s, %d point(s) × %d repeat(s), warmup %d, seed %d\n", p.Load.Mode, len(p.Load.Points), p.Load.Repeats, p.Load.Warmup.Requests, p.Load.Seed)
			fmt.Fprintf(io.Out, "slo        %s\n", planSLOText(p.SLO))
			fmt.Fprintf(io.Out, "claims     %s definitions, boundary %s: %s\n\n", p.Definitions, p.Boundary, strings.Join(p.Metrics, ", "))
			b, err := p.Indent()
			if err != nil {
				return err
			}
			_, err = io.Out.Write(b)
			return err
		},
	}
}
