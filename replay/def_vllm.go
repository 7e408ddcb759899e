package replay

import (
	"fmt"
	"math"

	"github.com/benchseal/benchseal/schema"
)

// vllmDef is vLLM bench serve's definitions (github.com/vllm-project/vllm,
// vllm/benchmarks/serve.py; before it benchmarks/benchmark_serving.py).
var vllmDef = &vllmDefinition{info{
	tool:    schema.VLLM,
	summary: "vLLM bench serve: TPOT (latency−ttft)/(n−1), ITL pooled per chunk, duration = harness wall clock, numpy linear, ddof 0",
	help: `Successful requests only. ttft = first SSE chunk − send; e2el = latency: orig latency, else end_ns − sent_ns (to the
end of the stream, as vLLM's 2024 benchmark_serving and SGLang; null when end_ns was not measured); tpot = (latency −
ttft)/(output_len − 1) for output_len > 1; itl = every chunk gap, pooled; duration = orig "duration" (s, the harness wall
clock, carried on records) else max(end_ns) − min(sent_ns). request_goodput counts successes meeting every limit; a
one-token answer has tpot 0 for goodput (one_token pass, whatever the SLO states). numpy linear percentiles, np.mean, np.std
(ddof 0) in float64 seconds, reported ×10⁹ in ns. orig (read only in a vLLM import): ttft (s), itl [s], latency (s,
optional), output_len, input_len, success/error.`,
	aliases: map[string]string{"ttft": schema.MetricTTFT, "tpot": schema.MetricTPOT, "itl": schema.MetricITL, "e2el": schema.MetricE2E, "request_throughput": schema.MetricRequestThroughput, "output_throughput": schema.MetricOutputTokenThroughput, "total_token_throughput": schema.MetricTotalTokenThroughput, "request_goodput": schema.MetricGoodput},
	meanings: map[string]string{
		schema.MetricTPOT: "tpot = (latency − ttft) ÷ (output tokens − 1), per request, latency to the end of the stream (vLLM's TPOT)",
		schema.MetricITL:  "itl = every gap between content chunks, pooled (vLLM's ITL)",
	},
	oneToken:     schema.OneTokenPass,
	oneTokenRule: `vLLM gives a one-token answer tpot 0 for goodput ("if output_len <= 1, we regard tpot as 0 for goodput"), so it passes a TPOT limit`,
}}

func init() { register(vllmDef) }

type vllmDefinition struct{ info }

func (d *vllmDefinition) peerRules() peerRules { return &vllmRules{name: d.Name()} }

// vllmRules are vLLM's calculate_metrics, which SGLang's bench_serving
// was adapted from (def_sglang.go cites its source) and shares.
type vllmRules struct {
	floatSamples
	name     string
	duration float64 // ns, from orig (the harness wall clock)
	// noLatency says why some success has no latency ("" when all have
	// one): its e2e and tpot, and any e2e or tpot limit, are unknown.
	noLatency string
}

func (r *vllmRules) add(p *peerGroup, rec *schema.Record, o orig, ok bool) {
	// dur_s is the harness's perf_counter around dispatch and drain, in
	// seconds; the importer carries it on every record.
	if d, ok := o.num("duration"); ok {
		r.duration = d * 1e9
	}
	p.span(float64(rec.SentNS), float64(rec.EndNS))
	if !ok || (o != nil && o.present("error") && o["error"] != "") || (o != nil && o["success"] == false) {
		return
	}
	// Times in orig are seconds (perf_counter differences).
	F, L, okR := recFirstLast(rec)
	ttft, okT := o.secondsOr(F, okR, "ttft")
	if !okT {
		return
	}
	p.succ++
	lat := math.NaN()
	why := ""
	if v, ok := o.num("latency", "e2e_latency"); ok {
		lat = float64(v * 1e9) // explicit: lat − ttft below must not fuse (internal/floatcheck)
	} else if o != nil {
		// SGLang and older vLLM files keep no per-request latency:
		// e2e and tpot are not recomputable (a note says so).
		why = r.name + ": per-request latency not stored by this tool version: e2e and tpot not recomputable"
	} else if f := p.ver.latencyEnd(); p.prov.Field(f).Status != schema.FieldMeasured {
		end, to := p.prov.Field(f), "the end of the stream"
		if f == schema.FieldLastChunk {
			to = "the last chunk"
		}
		why = fmt.Sprintf("%s: the latency runs to %s (%s), which the source did not measure (%s %s: %s): e2e and tpot not recomputable", r.name, to, f, f, end.Status, end.How)
	} else if f == schema.FieldLastChunk {
		// vllm/2026.11 and sglang/2026.11 (versions.go): the latency
		// ends at the last chunk (chunk times count from the send), as
		// vLLM's current serve.py.
		lat = L
	} else {
		// The latency runs to the end of the stream: SGLang's
		// bench_serving, adapted from vLLM's 2024 benchmark_serving,
		// sets latency = perf_counter() − st on every chunk including
		// [DONE] (SGLang's python/sglang/bench_serving.py keeps that rule),
		// which the LambdaLabs vLLM file's latencies follow (not ttft +
		// Σ itl). vLLM's current serve.py stops at the last token chunk;
		// these definitions keep the 2024 rule. The records' end_ns is
		// that end; their last chunk is not.
		lat = float64(rec.EndNS - rec.SentNS)
	}
	if why != "" {
		r.noLatency, p.unjudgedWhy = why, why
	}
	n := o.numOr(float64(rec.OutputTokens), "output_len")
	in := o.numOr(float64(rec.InputTokens), "input_len")
	p.outTok += int64(n)
	p.inTok += int64(n) + int64(in)
	r.ttft = append(r.ttft, ttft)
	if !math.IsNaN(lat) {
		r.e2e = append(r.e2e, lat)
	}
	// "if output_len <= 1, we regard tpot as 0 for goodput" (serve.py):
	// such a request leaves the TPOT statistics but passes a TPOT limit.
	tp := 0.0
	if n > 1 && !math.IsNaN(lat) {
		tp = (lat - ttft) / (n - 1)
		r.tpot = append(r.tpot, tp)
	} else if n > 1 {
		tp = math.NaN()
	}
	// ITL is per chunk, not per token: every gap, pooled.
	if g, ok := o.list("itl"); ok {
		for _, x := range g {
			r.itl = append(r.itl, x*1e9)
		}
	} else if o == nil {
		r.itl = append(r.itl, recGaps(rec)...)
	}
	p.judge(ttft, lat, tp, n)
}

func (r *vllmRules) finish(p *peerGroup, pr *PointResult, g *group) {
	r.numpyDists(pr)
	if r.noLatency != "" {
		// Distributions over the requests that had a latency would
		// leave the others out.
		setNull(pr, schema.MetricE2E, r.noLatency)
		setNull(pr, schema.MetricTPOT, r.noLatency)
	}
	// duration is the harness wall clock when stored, else the span of
	// the records' times. The stored one is the tool's float seconds as
	// the tool divides by them, not the manifest's window rounded to the
	// ns, and is labelled so.
	var dur float64
	if r.duration > 0 {
		dur = r.duration
		g.cfg.gate.setWindowSource(pr, "the tool's own window: the duration (s) on its records, not rounded, as "+r.name+" divides by it")
	} else {
		dur = p.spanWindow(pr, g)
	}
	p.throughputs(pr, dur)
	p.goodput(pr, dur, p.sent)
}

func (r *vllmRules) notes() []string {
	if r.noLatency != "" {
		return []string{r.noLatency}
	}
	return nil
}
