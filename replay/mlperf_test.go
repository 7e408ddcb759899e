package replay

import (
	"math/big"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// mlperfRun is an open-loop run: queries scheduled every
// 10 ms, each answered with 11 tokens (TTFT 100 ms, TPOT 10 ms), except
// the last `failed` ones, which time out at 30 s.
func mlperfRun(queries, failed int) *memRun {
	const ms = int64(1e6)
	var recs []*schema.Record
	for i := range queries {
		s := int64(i) * 10 * ms
		r := req(s, 11, 100*ms, 200*ms)
		r.ScheduledNS = &s
		if i >= queries-failed {
			r.Status, r.ChunksNS, r.OutputTokens, r.EndNS = schema.StatusTimeout, nil, 0, s+30_000*ms
		}
		recs = append(recs, r)
	}
	return &memRun{m: manifest(), recs: recs}
}

// TestMLPerfFailedQueriesCountAsOverLatency: in LoadGen every issued query
// enters the p99 and the overlatency count; a failed query has no latency
// within any limit (+∞). 10 of 600 queries timed out: the p99 (index 594)
// is one of them, t = 10 needs 2010 queries, so the run is INVALID (it
// was VALID with the failures left out).
func TestMLPerfFailedQueriesCountAsOverLatency(t *testing.T) {
	lim := &MLPerfLimits{TTFTNS: 450e6, TPOTNS: 40e6, MinDurationNS: 1e9, MinQueries: 100}
	c := mustReplay(t, mlperfRun(600, 0), Options{MLPerf: lim}).Results[0].MLPerf
	if !c.Valid || c.TTFTOver != 0 || c.Failed != 0 {
		t.Fatalf("no failures: valid %v over %d failed %d %v", c.Valid, c.TTFTOver, c.Failed, c.Reasons)
	}
	c = mustReplay(t, mlperfRun(600, 10), Options{MLPerf: lim}).Results[0].MLPerf
	if c.Valid {
		t.Error("VALID with 10 of 600 queries timed out")
	}
	if c.Failed != 10 || c.TTFTOver != 10 || c.TPOTOver != 10 {
		t.Errorf("failed %d, over %d/%d, want 10, 10/10", c.Failed, c.TTFTOver, c.TPOTOver)
	}
	if !c.TTFTP99Failed || !c.TTFTP99NS.IsNull() || !c.TPOTP99Failed {
		t.Errorf("p99 %v (failed %v), want +∞ (a failed query)", c.TTFTP99NS, c.TTFTP99Failed)
	}
	ratEq(t, "min queries for t = 10", c.TTFTMinQueries, big.NewRat(2010, 1))
	if !strings.Contains(strings.Join(c.Reasons, "; "), "10 of 600 queries failed") {
		t.Errorf("reasons %v do not name the failed queries", c.Reasons)
	}
	// One failure in 600: the p99 is an answered query, but the run is
	// still invalid (the failure is logged as an error) and over counts it.
	c = mustReplay(t, mlperfRun(600, 1), Options{MLPerf: lim}).Results[0].MLPerf
	if c.Valid || c.TTFTP99Failed || c.TTFTOver != 1 {
		t.Errorf("one failure: valid %v p99 failed %v over %d", c.Valid, c.TTFTP99Failed, c.TTFTOver)
	}
	ratEq(t, "p99 of answered", c.TTFTP99NS, big.NewRat(100e6, 1))
}
