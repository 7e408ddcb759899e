package replay

import (
	"math"

	"github.com/benchseal/benchseal/schema"
)

// llmperfDef is LLMPerf's definitions (github.com/ray-project/llmperf,
// token_benchmark_ray.py).
var llmperfDef = &llmperfDefinition{info{
	tool:    schema.LLMPerf,
	summary: "LLMPerf: ITL = Σ gaps incl. TTFT ÷ tokens (extra inter_token_latency_ns), pandas linear percentiles, std ddof 1",
	help: `Rows without error_code only. ttft = ttft_s; e2e = end_to_end_latency_s; inter_token_latency = inter_token_latency_s
(LLMPerf's: Σ chunk gaps including TTFT ÷ output tokens, ≈ e2e/n) as inter_token_latency_ns; no TPOT, no chunk-gap ITL.
pandas Series.quantile (linear), mean, std (ddof 1). Throughputs need LLMPerf's run start/end, which it does not store:
the window is max(end_ns) − min(sent_ns) where the send times were measured; an LLMPerf import has none, so it is
LLMPerf's completed ÷ completed-per-minute × 60 s, derived from the claimed rate: its throughput claims are not recomputable.
Extra distributions of the same rows (pandas): request_output_throughput_token_per_s (the row's own, else output tokens ÷
e2e s), number_input_tokens, number_output_tokens.`,
	aliases: map[string]string{"ttft_s": schema.MetricTTFT, "end_to_end_latency_s": schema.MetricE2E, "inter_token_latency_s": "inter_token_latency_ns"},
	notes:   []string{"llmperf: LLMPerf divides its throughputs by the run's start-to-end time, which it does not store; the window is max(end_ns) − min(sent_ns) where the send times were measured, else the stored window the window line names (none without one)"},
}}

func init() { register(llmperfDef) }

type llmperfDefinition struct{ info }

func (*llmperfDefinition) peerRules() peerRules {
	return &llmperfRules{perReq: map[string][]float64{}}
}

type llmperfRules struct {
	ttft, e2e []float64
	// itl is LLMPerf's inter_token_latency: Σ time_to_next_token, which
	// starts with the TTFT, ÷ output tokens, so ≈ e2e/n (the client's
	// comment says "should be same as E2E_LAT"); not a chunk-gap ITL, so
	// it is an extra distribution, never itl_ns. nil until one is read.
	itl []float64
	// perReq holds the extra per-row distributions by name.
	perReq map[string][]float64
}

func (r *llmperfRules) add(p *peerGroup, rec *schema.Record, o orig, ok bool) {
	p.span(float64(rec.SentNS), float64(rec.EndNS))
	// metrics_summary keeps rows whose error_code is NaN only.
	if !ok || (o != nil && o.present("error_code")) {
		return
	}
	// LLMPerf times are seconds (time.monotonic differences).
	F, L, okR := recFirstLast(rec)
	ttft, okT := o.secondsOr(F, okR, "ttft_s")
	e2e, okE := o.num("end_to_end_latency_s")
	if okE {
		e2e *= 1e9
	} else if okR {
		e2e, okE = L, true
	}
	if !okT || !okE {
		return
	}
	p.succ++
	n := o.numOr(float64(rec.OutputTokens), "number_output_tokens")
	itl, okI := o.num("inter_token_latency_s")
	if okI {
		itl *= 1e9
	} else if n > 0 {
		itl = L / n
	}
	r.ttft = append(r.ttft, ttft)
	r.e2e = append(r.e2e, e2e)
	if okI || n > 0 {
		r.itl = append(r.itl, itl)
	}
	in := o.numOr(float64(rec.InputTokens), "number_input_tokens")
	thr, okTh := o.num("request_output_throughput_token_per_s")
	if !okTh && e2e > 0 {
		thr, okTh = n/(e2e/1e9), true
	}
	if okTh {
		r.perReq["request_output_throughput_token_per_s"] = append(r.perReq["request_output_throughput_token_per_s"], thr)
	}
	r.perReq["number_input_tokens"] = append(r.perReq["number_input_tokens"], in)
	r.perReq["number_output_tokens"] = append(r.perReq["number_output_tokens"], n)
	p.outTok += int64(n)
	p.inTok += int64(n + in)
	// LLMPerf has no goodput; a TPOT limit is judged on the per-request
	// TPOT, none for one-token answers (the SLO's one-token policy).
	tp := math.NaN()
	if n >= 2 {
		tp = (e2e - ttft) / (n - 1)
	}
	p.judge(ttft, e2e, tp, n)
}

func (r *llmperfRules) finish(p *peerGroup, pr *PointResult, g *group) {
	// pandas Series.quantile (linear) and Series.std (ddof 1).
	pr.Dists[schema.MetricTTFT] = pandasDist(r.ttft)
	pr.Dists[schema.MetricE2E] = pandasDist(r.e2e)
	pr.Dists[schema.MetricTPOT] = emptyDist()
	pr.Dists[schema.MetricITL] = emptyDist()
	if r.itl != nil {
		pr.Dists["inter_token_latency_ns"] = pandasDist(r.itl)
	}
	for k, xs := range r.perReq {
		pr.Dists[k] = pandasDist(xs)
	}
	// LLMPerf's throughputs divide by its run start/end, which it does
	// not store: the span of the records' times stands in (a note says).
	dur := p.spanWindow(pr, g)
	p.throughputs(pr, dur)
	p.goodput(pr, dur, p.sent)
}
