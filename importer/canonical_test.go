package importer

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
)

// Outcomes of a canonical metric against the tool's published counterpart.
const (
	// same: equal within the tool's rounding.
	same = "matches"
	// null: the records cannot determine it; null with a reason.
	null = "null with a reason"
	// other: the tool publishes a different statistic under that name.
	other = "tool publishes a different statistic"
	// restated: equal, but over a window the tool's claimed rate defines
	// (schema.ToolWindowFromRate), so it restates the claim, checks nothing.
	restated = "the claim restated over a window derived from it"
)

// canonicalVersusTool lists, per real fixture, what each canonical rate and
// count replay prints is against the number the tool itself published
// (its claim of the same path in claims.json). docs/importers.md's table
// "Canonical numbers on the same real outputs" states the same.
var canonicalVersusTool = []struct {
	tool string
	want map[string]string // metric path → outcome
}{
	{"aiperf", map[string]string{"counts.ok": same, "request_throughput": same, "output_token_throughput": same}},
	{"genai-perf", map[string]string{"request_throughput": same, "output_token_throughput": null}},
	{"vllm", map[string]string{"counts.ok": same, "request_throughput": same, "output_token_throughput": same}},
	{"sglang", map[string]string{"counts.ok": same, "request_throughput": same, "output_token_throughput": same, "total_token_throughput": same}},
	{"llmperf", map[string]string{"counts.ok": same, "request_throughput": restated, "output_token_throughput": restated}},
	{"guidellm", map[string]string{"counts.ok": same, "request_throughput": other, "output_token_throughput": other, "total_token_throughput": other}},
	{"inference-perf", map[string]string{"counts.ok": same, "request_throughput": same, "output_token_throughput": same, "total_token_throughput": same}},
}

// toolRounding is the relative error a tool's printed number carries (it
// prints float64 to 15-17 digits, and a window rounded to the ns).
const toolRounding = 1e-9

// TestCanonicalMetricsMatchTheToolOrAreNull imports every tool's real
// fixture and replays it under benchseal's canonical definitions: each
// rate and count either matches the tool's own published number, or is
// null with the reason (never a number computed from a placeholder).
func TestCanonicalMetricsMatchTheToolOrAreNull(t *testing.T) {
	for _, tt := range canonicalVersusTool {
		t.Run(tt.tool, func(t *testing.T) {
			rd := importFixture(t, tt.tool)
			res, err := replay.Replay(context.Background(), rd, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			claims := rd.Claims()
			if claims == nil {
				t.Fatal("the import claims none of the tool's numbers")
			}
			for _, pc := range claims.Points {
				rep := 0
				if pc.Repeat != nil {
					rep = *pc.Repeat
				}
				p := res.Point(pc.Point, rep)
				if p == nil {
					t.Fatalf("no result for point %s", pc.Point)
				}
				for _, c := range pc.Metrics {
					want, ok := tt.want[c.Metric]
					if !ok {
						continue
					}
					v, reason := res.Resolve(pc.Point, rep, c.Metric)
					got, _ := v.Float64()
					switch want {
					case null:
						if !v.IsNull() || reason == "" {
							t.Errorf("%s %s = %v, want null with a reason", pc.Point, c.Metric, got)
						}
						if _, ok := p.NullReason(c.Metric); !ok {
							t.Errorf("%s %s: no null reason in the result", pc.Point, c.Metric)
						}
					case same, other, restated:
						if v.IsNull() {
							t.Errorf("%s %s is null (%s), want a number", pc.Point, c.Metric, reason)
							continue
						}
						rel := replay.RelError(got, c.Value)
						if derived := strings.Contains(p.WindowSource, "derived from the claimed"); strings.HasSuffix(c.Metric, "_throughput") && derived != (want == restated) {
							t.Errorf("%s %s: window %q; the table says %s", pc.Point, c.Metric, p.WindowSource, want)
						}
						if want == other {
							if rel <= toolRounding {
								t.Errorf("%s %s matches the tool (%v); the table says it does not", pc.Point, c.Metric, got)
							}
							continue
						}
						if rel > toolRounding {
							t.Errorf("%s %s = %v, tool %v (rel %.1e) — %s", pc.Point, c.Metric, got, c.Value, rel, want)
						}
					default:
						panic(fmt.Sprint("unknown outcome ", want))
					}
				}
			}
			// Every metric listed must have been claimed by the import.
			seen := map[string]bool{}
			for _, pc := range claims.Points {
				for _, c := range pc.Metrics {
					seen[c.Metric] = true
				}
			}
			for m := range tt.want {
				if !seen[m] {
					t.Errorf("%s: the tool's %s is not claimed on import", tt.tool, m)
				}
			}
		})
	}
}
