package replay

import (
	"fmt"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/servermetrics"
)

// decideOverload adds the server's waiting-queue trend (when the run has
// a server column) and sets the overloaded flag.
func decideOverload(p *PointResult) {
	o := p.Overload
	if o == nil {
		return
	}
	if sc := p.Server; sc != nil {
		t := nullTrend("")
		switch {
		case sc.Column == nil:
			t.Reason = "no server column: " + sc.Reason
		case o.FitEndNS <= o.FitStartNS:
			t.Reason = "no fit window"
		default:
			var xs, ys []float64
			for _, w := range sc.waiting {
				if w.atNS > o.FitStartNS && w.atNS <= o.FitEndNS {
					xs, ys = append(xs, float64(w.atNS)/1e9), append(ys, w.v)
				}
			}
			if len(xs) < servermetrics.MinFitScrapes {
				t.Reason = fmt.Sprintf("%d waiting-queue scrape(s) inside the fit window, need %d", len(xs), servermetrics.MinFitScrapes)
			} else {
				t = fitTrend(xs, ys)
			}
		}
		o.Queue = &t
	}
	queueOver := false
	if q := o.Queue; q != nil && q.Significant() {
		s, _ := q.Slope.Float64()
		rise := s * float64(o.FitEndNS-o.FitStartNS) / 1e9
		if rise >= 1 {
			queueOver = true
			lo, _ := q.Low.Float64()
			o.addEvidence(fmt.Sprintf("the server's waiting queue rose by %s requests over the fit window (slope %s/s, 95 %% CI low %s > 0)", digits.Trend(rise), digits.Trend(s), digits.Trend(lo)))
		}
	}
	switch {
	case o.clientOver || queueOver:
		o.Overloaded = setFlag(true, o.Reasons["evidence"])
	case o.missing > 0:
		o.Overloaded = Flag{Why: fmt.Sprintf("%d declared measured request(s) have no record (incomplete run): a point that lost requests cannot be shown to have kept up with its load", o.missing)}
	case o.clientJudged:
		why := fmt.Sprintf("completions kept up with arrivals (backlog %d of %d, within %d %%) and the outstanding count shows no significant rise", o.Arrivals-o.Completions, o.Arrivals, OverloadTolerancePercent)
		if o.Completions > o.Arrivals {
			why = fmt.Sprintf("completions kept up with arrivals (backlog %d of %d: negative, requests sent before the fit window ended in it) and the outstanding count shows no significant rise", o.Arrivals-o.Completions, o.Arrivals)
		}
		if o.Queue != nil {
			if o.Queue.Slope.IsNull() {
				why += "; server queue trend unknown: " + o.Queue.Reason
			} else {
				why += "; nor does the server's waiting queue"
			}
		}
		if o.Loop == LoopClosed && (o.Queue == nil || o.Queue.Slope.IsNull()) {
			// Unknown, not "no": in a closed loop completions keep up with
			// arrivals by construction, so the client side shows nothing.
			o.Overloaded = Flag{Why: why + ", but a closed loop cannot pile requests up at the client: only the server's waiting queue could show the engine falling behind, and it was not measured"}
			break
		}
		o.Overloaded = setFlag(false, why)
	default:
		why := o.Reasons["fit"]
		if why == "" {
			why = "the client-side test could not run"
		}
		if o.Queue != nil && !o.Queue.Slope.IsNull() {
			why += "; the server's waiting queue shows no significant rise, which alone does not show the point kept up"
		}
		o.Overloaded = Flag{Why: why}
	}
	delete(o.Reasons, "evidence")
}
