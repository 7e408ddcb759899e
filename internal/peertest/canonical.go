package peertest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
)

// Outcomes of a canonical metric against the tool's published counterpart
// (Case.Canonical).
const (
	// Same: equal within the tool's rounding.
	Same = "matches"
	// Null: the records cannot determine it; null with a reason.
	Null = "null with a reason"
	// Other: the tool publishes a different statistic under that name.
	Other = "tool publishes a different statistic"
	// Restated: equal, but over a window the tool's claimed rate defines
	// (schema.PeerTool.WindowFromRate), so it restates the claim, checks
	// nothing.
	Restated = "the claim restated over a window derived from it"
)

// toolRounding is the relative error a tool's printed number carries (it
// prints float64 to 15-17 digits, and a window rounded to the ns).
const toolRounding = 1e-9

// canonicalVersusTool imports the tool's real fixture and replays it
// under benchseal's canonical definitions: each rate and count either
// matches the tool's own published number, or is null with the reason
// (never a number computed from a placeholder), as c.Canonical says.
func canonicalVersusTool(t *testing.T, c Case) {
	rd := importFixture(t, c.Peer)
	res, err := replay.Replay(context.Background(), rd, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	claims := rd.Claims()
	if claims == nil {
		t.Fatal("the import claims none of the tool's numbers")
	}
	seen := map[string]bool{}
	for _, pc := range claims.Points {
		rep := 0
		if pc.Repeat != nil {
			rep = *pc.Repeat
		}
		p := res.Point(pc.Point, rep)
		if p == nil {
			t.Fatalf("no result for point %s", pc.Point)
		}
		for _, cl := range pc.Metrics {
			seen[cl.Metric] = true
			want, ok := c.Canonical[cl.Metric]
			if !ok {
				continue
			}
			v, reason := res.Resolve(pc.Point, rep, cl.Metric)
			got, _ := v.Float64()
			switch want {
			case Null:
				if !v.IsNull() || reason == "" {
					t.Errorf("%s %s = %s, want null with a reason", pc.Point, cl.Metric, digits.Shortest(got))
				}
				if _, ok := p.NullReason(cl.Metric); !ok {
					t.Errorf("%s %s: no null reason in the result", pc.Point, cl.Metric)
				}
			case Same, Other, Restated:
				if v.IsNull() {
					t.Errorf("%s %s is null (%s), want a number", pc.Point, cl.Metric, reason)
					continue
				}
				rel := replay.RelError(got, cl.Value)
				if derived := strings.Contains(p.WindowSource, "derived from the claimed"); strings.HasSuffix(cl.Metric, "_throughput") && derived != (want == Restated) {
					t.Errorf("%s %s: window %q; the table says %s", pc.Point, cl.Metric, p.WindowSource, want)
				}
				if want == Other {
					if rel <= toolRounding {
						t.Errorf("%s %s matches the tool (%s); the table says it does not", pc.Point, cl.Metric, digits.Shortest(got))
					}
					continue
				}
				if rel > toolRounding {
					t.Errorf("%s %s = %s, tool %s (rel %s) — %s", pc.Point, cl.Metric, digits.Shortest(got), digits.Shortest(cl.Value), digits.Sci(rel, 1), want)
				}
			default:
				panic(fmt.Sprint("unknown outcome ", want))
			}
		}
	}
	// Every metric listed must have been claimed by the import.
	for m := range c.Canonical {
		if !seen[m] {
			t.Errorf("%s: the tool's %s is not claimed on import", c.Peer.Name, m)
		}
	}
}
