package replay

import (
	"math"

	"github.com/benchseal/benchseal/schema"
)

// inferencePerfDef is kubernetes-sigs/inference-perf's definitions
// (github.com/kubernetes-sigs/inference-perf,
// reportgen/base.py::summarize_requests).
var inferencePerfDef = &inferencePerfDefinition{info{
	tool:    schema.InferencePerf,
	summary: "kubernetes-sigs/inference-perf: TPOT (last−first token)/(N−1), ITL per token (intra-chunk gaps 0), numpy linear, no std",
	help: `Successes only. ttft = first token time − start; tpot = (last token time − first token time)/(N − 1); ntpot =
(end − start)/N (normalized_time_per_output_token_ns); itl = every
consecutive token-time gap, tokens of one chunk sharing its arrival time (intra-chunk gaps 0); total_time = max end −
min start over all requests; throughputs = successes ÷ total_time; goodput over successes: a one-token answer fails a TPOT
limit (whatever the SLO states); ` + schema.MetricSLOAttainment + ` = good ÷ successes. numpy linear percentiles; no stddev (null). In an
inference-perf import every figure comes from the float seconds in orig (start_time, end_time, output_token_times;
output_tokens, input_tokens): a success is any request without error, streamable (ttft, tpot, itl) with more than one
output-token time, ntpot 0 for no tokens.`,
	aliases:      map[string]string{"time_to_first_token": schema.MetricTTFT, "time_per_output_token": schema.MetricTPOT, "inter_token_latency": schema.MetricITL, "request_latency": schema.MetricE2E, "normalized_time_per_output_token": "normalized_time_per_output_token_ns"},
	oneToken:     schema.OneTokenFail,
	oneTokenRule: "inference-perf gives a one-token answer no TPOT (None), which fails a TPOT limit",
}}

func init() { register(inferencePerfDef) }

type inferencePerfDefinition struct{ info }

func (*inferencePerfDefinition) peerRules() peerRules { return &inferencePerfRules{} }

type inferencePerfRules struct {
	floatSamples
	ntpot []float64 // nil until one is read
}

func (r *inferencePerfRules) add(p *peerGroup, rec *schema.Record, o orig, ok bool) {
	if s, okS := o.num("start_time"); okS {
		if e, okE := o.num("end_time"); okE {
			r.addOrig(p, rec, o, s, e, ok)
			return
		}
	}
	// total_time spans all requests, failures included.
	p.span(float64(rec.SentNS), float64(rec.EndNS))
	if !ok || len(rec.ChunksNS) == 0 {
		return
	}
	p.succ++
	F, L, _ := recFirstLast(rec)
	n := rec.OutputTokens
	r.ttft = append(r.ttft, F)
	r.e2e = append(r.e2e, float64(rec.EndNS-rec.SentNS))
	// TPOT ends at the last token (not the response end); None (⇒ not
	// good under a TPOT limit) for one token.
	tp := math.NaN()
	if n >= 2 {
		tp = (L - F) / float64(n-1)
		r.tpot = append(r.tpot, tp)
	}
	if n >= 1 {
		// NTPOT: (end − start)/N, the request's whole latency per token.
		r.ntpot = append(r.ntpot, float64(rec.EndNS-rec.SentNS)/float64(n))
	}
	// Per-token gaps: chunks are re-tokenized and each token carries its
	// chunk's arrival time, so gaps inside a chunk are 0.
	var prev float64
	var have bool
	for j, t := range rec.ChunksNS {
		cnt := int64(1)
		if len(rec.ChunkTokens) == len(rec.ChunksNS) {
			cnt = rec.ChunkTokens[j]
		} else if n > int64(len(rec.ChunksNS)) {
			cnt = tokenIndex(rec, j+1, 0) - tokenIndex(rec, j, 0)
			if j == len(rec.ChunksNS)-1 {
				cnt = n - (tokenIndex(rec, j, 0) - 1)
			}
		}
		for range cnt {
			if have {
				r.itl = append(r.itl, float64(t)-prev)
			}
			prev, have = float64(t), true
		}
	}
	p.outTok += n
	p.inTok += n + rec.InputTokens
	p.judge(F, float64(rec.EndNS-rec.SentNS), tp, float64(n))
}

// addOrig is add for a record imported from inference-perf: its figures
// come from the float seconds inference-perf stored and computed with
// (start_time, end_time s; output_token_times s; output_tokens and
// input_tokens), each difference taken in seconds as its summarize_requests
// does, then given in ns. A success is a request without error whatever
// it returned; it is streamable (ttft, tpot, itl) with more than one
// output-token time; ntpot is 0 for an answer of no tokens.
func (r *inferencePerfRules) addOrig(p *peerGroup, rec *schema.Record, o orig, s, e float64, ok bool) {
	p.span(s*1e9, e*1e9)
	if !ok {
		return
	}
	p.succ++
	n := o.numOr(float64(rec.OutputTokens), "output_tokens")
	in := o.numOr(float64(rec.InputTokens), "input_tokens")
	r.e2e = append(r.e2e, (e-s)*1e9)
	nt := 0.0
	if n > 0 {
		nt = (e - s) / n * 1e9
	}
	r.ntpot = append(r.ntpot, nt)
	ttft, tp := math.NaN(), math.NaN()
	if t, _ := o.list("output_token_times"); len(t) > 1 {
		ttft = (t[0] - s) * 1e9
		r.ttft = append(r.ttft, ttft)
		if n > 1 {
			tp = (t[len(t)-1] - t[0]) / (n - 1) * 1e9
			r.tpot = append(r.tpot, tp)
		}
		for j := 1; j < len(t); j++ {
			r.itl = append(r.itl, (t[j]-t[j-1])*1e9)
		}
	}
	p.outTok += int64(n)
	p.inTok += int64(n) + int64(in)
	p.judge(ttft, (e-s)*1e9, tp, n)
}

func (r *inferencePerfRules) finish(p *peerGroup, pr *PointResult, g *group) {
	r.numpyDists(pr)
	keys := []string{schema.MetricTTFT, schema.MetricE2E, schema.MetricTPOT, schema.MetricITL}
	if r.ntpot != nil {
		pr.Dists["normalized_time_per_output_token_ns"] = floatDist(r.ntpot, 0)
		keys = append(keys, "normalized_time_per_output_token_ns")
	}
	// summarize reports mean, min, max and percentiles: no stddev.
	for _, k := range keys {
		d := pr.Dists[k]
		d.Stddev = Null
		pr.Dists[k] = d
	}
	dur := p.spanWindow(pr, g)
	p.throughputs(pr, dur)
	// goodput_percentage = good ÷ successes: failures are not in the
	// denominator.
	p.goodput(pr, dur, p.succ)
}
