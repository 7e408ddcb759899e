package capture_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

func ptr[T any](v T) *T { return &v }

// diff returns "" when want and got are deeply equal, else both.
func diff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return fmt.Sprintf("want %+v\n got %+v", want, got)
}

// TestLoadSpecPlan checks how capture's load flags become a plan.
func TestLoadSpecPlan(t *testing.T) {
	cases := []struct {
		name string
		spec capture.LoadSpec
		want capture.Plan
	}{
		{"closed loop list", capture.LoadSpec{Concurrency: []int{1, 4}, Requests: 10, Seed: 3},
			capture.Plan{Mode: schema.ModeConcurrency, Repeats: 1, Seed: 3, InputTokens: 128, OutputTokens: 128, Points: []schema.Point{
				{Name: "c1", Concurrency: 1, Requests: 10, InputTokens: 128, OutputTokens: 128},
				{Name: "c4", Concurrency: 4, Requests: 10, InputTokens: 128, OutputTokens: 128}}}},
		{"rate defaults to poisson", capture.LoadSpec{Rate: []float64{2.5}, Duration: time.Second, InputTokens: ptr(7)},
			capture.Plan{Mode: schema.ModeRate, Repeats: 1, InputTokens: 7, OutputTokens: 128, Points: []schema.Point{
				{Name: "rate-2.5", Rate: 2.5, Arrival: schema.ArrivalPoisson, Duration: schema.Duration(time.Second), InputTokens: 7, OutputTokens: 128}}}},
		{"burstiness alone means gamma", capture.LoadSpec{Rate: []float64{2}, Requests: 5, Burstiness: ptr(0.5)},
			capture.Plan{Mode: schema.ModeRate, Repeats: 1, InputTokens: 128, OutputTokens: 128, Points: []schema.Point{
				{Name: "rate-2", Rate: 2, Arrival: schema.ArrivalGamma, Burstiness: 0.5, Requests: 5, InputTokens: 128, OutputTokens: 128}}}},
		{"burstiness beside a stated non-gamma arrival is not used", capture.LoadSpec{Rate: []float64{2}, Requests: 5, Arrival: schema.ArrivalConstant, Burstiness: ptr(0.5)},
			capture.Plan{Mode: schema.ModeRate, Repeats: 1, InputTokens: 128, OutputTokens: 128, Points: []schema.Point{
				{Name: "rate-2", Rate: 2, Arrival: schema.ArrivalConstant, Requests: 5, InputTokens: 128, OutputTokens: 128}}}},
		{"warmup, repeats, timeout, cap and cancellation", capture.LoadSpec{Rate: []float64{1}, Requests: 4, Warmup: schema.Warmup{Requests: 2},
			Repeats: 3, Timeout: time.Minute, MaxOutstanding: 9, CancelFraction: 0.25, CancelAfter: time.Second},
			capture.Plan{Mode: schema.ModeRate, Repeats: 3, Warmup: schema.Warmup{Requests: 2}, RequestTimeout: schema.Duration(time.Minute), MaxOutstanding: 9,
				Cancel: &capture.Cancel{Fraction: 0.25, After: schema.Duration(time.Second)}, InputTokens: 128, OutputTokens: 128, Points: []schema.Point{
					{Name: "rate-1", Rate: 1, Arrival: schema.ArrivalPoisson, Requests: 4, InputTokens: 128, OutputTokens: 128}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.spec.Plan()
			if err != nil {
				t.Fatal(err)
			}
			if d := diff(&c.want, got); d != "" {
				t.Errorf("plan :\n%s", d)
			}
		})
	}
}

// TestLoadSpecPresetProtocol: the preset's matrix over the given loads,
// with the shared duration and arrival.
func TestLoadSpecPresetProtocol(t *testing.T) {
	got, err := capture.LoadSpec{Preset: capture.PresetProtocol, Rate: []float64{3}, Duration: time.Minute, Arrival: schema.ArrivalConstant}.Plan()
	if err != nil {
		t.Fatal(err)
	}
	want := capture.ProtocolPoints(schema.ModeRate, []float64{3}, 0)
	for i := range want {
		want[i].Duration = schema.Duration(time.Minute)
		want[i].Arrival = schema.ArrivalConstant
	}
	if d := diff(want, got.Points); d != "" {
		t.Errorf("points :\n%s", d)
	}
}

// TestLoadSpecMistakesArePlanErrors: each mistake is refused as ErrPlan,
// with the words the command line shows.
func TestLoadSpecMistakesArePlanErrors(t *testing.T) {
	cases := []struct {
		name, want string
		spec       capture.LoadSpec
	}{
		{"no load", "give --concurrency, --rate, --preset protocol or --plan", capture.LoadSpec{Requests: 1}},
		{"no count", "give --requests or --duration", capture.LoadSpec{Concurrency: []int{1}}},
		{"preset with lengths", "--preset protocol sets the prompt and output lengths; drop --input-tokens/--output-tokens",
			capture.LoadSpec{Preset: capture.PresetProtocol, OutputTokens: ptr(128)}},
		{"unknown preset", `--preset "quick": the only preset is protocol`, capture.LoadSpec{Preset: "quick"}},
		{"a load capture refuses", "invalid plan: points[0] c200000: concurrency 200000 out of range 1..100000", capture.LoadSpec{Concurrency: []int{200000}, Requests: 1}},
		{"a negative rate, in the flag's words", "--rate -5: want a rate above 0 and at most 1000000 requests per second", capture.LoadSpec{Rate: []float64{-5}, Requests: 1}},
		{"no concurrency", "--concurrency 0: want at least 1 request in flight", capture.LoadSpec{Concurrency: []int{0}, Requests: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.spec.Plan()
			if !errors.Is(err, plan.ErrPlan) || err.Error() != c.want {
				t.Fatalf("error %v, want ErrPlan %q", err, c.want)
			}
		})
	}
}

// TestRunLeavesTheCallersPlanAlone: Run normalizes a copy of the plan's
// points (names, defaults), on failure as on success.
func TestRunLeavesTheCallersPlanAlone(t *testing.T) {
	for _, outDir := range []string{"", "run"} {
		pts := []schema.Point{{Concurrency: 1, Requests: 1}}
		keep := slices.Clone(pts)
		o := capture.Options{
			Endpoint: "http://127.0.0.1:1",
			Request:  capture.RequestOptions{Model: "m", Stream: true},
			Plan:     capture.Plan{Mode: schema.ModeConcurrency, Points: pts, InputTokens: 4, OutputTokens: 4},
		}
		if outDir != "" {
			o.OutDir = filepath.Join(t.TempDir(), outDir)
		}
		if _, err := capture.Run(context.Background(), o); err == nil {
			t.Fatalf("out dir %q: Run succeeded against a closed port", outDir)
		}
		if d := diff(keep, pts); d != "" {
			t.Errorf("out dir %q: the caller's points changed :\n%s", outDir, d)
		}
	}
}

// TestRunOptionErrors: options without what every capture needs are
// ErrOptions, refused before anything is sent or written.
func TestRunOptionErrors(t *testing.T) {
	good := func() capture.Options {
		return capture.Options{
			Endpoint: "http://127.0.0.1:1",
			OutDir:   filepath.Join(t.TempDir(), "run"),
			Request:  capture.RequestOptions{Model: "m", Stream: true},
			Plan:     capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 1, Requests: 1}}},
		}
	}
	cases := map[string]func(*capture.Options){
		"no output directory": func(o *capture.Options) { o.OutDir = "" },
		"no model":            func(o *capture.Options) { o.Request.Model = "" },
		"endpoint":            func(o *capture.Options) { o.Endpoint = "localhost:8000" },
	}
	for name, mod := range cases {
		o := good()
		mod(&o)
		if _, err := capture.Run(context.Background(), o); !errors.Is(err, capture.ErrOptions) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestCheckEndpoint: one rule for the endpoint, shared by Run and the
// capture command's --endpoint check.
func TestCheckEndpoint(t *testing.T) {
	for _, c := range []struct {
		endpoint string
		ok       bool
	}{
		{"http://127.0.0.1:8000", true},
		{"https://inference.example/v1", true},
		{"http://[::1]:8000/", true},
		{"localhost:8000", false},
		{"127.0.0.1:8000", false},
		{"http://", false},
		{"ftp://host/v1", false},
		{"", false},
		{"http://host:port:x/%zz", false},
	} {
		if err := capture.CheckEndpoint(c.endpoint); (err == nil) != c.ok {
			t.Errorf("CheckEndpoint(%q) = %v, want ok %v", c.endpoint, err, c.ok)
		}
	}
}
