package replay

import (
	"math"
	"math/big"

	"github.com/benchseal/benchseal/schema"
)

// mlperfDef is MLPerf LoadGen's definitions (github.com/mlcommons/inference,
// loadgen/); its server-scenario validity check is in
// mlperf.go.
var mlperfDef = &mlperfDefinition{info{
	tool:    schema.MLPerf,
	summary: "MLPerf LoadGen: TTFT from scheduled time, TPOT truncated to int ns, percentile sorted[⌊n·p⌋], no stddev",
	help: `ttft = first token − scheduled time (actual send when unscheduled); latency = last token − scheduled; tpot =
(latency − ttft)/(n − 1) truncated to integer ns; percentile = sorted[⌊n·p⌋] (p as a double, as LoadGen); mean = integer sum
÷ count; no stddev (null); a one-token answer fails a TPOT limit, whatever the SLO states. ` + schema.MetricRequestThroughput + ` = (completed − 1) ÷ duration. Use --mlperf for the validity check.`,
	aliases:      map[string]string{"result_first_token_99.00_percentile_latency_ns": schema.MetricPath(schema.MetricTTFT, "p99"), "result_time_per_output_token_99.00_percentile_ns": schema.MetricPath(schema.MetricTPOT, "p99"), "result_first_token_mean_latency_ns": schema.MetricPath(schema.MetricTTFT, "mean")},
	oneToken:     schema.OneTokenFail,
	oneTokenRule: "LoadGen logs an answer of n ≤ 1 tokens as an error (no TPOT), so a one-token answer fails a TPOT limit",
}}

func init() { register(mlperfDef) }

type mlperfDefinition struct{ info }

func (*mlperfDefinition) peerRules() peerRules { return &mlperfRules{} }

// mlperfRules keep integer ns, as LoadGen does.
type mlperfRules struct {
	ttft, e2e, tpot intSamples
}

func (r *mlperfRules) add(p *peerGroup, rec *schema.Record, _ orig, ok bool) {
	if !ok || len(rec.ChunksNS) == 0 {
		return
	}
	p.succ++
	// LoadGen times a query from when it was scheduled, so a late send
	// counts against the server (coordinated omission is not hidden).
	origin := rec.SentNS
	if rec.ScheduledNS != nil {
		origin = *rec.ScheduledNS
	}
	first := rec.SentNS + rec.ChunksNS[0] - origin
	last := rec.SentNS + rec.ChunksNS[len(rec.ChunksNS)-1] - origin
	r.ttft.add(first)
	r.e2e.add(last)
	n := rec.OutputTokens
	p.outTok += n
	p.inTok += n + rec.InputTokens
	// TPOT in integer ns, truncated (C++ integer division); LoadGen logs
	// n ≤ 1 as an error, so a one-token answer fails a TPOT limit.
	tp := math.NaN()
	if n >= 2 {
		t := (last - first) / (n - 1)
		r.tpot.add(t)
		tp = float64(t)
	}
	p.judge(float64(first), float64(last), tp, float64(n))
}

func (r *mlperfRules) finish(p *peerGroup, pr *PointResult, g *group) {
	pr.Dists[schema.MetricTTFT] = mlperfDist(&r.ttft)
	pr.Dists[schema.MetricE2E] = mlperfDist(&r.e2e)
	pr.Dists[schema.MetricTPOT] = mlperfDist(&r.tpot)
	pr.Dists[schema.MetricITL] = intDist(&g.itl)
	// The window is the records' own (integer ns), through the gate.
	dur := p.gated(pr, g)
	if dur > 0 {
		pr.Scalars[schema.MetricWindow] = Int(int64(dur))
	}
	// Completed samples per second = (sample_count − 1) ÷ duration
	// (results.cc::LogSummary), exact.
	if dur > 0 && p.succ > 0 {
		pr.Scalars[schema.MetricRequestThroughput] = Exact(big.NewRat((p.succ-1)*1e9, int64(dur)))
	} else {
		pr.Scalars[schema.MetricRequestThroughput] = Null
	}
	p.tokenThroughputs(pr, dur)
	p.goodput(pr, dur, p.sent)
}

// mlperfDist is LoadGen's summary: mean = integer sum ÷ count, percentile
// = sorted[⌊n·p⌋] with p a double, no stddev.
func mlperfDist(s *intSamples) Dist {
	d := intDist(s)
	if d.N == 0 {
		return d
	}
	d.Stddev = Null
	rs := make([]int64, len(Percentiles))
	for i, p := range Percentiles {
		rs[i] = min(int64(float64(d.N)*p.Frac()), d.N-1) + 1
	}
	for i, v := range s.ranks(rs) {
		d.P[i] = Int(v)
	}
	return d
}
