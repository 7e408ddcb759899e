package reproduce

import (
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/reproduce/rerun"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// sourceOf is what the original's test is taken from: SourceOf for a
// bundle; for a run directory (tests, and callers that unpacked one) its
// manifest, its workload.jsonl and the plan its verification found
// executed.
func sourceOf(orig Original) Source {
	if b, ok := orig.Bundle.(*artifact.Bundle); ok {
		return SourceOf(b, orig.Verification)
	}
	src := Source{Manifest: orig.Bundle.Manifest(), Plan: executedPlan(orig.Verification)}
	if rd, ok := orig.Bundle.(*schema.RunDir); ok && rd.WorkloadPath != "" {
		src.Workload = func() (io.ReadCloser, error) { return os.Open(rd.WorkloadPath) }
	}
	return src
}

// executedPlan is the pre-registered plan vr found the run executed
// exactly (signed by a trusted publisher, no deviation); nil otherwise.
func executedPlan(vr *verify.Result) *plan.Plan {
	if vr == nil {
		return nil
	}
	if p := vr.Plan; p != nil && p.Plan != nil && p.SignedBy != "" && len(p.Deviations) == 0 && p.Reason == "" {
		return p.Plan
	}
	return nil
}

// checkForcedLength refuses a reproduction whose test forces the output
// length but whose records fall short of it (rerun.CheckForcedLength,
// with the run's workload.jsonl, which sameWorkload found to be the
// original's items or prompts).
func checkForcedLength(rd *schema.RunDir) error {
	var wl io.Reader
	if rd.WorkloadPath != "" {
		f, err := os.Open(rd.WorkloadPath)
		if err != nil {
			return err
		}
		defer f.Close()
		wl = f
	}
	return rerun.CheckForcedLength(rd, wl)
}

// checkRanTest refuses a reproduction whose manifest states another test
// than the one BuildTest rebuilds from the original (with the
// reproduction's repeats, which may differ: Withheld says when they are
// fewer), naming the first field that differs: the load points and their
// counts or durations, warmup, seed and arrival process, timeout,
// outstanding cap, cancellations, lengths, workload, request parameters
// (API, max_tokens, temperature, stream, force-length), SLO and, when
// the original executed a pre-registered plan the reproduction's repeats
// allow, that plan.
func checkRanTest(src Source, repro *schema.RunDir) error {
	rm := repro.Manifest()
	want, err := BuildTest(src, rm.Load.Repeats)
	if err != nil {
		return fmt.Errorf("the original's test cannot be rebuilt, so no run is a run of it: %w", err)
	}
	got, missing := testOf(rm, 0)
	if len(missing) > 0 {
		return fmt.Errorf("its manifest states no test that can be rebuilt: %s", strings.Join(missing, "; "))
	}
	// A load capture would not run still names the field that differs
	// from the original's first.
	normErr := got.Plan.Normalize()
	om := src.Manifest
	for _, f := range testFields(want, got, om, rm) {
		if f.want != f.got {
			return fmt.Errorf("%s: %s in the original's test, %s in this run: not a run of the original's test", f.name, f.want, f.got)
		}
	}
	if normErr != nil {
		// %v: the original's plan failing capture's rules is not a plan
		// the user gave, which plan.ErrPlan (Normalize's condition) means
		// (capture answers it with a usage error).
		return fmt.Errorf("its load is not one capture runs: %v", normErr)
	}
	if err := sameWorkload(want, om, repro); err != nil {
		return err
	}
	if p := want.Registered; p != nil {
		d := strings.TrimPrefix(planDigest(p), "sha256:")
		if rm.Plan == nil || rm.Plan.SHA256 != d {
			have := "none"
			if rm.Plan != nil {
				have = "sha256:" + rm.Plan.SHA256
			}
			return fmt.Errorf("plan: the original executed pre-registered plan sha256:%s, this run %s (with the original's repeats a reproduction executes its plan): not a run of the original's test", d, have)
		}
	}
	return nil
}

// testField is one field of a test as the original's and the run's
// manifests give it.
type testField struct{ name, want, got string }

// testFields lists, in the order they are checked, the fields of the
// test; each value is printed as the manifest states it.
func testFields(want, got *Test, om, rm *schema.Manifest) []testField {
	w, g := want.Plan, got.Plan
	fs := []testField{
		{"load.mode", w.Mode, g.Mode},
		{"load.points", strconv.Itoa(len(w.Points)) + " point(s)", strconv.Itoa(len(g.Points)) + " point(s)"},
	}
	if len(w.Points) == len(g.Points) {
		for i := range w.Points {
			a, b := w.Points[i], g.Points[i]
			p := fmt.Sprintf("load.points[%d]", i)
			fs = append(fs,
				testField{p + ".name", strconv.Quote(a.Name), strconv.Quote(b.Name)},
				testField{p + ".concurrency", strconv.Itoa(a.Concurrency), strconv.Itoa(b.Concurrency)},
				testField{p + ".rate", digits.Shortest(a.Rate), digits.Shortest(b.Rate)},
				testField{p + ".arrival", orNone(a.Arrival), orNone(b.Arrival)},
				testField{p + ".burstiness", digits.Shortest(a.Burstiness), digits.Shortest(b.Burstiness)},
				testField{p + ".requests", strconv.Itoa(a.Requests), strconv.Itoa(b.Requests)},
				testField{p + ".duration", a.Duration.String(), b.Duration.String()},
				testField{p + ".input_tokens", strconv.Itoa(a.InputTokens), strconv.Itoa(b.InputTokens)},
				testField{p + ".output_tokens", strconv.Itoa(a.OutputTokens), strconv.Itoa(b.OutputTokens)})
		}
	}
	fs = append(fs,
		testField{"load.warmup.requests", strconv.Itoa(w.Warmup.Requests), strconv.Itoa(g.Warmup.Requests)},
		testField{"load.warmup.duration", w.Warmup.Duration.String(), g.Warmup.Duration.String()},
		testField{"client.seed", seedText(om), seedText(rm)},
		testField{"load.request_timeout", w.RequestTimeout.String(), g.RequestTimeout.String()},
		testField{"load.max_outstanding", strconv.Itoa(w.MaxOutstanding), strconv.Itoa(g.MaxOutstanding)},
		testField{"notes.cancellation", cancelText(w.Cancel), cancelText(g.Cancel)},
		testField{"notes.distinct_prompts", strconv.FormatBool(w.DistinctPrompts), strconv.FormatBool(g.DistinctPrompts)},
		testField{"workload.input_tokens.spec", specText(w.InputLengths), specText(g.InputLengths)},
		testField{"workload.output_tokens.spec", specText(w.OutputLengths), specText(g.OutputLengths)},
		testField{"workload.dataset", orNone(om.Workload.Dataset), orNone(rm.Workload.Dataset)},
		testField{"decoding.endpoint", orNone(want.Request.API), orNone(got.Request.API)},
		testField{"decoding.max_tokens", strconv.Itoa(om.Decoding.MaxTokens), strconv.Itoa(rm.Decoding.MaxTokens)},
		testField{"decoding.temperature", floatPtr(want.Request.Temperature), floatPtr(got.Request.Temperature)},
		testField{"decoding.seed", intPtr(want.Request.Seed), intPtr(got.Request.Seed)},
		testField{"decoding.streaming", strconv.FormatBool(want.Request.Stream), strconv.FormatBool(got.Request.Stream)},
		testField{"decoding.ignore_eos/min_tokens (force-length)", strconv.FormatBool(want.Request.ForceLength), strconv.FormatBool(got.Request.ForceLength)},
		testField{"notes.per_chunk_usage", strconv.FormatBool(want.Request.PerChunkUsage), strconv.FormatBool(got.Request.PerChunkUsage)},
		testField{"slo", sloText(want.SLO), sloText(rm.SLO)},
	)
	return fs
}

// sameWorkload checks that the reproduction sent the original's prompts:
// for a synthetic workload, the prompts capture regenerated from the
// seed have the original's workload.sha256 (unless every point × repeat
// draws prompts of its own and the repeats differ, which draws more or
// fewer); for the original's items, the reproduction's workload.jsonl
// holds the same items.
func sameWorkload(want *Test, om *schema.Manifest, repro *schema.RunDir) error {
	rm := repro.Manifest()
	if om.Workload.SHA256 == rm.Workload.SHA256 {
		return nil
	}
	if want.Prompts == nil {
		if want.Plan.DistinctPrompts && rm.Load.Repeats != om.Load.Repeats {
			return nil
		}
		return fmt.Errorf("workload.sha256: the original's synthetic prompts are sha256 %s, this run's %s: not a run of the original's test", orNone(om.Workload.SHA256), orNone(rm.Workload.SHA256))
	}
	if repro.WorkloadPath == "" {
		return fmt.Errorf("workload.jsonl: the original's test sends its %d workload items, and this run ships none: not a run of the original's test", len(want.Prompts))
	}
	f, err := os.Open(repro.WorkloadPath)
	if err != nil {
		return err
	}
	defer f.Close()
	items, err := capture.ReadPrompts(f, repro.WorkloadPath, 0)
	if err != nil {
		return err
	}
	if len(items) != len(want.Prompts) {
		return fmt.Errorf("workload.jsonl: %d items in the original's test, %d in this run: not a run of the original's test", len(want.Prompts), len(items))
	}
	for i := range items {
		if !reflect.DeepEqual(items[i], want.Prompts[i]) {
			return fmt.Errorf("workload.jsonl: item %d differs from the original's: not a run of the original's test", i)
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return strconv.Quote(s)
}

func seedText(m *schema.Manifest) string {
	if m.Client.Seed == nil {
		return "none (seed 0)"
	}
	return strconv.FormatInt(*m.Client.Seed, 10)
}

func floatPtr(f *float64) string {
	if f == nil {
		return "not stated"
	}
	return digits.Shortest(*f)
}

func intPtr(v *int64) string {
	if v == nil {
		return "not stated"
	}
	return strconv.FormatInt(*v, 10)
}

func cancelText(c *capture.Cancel) string {
	if c == nil {
		return "none"
	}
	return digits.Shortest(c.Fraction) + " after " + c.After.String()
}

func specText(s *capture.LengthSpec) string {
	if s == nil {
		return "fixed"
	}
	return s.String()
}

func sloText(s schema.SLO) string {
	return fmt.Sprintf("ttft %s, e2e %s, tpot %s, one_token %s", s.TTFT, s.E2E, s.TPOT, orNone(s.OneToken))
}
