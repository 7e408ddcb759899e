package replay

import (
	"fmt"
	"math"
	"slices"

	"github.com/benchseal/benchseal/schema"
)

// peerSweep collects, for one point and repeat under a peer definition,
// what a sweep of one SLO limit needs: the tool's value of the swept
// metric for every success the other limits pass (judged as the tool's
// judge does), the successes that pass whatever the swept limit (a
// one-token answer under a passing policy), and those no limit can judge
// (a value the source did not store).
type peerSweep struct {
	metric   string
	vals     []float64
	always   int64
	unjudged int64
}

// add takes one success's tool values; s is the applied SLO, whose limit
// on the swept metric the sweep replaces.
func (w *peerSweep) add(s SLOSpec, o Observed) {
	switch s.judgeSwept(o, w.metric).Verdict {
	case Fail:
	case Unknown:
		w.unjudged++
	case Pass:
		if w.metric == schema.SLOTPOT && o.OneToken {
			// A one-token answer: the policy passed it, whatever the limit.
			w.always++
			return
		}
		w.vals = append(w.vals, o.metric(w.metric).f)
	}
}

// buildPeerSweep computes the sweep under the peer definitions: at each
// limit, the successes the tool's judge counts good, per second of the
// tool's window, and over the tool's attainment denominator. A group in
// which some success cannot be judged, or whose window is unknown, has
// null entries (notes say why).
func buildPeerSweep(spec *SweepSpec, groups map[groupKey]*group, order []groupKey) (*Sweep, []string) {
	sw := &Sweep{Metric: spec.Metric, LimitsNS: spec.Limits()}
	var notes []string
	for _, k := range order {
		g := groups[k]
		p := g.peer
		ps := p.sweep
		slices.Sort(ps.vals)
		row := SweepRow{Point: k.point, Repeat: k.repeat}
		dur := p.dur
		if g.missing > 0 {
			dur = math.NaN()
		}
		if ps.unjudged > 0 {
			notes = append(notes, fmt.Sprintf("sweep of %s, point %s repeat %d, is null: %s: %d successful request(s) cannot be judged", spec.Metric, k.point, k.repeat, p.unjudgedWhy, ps.unjudged))
		}
		for _, lim := range sw.LimitsNS {
			if ps.unjudged > 0 {
				row.Goodput = append(row.Goodput, Null)
				row.Attainment = append(row.Attainment, Null)
				continue
			}
			// the values ≤ lim, compared as the tool's judge compares
			c, _ := slices.BinarySearchFunc(ps.vals, float64(lim), func(a, b float64) int {
				if a <= b {
					return -1
				}
				return 1
			})
			good := ps.always + int64(c)
			row.Goodput = append(row.Goodput, rate(float64(good), dur))
			if p.den > 0 {
				row.Attainment = append(row.Attainment, Float(float64(good)/float64(p.den)))
			} else {
				row.Attainment = append(row.Attainment, Null)
			}
		}
		sw.Rows = append(sw.Rows, row)
	}
	return sw, notes
}
