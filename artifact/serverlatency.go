package artifact

import (
	"fmt"
	"math"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// latencyFloorMargin is the share by which the client's sum may fall
// short of the engine's floor: the two clocks are of two processes,
// perhaps two hosts, whose rates NTP may slew apart by up to 500 ppm; it
// also absorbs the rounding of float64 sums and bucket shares.
const latencyFloorMargin = 1e-3

// checkLatencyFloors holds the records of t's point, at its after scrape,
// to the engine's own histograms of the same times (the Delta of the
// whole scrapes, full, before and after the point): a request's time to
// first token and its end-to-end latency inside the server run from its
// arrival there (servermetrics.Names says so of each engine) to a token
// the client receives later, so each is at most the client's. Between
// the point's before and after scrapes the engine observed every one of
// the point's requests that it counted (all but t.Slack of them), and
// perhaps others; whichever they are, their server-side times sum to at
// least the k smallest observations, each at least the lower edge of its
// bucket, and to at least the histogram's sum less the others, each at
// most the upper edge of its bucket (when every request between the
// scrapes is the point's, its sum exactly). Client-side times summing to less contradict the engine's own
// scrapes: a signer who shrank the records' ttft a hundredfold (11.9 ms
// to 0.12 ms, against the engine's mean of 11.1 ms) still had them
// verify. A histogram the scrapes cannot give (a reset, an engine without
// it) bounds nothing.
func checkLatencyFloors(file, field string, t schema.ScrapeTally, engine string, full map[int]*servermetrics.Snapshot) []schema.Problem {
	fb, fs := full[t.Before], full[t.Scrape]
	if !t.After || fb == nil || fs == nil {
		return nil
	}
	col, err := servermetrics.Delta(engine, []*servermetrics.Snapshot{fb, fs}, servermetrics.NoLoad)
	if err != nil {
		return nil
	}
	var out []schema.Problem
	for _, c := range []struct {
		role, what string
		n          int64
		sum        float64
	}{
		{servermetrics.RoleTTFT, "ttft (first content chunk − sent) of the measured requests with a first chunk", t.FirstN, t.FirstSumS},
		{servermetrics.RoleE2E, "end − sent of the ok measured requests", t.E2EN, t.E2ESumS},
	} {
		h := histogramOf(col, c.role)
		if h == nil {
			continue
		}
		k := min(c.n-t.Slack, int64(math.Round(h.Count)))
		if k <= 0 {
			continue
		}
		floor := max(smallestSum(h, k), float64(h.Count**h.Mean)-largestSum(h, int64(math.Round(h.Count))-k))
		if c.sum < floor*(1-latencyFloorMargin) {
			out = append(out, schema.Problem{File: file, Field: field, Message: fmt.Sprintf(
				"point %q repeat %d: the engine's %s observed %s request(s) between the scrape before the point (server_metrics.scrapes[%d]) and this scrape after it, at least %d of them the point's own%s, whose times inside the server sum to at least %s s by its sum and buckets; but the records' %s sum to %s s over %d request(s): a client waits at least as long as the server takes",
				t.Point, t.Repeat, h.Metric, num(h.Count), t.Before, k, uncounted(t.Slack), digits.Places(floor, 6), c.what, digits.Places(c.sum, 6), c.n)})
		}
	}
	return out
}

// histogramOf is col's histogram of role with observations, or nil.
func histogramOf(col *servermetrics.Column, role string) *servermetrics.HistogramDelta {
	for i := range col.Histograms {
		if h := &col.Histograms[i]; h.Role == role && h.Count > 0 {
			return h
		}
	}
	return nil
}

// smallestSum is the least the k smallest of h's observations can sum to:
// each at least the lower edge of its bucket (0 for the first: times are
// not negative; the last finite edge for those above it).
func smallestSum(h *servermetrics.HistogramDelta, k int64) float64 {
	var sum, prevEdge, prevCum float64
	left := float64(k)
	for _, u := range h.Under {
		in := math.Round(u.Share*h.Count) - prevCum
		lo := max(prevEdge, 0)
		take := min(max(in, 0), left)
		sum += float64(take * lo)
		left -= take
		prevEdge, prevCum = u.Edge, prevCum+max(in, 0)
		if left <= 0 {
			return sum
		}
	}
	return sum + float64(left*max(prevEdge, 0))
}

// uncounted says how many of the point's requests the engine may not have
// counted by the after scrape ("" when none).
func uncounted(slack int64) string {
	switch {
	case slack <= 0:
		return ""
	case slack == 1:
		return " (one may not be counted yet)"
	}
	return fmt.Sprintf(" (%d may not be counted yet)", slack)
}

// largestSum is the most the m largest of h's observations can sum to:
// each at most its bucket's upper edge; +Inf when one of them may lie
// above the last finite edge.
func largestSum(h *servermetrics.HistogramDelta, m int64) float64 {
	left := float64(m)
	if left <= 0 {
		return 0
	}
	var sum float64
	above := h.Count
	for i := len(h.Under) - 1; i >= -1; i-- {
		cum, edge := 0.0, math.Inf(1)
		if i >= 0 {
			cum = math.Round(h.Under[i].Share * h.Count)
		}
		if i+1 < len(h.Under) {
			edge = h.Under[i+1].Edge
		}
		in := max(above-cum, 0)
		take := min(in, left)
		if take > 0 {
			if math.IsInf(edge, 1) {
				return edge
			}
			sum += float64(take * edge)
			left -= take
		}
		above = cum
		if left <= 0 {
			break
		}
	}
	return sum
}
