package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/reproduce"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

type reproduceOptions struct {
	io            *IO
	deps          *Deps
	bundle        string
	trust         trustFlags
	allowUnsigned bool
	endpoint      string
	model         string
	out           string
	margin        string
	alpha         float64
	repeats       int
	output        string
	report        reportOut
	apiKeyEnv     string
	location      string
	progress      string
	noPreflight   bool
	maxErrorRate  float64
}

func newReproduceCmd(io *IO, d *Deps) *cobra.Command {
	o := &reproduceOptions{io: io, deps: d}
	cmd := &cobra.Command{
		Use:   "reproduce BUNDLE (--key PUB | --certificate-identity ID --certificate-oidc-issuer URL --trusted-root FILE) --endpoint URL --model NAME --out DIR [--margin 10%] [--repeats N]",
		Short: "Re-run a verified bundle's test against your endpoint and decide, per claim, whether it is reproduced",
		Long: `reproduce verifies BUNDLE exactly as verify does (same trust flags; a rejected
bundle is refused, exit 3), takes its test from it and runs it again against
--endpoint as capture would, into the run directory --out: the same load points
(concurrency or rate, arrival process, seed), counts or durations, warmup,
repeats (--repeats: fewer than the original's is allowed and said), workload
items (the bundle's workload.jsonl; benchseal's seeded synthetic prompts are
regenerated from the seed), request parameters (API, max_tokens, temperature,
stream, force-length) and SLO; the pre-registered plan when the bundle carries
one it executed. The run is a normal one, packable and verifiable by itself;
its manifest names the original bundle's run-manifest digest
(reproduces.run_manifest). A test that cannot be rebuilt (a bundle that ships
only its workload's hash, an imported run whose load is unknown, a trace
replay, multi-turn sessions) is refused, saying what is missing.

Then every claimed metric at every point is decided with an equivalence test,
not a difference test: both bundles are replayed under the claims' definitions
and SLO, and the per-repeat values of the original and of the reproduction give
the Hodges–Lehmann ratio reproduction/original with its distribution-free
interval at 1 − 2·alpha confidence. REPRODUCED: the interval lies inside
[1/(1 + margin), 1 + margin]; NOT REPRODUCED: it lies wholly outside; INCONCLUSIVE otherwise, with
the reproduction repeats estimated to decide with the original's repeats as
they are (or that only more original repeats can decide). Counts and flags (counts.*,
overload.*) are compared exactly. One repeat a side gives no interval:
INCONCLUSIVE. The overall verdict is REPRODUCED only when every claim is, and
then not (INCONCLUSIVE, the reason said) when the claims are only counts and
flags (any server that answers reproduces them), when the reproduction served
another model or model revision, when one side is synthetic (the simulator) and
the other measured, or when it ran fewer repeats than the original: attest
grants BENCHSEAL_REPRODUCED by the same rule. A run directory that is not a
run of the original's test (another load, seed, workload, request parameters,
SLO or plan), or that is the original's own run, is refused.

The table (claim, point, original, reproduced, ratio with interval, verdict)
is followed by the comparability limits: what differs between the original and
the reproduction (hardware, engine, client location, model revision, …: the
comparability guard of compare), stated, never hidden. --output json is
described by 'benchseal schema reproduce'; docs/compare.md "Reproduction"
says what a verdict proves and what it does not.

Exit codes: 0 REPRODUCED; 3 NOT REPRODUCED, or the bundle was rejected;
4 INCONCLUSIVE; 1 error (also a test that cannot be rebuilt); 2 usage.`,
		Example: `  benchseal reproduce pub.oci.tar --key publisher.pub --endpoint http://127.0.0.1:8000 --model M --out repro
  benchseal reproduce pub.oci.tar --key publisher.pub --endpoint http://127.0.0.1:8000 --model M --out repro --margin 5% --repeats 5 --output html --report repro.html`,
		Args: exactArgs(1, "one bundle"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.bundle = args[0]
			return runReproduce(cmd, o)
		},
	}
	f := cmd.Flags()
	o.trust.bind(f, "key", "pinned public key PEM of the publisher (repeatable; every key must have signed)")
	f.BoolVar(&o.allowUnsigned, "allow-unsigned", false, "UNSAFE: check the bundle's integrity only; nothing is authenticated")
	f.StringVar(&o.endpoint, "endpoint", "", "server base URL to reproduce against, e.g. http://127.0.0.1:8000 (required)")
	f.StringVar(&o.model, "model", "", "model name sent in every request (required)")
	f.StringVar(&o.out, "out", "", "run directory of the reproduction (must not exist or be empty; required)")
	f.StringVar(&o.margin, "margin", "10%", "equivalence margin: the ratio's interval must lie within [1/(1+margin), 1+margin] (10% or 0.1)")
	f.Float64Var(&o.alpha, "alpha", reproduce.DefaultAlpha, "level of each one-sided half of the equivalence test (interval at 1 − 2·alpha)")
	f.IntVar(&o.repeats, "repeats", 0, "repeats of the reproduction (default: the original's; fewer is allowed and said)")
	enumFlag(f, &o.output, "output", "text", []string{"text", "json", "markdown", "html"}, "report format: text|json|markdown|html")
	f.StringVar(&o.report.path, "report", "", "write the report to FILE instead of standard output, atomically (a verdict, whatever its exit code, replaces FILE; a command that stops without one leaves FILE as it was)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the API key (sent as Bearer, never recorded)")
	f.StringVar(&o.location, "location", "", "client location relative to the server: same-host, same-rack, same-region, cross-region ...")
	enumFlag(f, &o.progress, "progress", "auto", []string{"auto", "always", "never"}, "capture progress on stderr: auto (when a terminal), always or never")
	f.BoolVar(&o.noPreflight, "no-preflight", false, "skip capture's checks before the run (the model is listed; one probe request succeeds)")
	f.Float64Var(&o.maxErrorRate, "max-error-rate", 0.5, "stop the reproduction when more than this fraction of a phase's requests failed, after 20 (0: never)")
	for _, n := range []string{"endpoint", "model", "out"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// parseMargin reads --margin: "10%" or a fraction "0.1".
func parseMargin(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil {
		return 0, usagef("--margin %q: want a percentage (10%%) or a fraction (0.1)", s)
	}
	if pct {
		v /= 100
	}
	if !(v > 0 && v < 1) {
		return 0, usagef("--margin %q: want more than 0%% and less than 100%%", s)
	}
	return v, nil
}

// reproduceVerifier checks the trust flags as verify does and builds the
// verifier.
func (o *reproduceOptions) verifier() (*verify.Verifier, error) {
	trusted := len(o.trust.keys) > 0 || o.trust.identityGiven()
	if !trusted && !o.allowUnsigned {
		return nil, usagef("reproduce needs at least one --key or a --certificate-identity (or --allow-unsigned to check integrity only)")
	}
	if trusted && o.allowUnsigned {
		return nil, usagef("--key and --allow-unsigned cannot be used together")
	}
	keys, opts, err := o.trust.build()
	if err != nil {
		return nil, err
	}
	return verify.NewVerifier(keys, append(opts, o.deps.verifyOptions()...)...)
}

func runReproduce(cmd *cobra.Command, o *reproduceOptions) error {
	ctx := cmd.Context()
	if err := checkBundleArg(o.bundle); err != nil {
		return err
	}
	margin, err := parseMargin(o.margin)
	if err != nil {
		return err
	}
	if !(o.alpha > 0 && o.alpha < 0.5) {
		return usagef("--alpha %s: want 0 < alpha < 0.5", digits.Shortest(o.alpha))
	}
	if o.repeats < 0 || (o.repeats == 0 && cmd.Flags().Changed("repeats")) {
		// 0 is only the flag's unset value (the original's repeats);
		// given, it would silently mean that.
		return usagef("--repeats %d: want at least 1 (default: the original's)", o.repeats)
	}
	if capture.CheckEndpoint(o.endpoint) != nil {
		return usagef("--endpoint %q: want an http:// or https:// URL, e.g. http://127.0.0.1:8000", o.endpoint)
	}
	if err := refuseInputAsOut("--out", o.out, append([]string{o.bundle, o.report.path}, o.trust.files()...)); err != nil {
		return err
	}
	v, err := o.verifier()
	if err != nil {
		return err
	}
	rf, err := o.report.open(o.io, append([]string{o.bundle}, o.trust.files()...)...)
	if err != nil {
		return err
	}
	defer rf.Discard()
	b, vr, err := o.verifyBundle(ctx, v)
	if err != nil {
		return err
	}
	defer b.Close()
	test, err := reproduce.BuildTest(reproduce.SourceOf(b, vr), o.repeats)
	if err != nil {
		return fmt.Errorf("reproduce %s: %w", o.bundle, err)
	}
	dir, err := o.capture(cmd, test, vr.ManifestDigest)
	if err != nil {
		return err
	}
	rep, err := reproduce.Evaluate(ctx, reproduce.Original{Name: o.bundle, Bundle: b, Verification: vr}, dir,
		reproduce.Options{Margin: margin, Alpha: o.alpha, Notes: test.Notes})
	if err != nil {
		return err
	}
	if err := report.WriteReproduce(rf.w, report.Format(o.output), rep); err != nil {
		return err
	}
	if err := rf.Commit(); err != nil {
		return err
	}
	switch rep.Overall {
	case reproduce.Reproduced:
		return nil
	case reproduce.NotReproduced:
		return silentExit{ExitRejected}
	}
	return silentExit{ExitInconclusive}
}

// verifyBundle opens and verifies the bundle; a rejected one is refused
// (exit 3) with verify's reason.
func (o *reproduceOptions) verifyBundle(ctx context.Context, v *verify.Verifier) (*artifact.Bundle, *verify.Result, error) {
	if o.allowUnsigned {
		fmt.Fprintln(o.io.ErrOut, "benchseal: WARNING: --allow-unsigned: signatures are NOT checked; NOTHING IS AUTHENTICATED")
	}
	b, err := artifact.Open(o.bundle)
	if err != nil {
		if errors.Is(err, artifact.ErrInvalid) {
			return nil, nil, rejected(fmt.Errorf("%s: %w", o.bundle, err))
		}
		return nil, nil, err
	}
	vr, err := v.VerifyBundle(ctx, b, verify.Policy{AllowUnsignedUnsafe: o.allowUnsigned})
	if err != nil || vr == nil || !vr.Verified {
		b.Close()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		// %v: the outcome is rejected (exit 3); the verify error's own
		// condition must not reach the exit-code mapping.
		return nil, nil, rejected(fmt.Errorf("%s did not verify, so nothing is reproduced (benchseal verify lists every check): %v", o.bundle, err))
	}
	return b, vr, nil
}

// capture runs the test against the endpoint into --out, as capture
// would, and returns the run directory once it is complete and valid.
func (o *reproduceOptions) capture(cmd *cobra.Command, t *reproduce.Test, digest string) (string, error) {
	ctx := cmd.Context()
	var apiKey string
	if o.apiKeyEnv != "" {
		if apiKey = o.io.Getenv(o.apiKeyEnv); apiKey == "" {
			return "", usagef("--api-key-env %s: the variable is empty or unset", o.apiKeyEnv)
		}
	}
	m := &schema.Manifest{Evidence: schema.EvidenceIndependent}
	m.Client.Version = Version
	m.Client.Build = currentBuild(o.io)
	m.Client.Location = o.location
	m.Client.CommandLine = redactArgs(o.io.ErrOut, commandLine(cmd), apiKey)
	opts := capture.Options{Endpoint: o.endpoint, APIKey: apiKey, Request: capture.RequestOptions{Model: o.model},
		OutDir: o.out, Manifest: m, ServerMetrics: capture.ServerMetricsAuto, ServerMetricsInterval: capture.DefaultServerMetricsInterval,
		Probe: true, Grace: 10 * time.Second, SkipPreflight: o.noPreflight, MaxErrorRate: o.maxErrorRate,
		OnFailure: failurePrinter(o.io.ErrOut, maxFailuresShown), HostFS: os.DirFS("/")}
	t.Apply(&opts, digest, o.bundle)
	var live *liveProgress
	switch {
	case o.progress == "always" || (o.progress == "auto" && isTerminal(o.io.ErrOut)):
		live = &liveProgress{w: o.io.ErrOut}
		opts.Progress = live.render
	case o.progress == "auto":
		opts.Progress = func(p capture.Progress) { fmt.Fprintln(o.io.ErrOut, report.ProgressLine(p)) }
		opts.ProgressInterval = progressLineInterval
	}
	res, err := capture.Run(ctx, opts)
	if live != nil {
		live.end()
	}
	if err != nil {
		if res != nil {
			return "", fmt.Errorf("%w; %s is kept, marked incomplete, and nothing was decided", err, res.Dir)
		}
		return "", err
	}
	if res.Stopped || res.Manifest.Incomplete {
		return "", fmt.Errorf("the reproduction stopped before its test finished; %s is kept, marked incomplete, and nothing was decided", res.Dir)
	}
	if err := artifact.CheckCapturedRun(ctx, res.Dir, 20); err != nil {
		return "", err
	}
	line := report.PlanLine(res.Manifest)
	if t.UnexecutedPlan != nil {
		// The original was pre-registered; the reproduction's repeats
		// are not its plan's, so it runs the test without the plan.
		line = fmt.Sprintf("the original's pre-registered plan is not executed: the reproduction runs %d repeats, the plan %d", t.Plan.Repeats, t.UnexecutedPlan.Load.Repeats)
	}
	fmt.Fprintf(o.io.ErrOut, "reproduction captured into %s (%s)\n", res.Dir, line)
	return res.Dir, nil
}
