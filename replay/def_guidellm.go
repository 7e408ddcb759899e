package replay

import (
	"fmt"
	"math"

	"github.com/benchseal/benchseal/schema"
)

// guidellmDef is GuideLLM's definitions (github.com/vllm-project/guidellm;
// docs/replay.md, "Peer definitions"); its
// statistics (weighted inverted-CDF percentiles, rate distributions) are
// in guidellm.go.
var guidellmDef = &guidellmDefinition{info{
	tool:    schema.GuideLLM,
	summary: "GuideLLM: ITL = (last−first token)/(n−1) weighted (→ " + schema.MetricTPOT + "), TPOT incl. TTFT (extra), inverted-CDF weighted percentiles",
	help: `Successful requests inside the measurement window (request_end ≥ measure_start and request_start ≤ measure_end).
ttft = first_token_iteration − request_start; request_latency = request_end − request_start; inter_token_latency =
(last_token_iteration − first_token_iteration)/(output_tokens − 1), weighted by output_tokens − 1 (` + schema.MetricTPOT + `);
time_per_output_token = (last_token_iteration − request_start)/output_tokens, weighted by output_tokens
(time_per_output_token_ns). Weighted mean, population-weighted std, percentiles = first value whose cumulative weight ≥ q.
Window = measure_end − measure_start (orig) else max(request_end) − min(request_start). orig (read only in a GuideLLM import): info.timings (epoch s).
Rates are GuideLLM's duration-weighted rate distributions (requests_per_second, output_tokens_per_second,
tokens_per_second, prompt_tokens_per_second; n = requests or tokens counted): events (request_end inside the window;
prompt tokens at the first token; one output token at the first token iteration and (n − 1)/(iterations − 1) at each
later iteration, spaced evenly to the last; read from the records of any other run: each chunk's tokens at its recorded
arrival, null when chunk times were not measured) merged when equal or within 0.1 ms, each weighted by the time from the
midpoint with its predecessor to the midpoint with its successor; request/output_token/` + schema.MetricTotalTokenThroughput + ` are
their means.`,
	aliases: map[string]string{"time_to_first_token_ms": schema.MetricTTFT, "inter_token_latency_ms": schema.MetricTPOT, "time_per_output_token_ms": "time_per_output_token_ns", "request_latency": schema.MetricE2E,
		"requests_per_second": "requests_per_second", "output_tokens_per_second": "output_tokens_per_second", "tokens_per_second": "tokens_per_second", "prompt_tokens_per_second": "prompt_tokens_per_second"},
}}

func init() { register(guidellmDef) }

type guidellmDefinition struct{ info }

func (*guidellmDefinition) peerRules() peerRules { return &guidellmRules{} }

// guidellmRules keep GuideLLM's times in epoch seconds, as it stores
// them (info.timings); the span (peerGroup.start/end) is in seconds too.
type guidellmRules struct {
	// The value distributions as (value, weight) pairs, past glHeld
	// each in a file (guidellm_spill.go): TTFT and latency weighted 1,
	// GuideLLM's ITL (→ tpot_ns) weighted by n − 1, its TPOT
	// (→ time_per_output_token_ns) by n.
	ttft, e2e, itl, tpot *glStream
	measureStart         float64 // the measurement window (epoch s), when stored
	measureEnd           float64
	haveMeasure          bool
	// The rate-distribution events, past glHeld each in a file
	// (guidellm_spill.go).
	glReq, glOut, glPrompt *glStream
	// fromRecords is set when a request's token events came from the
	// records' chunk times (chunkEvents), which the provenance gate must
	// let through.
	fromRecords bool
	// atLastChunk is set when those events put a request's tokens at its
	// first and last chunk only (guidellm/2026.11).
	atLastChunk bool
}

func (r *guidellmRules) add(p *peerGroup, rec *schema.Record, o orig, ok bool) {
	r.open()
	st, ok1 := o.num("info.timings.request_start", "timings.request_start", "request_start")
	ft, ok2 := o.num("info.timings.first_token_iteration", "timings.first_token_iteration", "first_token_iteration")
	lt, ok3 := o.num("info.timings.last_token_iteration", "timings.last_token_iteration", "last_token_iteration")
	et, ok4 := o.num("info.timings.request_end", "timings.request_end", "request_end")
	if ms, ok := o.num("measure_start_time", "scheduler_metrics.measure_start_time"); ok {
		if me, ok := o.num("measure_end_time", "scheduler_metrics.measure_end_time"); ok {
			r.measureStart, r.measureEnd, r.haveMeasure = ms, me, true
		}
	}
	n := o.numOr(float64(rec.OutputTokens), "output_tokens")
	in := o.numOr(float64(rec.InputTokens), "prompt_tokens")
	var ttft, lat, itl, tpotIncl float64
	if ok1 && ok2 && ok3 && ok4 {
		// get_within_range: a request counts when it overlaps the
		// measurement window (request_end ≥ measure_start and
		// request_start ≤ measure_end), not only when inside it.
		if r.haveMeasure && (et < r.measureStart || st > r.measureEnd) {
			return
		}
		p.span(st, et)
		// GuideLLM works in epoch seconds and reports ms metrics
		// (×1000); converted to ns in the same float64 steps.
		ttft = (ft - st) * 1000 * 1e6
		lat = (et - st) * 1e9
		if n > 1 {
			itl = (lt - ft) * 1000 / (n - 1) * 1e6
		}
		if n > 0 {
			// GuideLLM's TPOT includes the first token's wait.
			tpotIncl = (lt - st) * 1000 / n * 1e6
		}
	} else {
		F, L, okR := recFirstLast(rec)
		p.span(float64(rec.SentNS)/1e9, float64(rec.EndNS)/1e9)
		if !okR {
			return
		}
		ttft, lat = F, float64(rec.EndNS-rec.SentNS)
		if n > 1 {
			itl = (L - F) / (n - 1)
		}
		if n > 0 {
			tpotIncl = L / n
		}
	}
	if !ok {
		return
	}
	p.succ++
	p.outTok += int64(n)
	p.inTok += int64(n + in)
	if ok1 && ok2 && ok3 && ok4 {
		iters, _ := o.num("info.timings.token_iterations", "timings.token_iterations", "token_iterations")
		// Each iteration becomes an event: bounded by the output
		// tokens and the bytes kept (the importer refuses the same).
		if why := schema.IterationCountProblem(iters, n, len(rec.Orig)); why != "" {
			p.err = fmt.Errorf("orig info.timings.token_iterations: %s", why)
			return
		}
		r.events(et, ft, lt, true, iters, n, in)
	} else if p.ver.tokensAtLastChunk {
		// guidellm/2026.11 (versions.go): all n output tokens at the
		// last chunk, as GuideLLM places them when it counted at most
		// one iteration.
		F, L, _ := recFirstLast(rec)
		r.events(float64(rec.EndNS)/1e9, (float64(rec.SentNS)+F)/1e9, (float64(rec.SentNS)+L)/1e9, false, 0, n, in)
		r.fromRecords, r.atLastChunk = true, true
	} else {
		r.chunkEvents(rec, n, in)
	}
	r.ttft.add(glEvent{ttft, 1})
	r.e2e.add(glEvent{lat, 1})
	// ITL is None for ≤ 1 output token, and weighted by n − 1 (the gaps
	// it averages); TPOT by n.
	if n > 1 {
		r.itl.add(glEvent{itl, n - 1})
	}
	if n > 0 {
		r.tpot.add(glEvent{tpotIncl, n})
	}
	tp := math.NaN()
	if n > 1 {
		tp = itl
	}
	p.judge(ttft, lat, tp, n)
}

// events adds one successful request's events to GuideLLM's rate
// distributions (request_stats.py): its end (requests); its prompt tokens
// at the first token; its output tokens as one token at the first token
// iteration and (n − 1)/(iterations − 1) tokens at each of the other
// token iterations, spaced evenly up to the last one (GuideLLM stores no
// per-iteration times) — or all n at the last token when it counted at
// most one iteration. Times are epoch seconds.
func (r *guidellmRules) events(end, first, last float64, haveIters bool, iters, n, in float64) {
	r.glReq.add(glEvent{end, 1})
	r.glPrompt.add(glEvent{first, in})
	if !haveIters || iters <= 1 {
		r.glOut.add(glEvent{last, n})
		return
	}
	one := 0.0
	if n != 0 {
		one = 1
	}
	r.glOut.add(glEvent{first, one})
	if n > 1 {
		per := (n - 1.0) / (iters - 1.0)
		for _, t := range glLinspace(first, last, int(iters))[1:] {
			r.glOut.add(glEvent{t, per})
		}
	}
}

// chunkEvents adds the rate-distribution events of one successful
// request read from the records (a run that is not a GuideLLM import):
// its end, its prompt tokens at its first chunk, and each chunk's output
// tokens at that chunk's recorded arrival — chunk_tokens when given, else
// the n tokens spread over the chunks as tokenIndex numbers them. The
// records hold every chunk's time, so none of GuideLLM's evenly spaced
// placeholders (nor all n tokens at the last token) is needed. The caller
// has checked that the record has chunk times.
func (r *guidellmRules) chunkEvents(rec *schema.Record, n, in float64) {
	at := func(t int64) float64 { return float64(rec.SentNS+t) / 1e9 }
	r.glReq.add(glEvent{float64(rec.EndNS) / 1e9, 1})
	r.glPrompt.add(glEvent{at(rec.ChunksNS[0]), in})
	k := len(rec.ChunksNS)
	for j, t := range rec.ChunksNS {
		var c int64
		switch {
		case len(rec.ChunkTokens) == k:
			c = rec.ChunkTokens[j]
		case j == k-1:
			c = int64(n) - (tokenIndex(rec, j, 0) - 1)
		default:
			c = tokenIndex(rec, j+1, 0) - tokenIndex(rec, j, 0)
		}
		if rec.OutputTokens <= 0 {
			c = 0
		}
		r.glOut.add(glEvent{at(t), float64(c)})
	}
	r.fromRecords = true
}

func (r *guidellmRules) finish(p *peerGroup, pr *PointResult, g *group) {
	r.open()
	defer r.close()
	pr.Dists[schema.MetricTTFT] = r.valueDist(g, r.ttft)
	pr.Dists[schema.MetricE2E] = r.valueDist(g, r.e2e)
	pr.Dists[schema.MetricTPOT] = r.valueDist(g, r.itl)
	// GuideLLM keeps no chunk gaps.
	pr.Dists[schema.MetricITL] = emptyDist()
	if r.tpot.n > 0 {
		pr.Dists["time_per_output_token_ns"] = r.valueDist(g, r.tpot)
	}
	// duration = measure_end − measure_start, else the span of the
	// requests; epoch seconds, to ns. GuideLLM's own times (orig, read
	// only in a GuideLLM import) need no gate; the records' do: when
	// their send times were not measured, the window is the gate's and
	// the rate distributions, built from the requests' times, are null.
	dur := math.NaN()
	noTimes := ""
	switch {
	case r.haveMeasure:
		dur = (r.measureEnd - r.measureStart) * 1e9
	case g.cfg.gate.windowUnmeasured():
		dur = p.gated(pr, g)
		noTimes = "GuideLLM's rates are distributions over the requests' own times: " + g.cfg.gate.windowReason
	case p.haveSE:
		dur = (p.end - p.start) * 1e9
	}
	p.throughputs(pr, dur)
	// GuideLLM's *_per_second: means of its rate distributions.
	// Requests are counted at their end inside the measurement window;
	// token events are not cut to it.
	ms, me := p.start, p.end
	if r.haveMeasure {
		ms, me = r.measureStart, r.measureEnd
	}
	// Token events read from the records' chunk times need those times
	// measured: when the source did not (the gate's itl_ns reason), the
	// token rate distributions are null with that reason.
	noChunks := ""
	if gt := g.cfg.gate; r.fromRecords && gt != nil && r.atLastChunk && gt.fieldReasons[schema.MetricTPOT] != "" {
		// guidellm/2026.11 reads only the first and last chunk.
		noChunks = "GuideLLM's token rates place a request's tokens at its first and last chunk: " + gt.fieldReasons[schema.MetricTPOT]
	} else if gt != nil && r.fromRecords && !r.atLastChunk && gt.fieldReasons[schema.MetricITL] != "" {
		noChunks = "GuideLLM's token rates place each chunk's tokens at its arrival: " + gt.fieldReasons[schema.MetricITL]
	}
	for _, x := range []struct {
		dist, scalar string
		d            Dist
	}{
		{"requests_per_second", schema.MetricRequestThroughput, r.rateDist(g, ms, me, r.haveMeasure || p.haveSE, r.glReq)},
		{"output_tokens_per_second", schema.MetricOutputTokenThroughput, r.rateDist(g, 0, 0, false, r.glOut)},
		{"tokens_per_second", schema.MetricTotalTokenThroughput, r.rateDist(g, 0, 0, false, r.glPrompt, r.glOut)},
		{"prompt_tokens_per_second", "", r.rateDist(g, 0, 0, false, r.glPrompt)},
	} {
		pr.Dists[x.dist] = x.d
		if x.scalar != "" {
			pr.Scalars[x.scalar] = x.d.Mean
		}
		why := noTimes
		if why == "" && x.dist != "requests_per_second" {
			why = noChunks
		}
		if why != "" {
			setNull(pr, x.dist, why)
			if x.scalar != "" {
				setNull(pr, x.scalar, why)
			}
		}
	}
	p.goodput(pr, dur, p.sent)
}

// open makes the streams on the first record.
func (r *guidellmRules) open() {
	if r.glReq == nil {
		r.glReq, r.glOut, r.glPrompt = newGLStream(), newGLStream(), newGLStream()
		r.ttft, r.e2e, r.itl, r.tpot = newGLValues(), newGLValues(), newGLValues(), newGLValues()
	}
}

// valueDist is glValueDistStream of s; a read error fails the replay.
func (r *guidellmRules) valueDist(g *group, s *glStream) Dist {
	d, err := glValueDistStream(s)
	if err != nil && g.spillErr == nil {
		g.spillErr = err
	}
	return d
}

// rateDist is glRateDistStreams of ss; a read error fails the replay
// (g.spillErr, reported by finishGroups).
func (r *guidellmRules) rateDist(g *group, start, end float64, bounded bool, ss ...*glStream) Dist {
	d, err := glRateDistStreams(ss, start, end, bounded)
	if err != nil && g.spillErr == nil {
		g.spillErr = err
	}
	return d
}

// close removes the rate events' files (a first pass's rules are never
// finished: accumulated.close).
func (r *guidellmRules) close() {
	for _, s := range []*glStream{r.glReq, r.glOut, r.glPrompt, r.ttft, r.e2e, r.itl, r.tpot} {
		s.close()
	}
}
