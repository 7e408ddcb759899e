package replay

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// orig is a decoded record.orig object.
type orig map[string]any

func parseOrig(raw json.RawMessage) orig {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// get walks a dotted path.
func (o orig) get(path string) (any, bool) {
	var cur any = map[string]any(o)
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func toFloat(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil
}

// num returns the first of paths holding a number.
func (o orig) num(paths ...string) (float64, bool) {
	if o == nil {
		return 0, false
	}
	for _, p := range paths {
		if v, ok := o.get(p); ok {
			if f, ok := toFloat(v); ok {
				return f, true
			}
		}
	}
	return 0, false
}

// integer returns the first of paths holding an integer (epoch ns
// timestamps lose precision as float64).
func (o orig) integer(paths ...string) (int64, bool) {
	if o == nil {
		return 0, false
	}
	for _, p := range paths {
		if v, ok := o.get(p); ok {
			if n, ok := v.(json.Number); ok {
				if i, err := n.Int64(); err == nil {
					return i, true
				}
			}
		}
	}
	return 0, false
}

// list returns the first of paths holding a list of numbers.
func (o orig) list(paths ...string) ([]float64, bool) {
	if o == nil {
		return nil, false
	}
	for _, p := range paths {
		v, ok := o.get(p)
		if !ok {
			continue
		}
		arr, ok := v.([]any)
		if !ok {
			continue
		}
		out := make([]float64, 0, len(arr))
		for _, x := range arr {
			f, ok := toFloat(x)
			if !ok {
				return nil, false
			}
			out = append(out, f)
		}
		return out, true
	}
	return nil, false
}

// present reports whether a path exists with a non-null value.
func (o orig) present(path string) bool {
	v, ok := o.get(path)
	return ok && v != nil
}

// aiperfFields offers use the value under "metrics.TAG", then under "TAG",
// with its unit: AIPerf writes {value, unit}, or a bare value in ms. It
// stops at the first value use accepts and reports whether one was.
func (o orig) aiperfFields(tag string, use func(v any, unit string) bool) bool {
	if o == nil {
		return false
	}
	for _, base := range []string{"metrics." + tag, tag} {
		v, ok := o.get(base)
		if !ok {
			continue
		}
		unit := "ms"
		if m, ok := v.(map[string]any); ok {
			if u, ok := m["unit"].(string); ok {
				unit = u
			}
			v = m["value"]
		}
		if use(v, unit) {
			return true
		}
	}
	return false
}

// aiperfMetric reads an AIPerf record metric in ns. Integral-ns metrics
// are rounded back to the integer ns AIPerf measured.
func (o orig) aiperfMetric(tag string, integral bool) (float64, bool) {
	var out float64
	ok := o.aiperfFields(tag, func(v any, unit string) bool {
		f, ok := toFloat(v)
		if !ok {
			return false
		}
		out = f * unitNS(unit)
		if integral {
			out = math.Round(out)
		}
		return true
	})
	return out, ok
}

// aiperfList reads an AIPerf list metric (e.g. inter-chunk latencies) in
// integer ns. An element that is not a number makes the whole list unread.
func (o orig) aiperfList(tag string) ([]float64, bool) {
	var out []float64
	bad := false
	o.aiperfFields(tag, func(v any, unit string) bool {
		arr, ok := v.([]any)
		if !ok {
			return false
		}
		out = make([]float64, 0, len(arr))
		for _, x := range arr {
			f, ok := toFloat(x)
			if !ok {
				bad = true
				return true
			}
			out = append(out, math.Round(f*unitNS(unit)))
		}
		return true
	})
	if bad || out == nil {
		return nil, false
	}
	return out, true
}

func unitNS(u string) float64 {
	switch u {
	case "ns":
		return 1
	case "us":
		return 1e3
	case "s", "sec":
		return 1e9
	}
	return 1e6
}

// peerGroup accumulates one point and repeat under a peer definition, in
// float64 ns (or integer ns for mlperf), the way that tool computes.
type peerGroup struct {
	def                      *Definition
	ttft, e2e, tpot, itl     []float64
	tpotW                    []float64
	extra                    map[string][]float64
	extraW                   map[string][]float64
	succ, good, sent         int64
	outTok, inTok            int64   // inTok: input + output tokens (total-token throughput)
	start, end               float64 // ns, absolute
	haveSE                   bool
	duration                 float64 // ns, from orig (run-level)
	measureStart, measureEnd float64
	haveMeasure              bool
	mlTTFT, mlE2E, mlTPOT    intSamples
	glReq, glOut, glPrompt   []glEvent // GuideLLM rate-distribution events
	startNS, endNS           int64     // AIPerf epoch-ns timestamps, exact
	haveNS                   bool
	// noWindow says why the records give no window ("" when they do).
	noWindow string
	notes    map[string]bool
	slo      SLOSpec
}

func newPeerGroup(def *Definition) *peerGroup {
	return &peerGroup{def: def, extra: map[string][]float64{}, extraW: map[string][]float64{}, notes: map[string]bool{}}
}

func (p *peerGroup) span(s, e float64) {
	if math.IsNaN(s) || math.IsNaN(e) {
		return
	}
	if !p.haveSE || s < p.start {
		p.start = s
	}
	if !p.haveSE || e > p.end {
		p.end = e
	}
	p.haveSE = true
}

// fallback values from the integer record fields, in ns.
func recFirstLast(rec *schema.Record) (F, L float64, ok bool) {
	if len(rec.ChunksNS) == 0 {
		return 0, 0, false
	}
	return float64(rec.ChunksNS[0]), float64(rec.ChunksNS[len(rec.ChunksNS)-1]), true
}

func recGaps(rec *schema.Record) []float64 {
	var g []float64
	for j := 1; j < len(rec.ChunksNS); j++ {
		g = append(g, float64(rec.ChunksNS[j]-rec.ChunksNS[j-1]))
	}
	return g
}

func (p *peerGroup) add(rec *schema.Record) error {
	p.sent++
	o := parseOrig(rec.Orig)
	ok := rec.Status == schema.StatusOK
	nan := math.NaN()
	switch p.def.Name {
	case "aiperf", "genai-perf":
		p.span(float64(rec.SentNS), float64(rec.SentNS)+lastOr(rec, 0))
		if !ok || (o != nil && o.present("error")) {
			return nil
		}
		// AIPerf's TTFT tag: "time_to_first_token" since Oct 2025
		// (ai-dynamo/aiperf PR #343), "ttft" before.
		ttft, okT := o.aiperfMetric("time_to_first_token", true)
		if !okT {
			ttft, okT = o.aiperfMetric("ttft", true)
		}
		lat, okL := o.aiperfMetric("request_latency", true)
		F, L, okR := recFirstLast(rec)
		if !okT {
			ttft, okT = F, okR
		}
		if !okL {
			lat, okL = L, okR
		}
		if !okT || !okL {
			return nil
		}
		p.succ++
		osl := float64(rec.OutputTokens)
		if v, ok := o.num("metrics.output_sequence_length.value", "output_sequence_length"); ok {
			osl = v
		}
		p.ttft = append(p.ttft, ttft)
		p.e2e = append(p.e2e, lat)
		tp := nan
		if osl >= 2 {
			if v, ok := o.aiperfMetric("inter_token_latency", false); ok && p.def.Name == "aiperf" {
				tp = v
			} else {
				tp = (lat - ttft) / (osl - 1)
				if p.def.Name == "genai-perf" {
					tp = math.RoundToEven(tp)
				}
			}
			p.tpot = append(p.tpot, tp)
		}
		if g, ok := o.aiperfList("inter_chunk_latency"); ok {
			p.itl = append(p.itl, g...)
		} else {
			p.itl = append(p.itl, recGaps(rec)...)
		}
		p.outTok += int64(osl)
		isl := float64(rec.InputTokens)
		if v, ok := o.num("metrics.input_sequence_length.value", "input_sequence_length"); ok {
			isl = v
		}
		p.inTok += int64(isl) + int64(osl) // total tokens: input + output
		if s, ok := o.integer("metrics.min_request_timestamp.value", "min_request_timestamp"); ok {
			if e, ok := o.integer("metrics.max_response_timestamp.value", "max_response_timestamp"); ok {
				if !p.haveNS || s < p.startNS {
					p.startNS = s
				}
				if !p.haveNS || e > p.endNS {
					p.endNS = e
				}
				p.haveNS = true
			}
		}
		p.judge(ttft, lat, tp, osl, schema.OneTokenFail)
	case "vllm", "sglang":
		if d, ok := o.num("duration"); ok {
			p.duration = d * 1e9
		}
		p.span(float64(rec.SentNS), float64(rec.EndNS))
		if !ok || (o != nil && o.present("error") && o["error"] != "") || (o != nil && o["success"] == false) {
			return nil
		}
		F, L, okR := recFirstLast(rec)
		ttft, okT := o.num("ttft")
		if okT {
			ttft *= 1e9
		} else if okR {
			ttft, okT = F, true
		}
		if !okT {
			return nil
		}
		p.succ++
		lat := nan
		if v, ok := o.num("latency", "e2e_latency"); ok {
			lat = v * 1e9
		} else if o == nil && okR {
			lat = L
		} else if o != nil {
			p.notes["no-latency"] = true
		}
		n := float64(rec.OutputTokens)
		if v, ok := o.num("output_len"); ok {
			n = v
		}
		in := float64(rec.InputTokens)
		if v, ok := o.num("input_len"); ok {
			in = v
		}
		p.outTok += int64(n)
		p.inTok += int64(n) + int64(in)
		p.ttft = append(p.ttft, ttft)
		if !math.IsNaN(lat) {
			p.e2e = append(p.e2e, lat)
		}
		tp := 0.0 // vLLM: tpot 0 for goodput when output_len ≤ 1
		if n > 1 && !math.IsNaN(lat) {
			tp = (lat - ttft) / (n - 1)
			p.tpot = append(p.tpot, tp)
		} else if n > 1 {
			tp = nan
		}
		if g, ok := o.list("itl"); ok {
			for _, x := range g {
				p.itl = append(p.itl, x*1e9)
			}
		} else if o == nil {
			p.itl = append(p.itl, recGaps(rec)...)
		}
		p.judge(ttft, lat, tp, 2, schema.OneTokenPass)
	case "llmperf":
		p.span(float64(rec.SentNS), float64(rec.EndNS))
		if !ok || (o != nil && o.present("error_code")) {
			return nil
		}
		F, L, okR := recFirstLast(rec)
		ttft, okT := o.num("ttft_s")
		if okT {
			ttft *= 1e9
		} else if okR {
			ttft, okT = F, true
		}
		e2e, okE := o.num("end_to_end_latency_s")
		if okE {
			e2e *= 1e9
		} else if okR {
			e2e, okE = L, true
		}
		if !okT || !okE {
			return nil
		}
		p.succ++
		n := float64(rec.OutputTokens)
		if v, ok := o.num("number_output_tokens"); ok {
			n = v
		}
		itl, okI := o.num("inter_token_latency_s")
		if okI {
			itl *= 1e9
		} else if n > 0 {
			itl = L / n
		}
		p.ttft = append(p.ttft, ttft)
		p.e2e = append(p.e2e, e2e)
		if okI || n > 0 {
			p.extra["inter_token_latency_ns"] = append(p.extra["inter_token_latency_ns"], itl)
		}
		in := float64(rec.InputTokens)
		if v, ok := o.num("number_input_tokens"); ok {
			in = v
		}
		p.outTok += int64(n)
		p.inTok += int64(n + in)
		tp := nan
		if n >= 2 {
			tp = (e2e - ttft) / (n - 1)
		}
		p.judge(ttft, e2e, tp, n, "")
	case "guidellm":
		st, ok1 := o.num("info.timings.request_start", "timings.request_start", "request_start")
		ft, ok2 := o.num("info.timings.first_token_iteration", "timings.first_token_iteration", "first_token_iteration")
		lt, ok3 := o.num("info.timings.last_token_iteration", "timings.last_token_iteration", "last_token_iteration")
		et, ok4 := o.num("info.timings.request_end", "timings.request_end", "request_end")
		if ms, ok := o.num("measure_start_time", "scheduler_metrics.measure_start_time"); ok {
			if me, ok := o.num("measure_end_time", "scheduler_metrics.measure_end_time"); ok {
				p.measureStart, p.measureEnd, p.haveMeasure = ms, me, true
			}
		}
		n := float64(rec.OutputTokens)
		if v, ok := o.num("output_tokens"); ok {
			n = v
		}
		in := float64(rec.InputTokens)
		if v, ok := o.num("prompt_tokens"); ok {
			in = v
		}
		var ttft, lat, itl, tpotIncl float64
		if ok1 && ok2 && ok3 && ok4 {
			// GuideLLM works in epoch seconds; ms metrics are ×1000.
			if p.haveMeasure && (et < p.measureStart || st > p.measureEnd) {
				return nil
			}
			p.span(st, et)
			ttft = (ft - st) * 1000 * 1e6
			lat = (et - st) * 1e9
			if n > 1 {
				itl = (lt - ft) * 1000 / (n - 1) * 1e6
			}
			if n > 0 {
				tpotIncl = (lt - st) * 1000 / n * 1e6
			}
		} else {
			F, L, okR := recFirstLast(rec)
			p.span(float64(rec.SentNS)/1e9, float64(rec.EndNS)/1e9)
			if !okR {
				return nil
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
			return nil
		}
		p.succ++
		p.outTok += int64(n)
		p.inTok += int64(n + in)
		if ok1 && ok2 && ok3 && ok4 {
			iters, _ := o.num("info.timings.token_iterations", "timings.token_iterations", "token_iterations")
			p.glEvents(et, ft, lt, true, iters, n, in)
		} else if F, L, okR := recFirstLast(rec); okR {
			p.glEvents(float64(rec.EndNS)/1e9, (float64(rec.SentNS)+F)/1e9, (float64(rec.SentNS)+L)/1e9, false, 0, n, in)
		}
		p.ttft = append(p.ttft, ttft)
		p.e2e = append(p.e2e, lat)
		if n > 1 {
			p.tpot = append(p.tpot, itl)
			p.tpotW = append(p.tpotW, n-1)
		}
		if n > 0 {
			p.extra["time_per_output_token_ns"] = append(p.extra["time_per_output_token_ns"], tpotIncl)
			p.extraW["time_per_output_token_ns"] = append(p.extraW["time_per_output_token_ns"], n)
		}
		tp := nan
		if n > 1 {
			tp = itl
		}
		p.judge(ttft, lat, tp, n, "")
	case "mlperf":
		p.span(float64(rec.SentNS), float64(rec.SentNS)+lastOr(rec, 0))
		if !ok || len(rec.ChunksNS) == 0 {
			return nil
		}
		p.succ++
		origin := rec.SentNS
		if rec.ScheduledNS != nil {
			origin = *rec.ScheduledNS
		}
		first := rec.SentNS + rec.ChunksNS[0] - origin
		last := rec.SentNS + rec.ChunksNS[len(rec.ChunksNS)-1] - origin
		p.mlTTFT.add(first)
		p.mlE2E.add(last)
		n := rec.OutputTokens
		p.outTok += n
		p.inTok += n + rec.InputTokens
		tp := math.NaN()
		if n >= 2 {
			t := (last - first) / (n - 1)
			p.mlTPOT.add(t)
			tp = float64(t)
		}
		p.judge(float64(first), float64(last), tp, float64(n), schema.OneTokenFail)
	case "inference-perf":
		p.span(float64(rec.SentNS), float64(rec.EndNS))
		if !ok || len(rec.ChunksNS) == 0 {
			return nil
		}
		p.succ++
		F, L, _ := recFirstLast(rec)
		n := rec.OutputTokens
		p.ttft = append(p.ttft, F)
		p.e2e = append(p.e2e, float64(rec.EndNS-rec.SentNS))
		tp := math.NaN()
		if n >= 2 {
			tp = (L - F) / float64(n-1)
			p.tpot = append(p.tpot, tp)
		}
		if n >= 1 {
			// NTPOT: (end − start)/N, the request's whole latency per token.
			p.extra["normalized_time_per_output_token_ns"] = append(p.extra["normalized_time_per_output_token_ns"], float64(rec.EndNS-rec.SentNS)/float64(n))
		}
		// Per-token gaps: each token carries its chunk's time.
		var prev float64
		var have bool
		var cum int64
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
					p.itl = append(p.itl, float64(t)-prev)
				}
				prev, have = float64(t), true
			}
			cum += cnt
		}
		p.outTok += n
		p.inTok += n + rec.InputTokens
		p.judge(F, float64(rec.EndNS-rec.SentNS), tp, float64(n), schema.OneTokenFail)
	}
	return nil
}

// glEvents adds one successful request's events to GuideLLM's rate
// distributions (request_stats.py): its end (requests); its prompt tokens
// at the first token; its output tokens as one token at the first token
// iteration and (n − 1)/(iterations − 1) tokens at each of the other
// token iterations, spaced evenly up to the last one (GuideLLM stores no
// per-iteration times) — or all n at the last token when it counted at
// most one iteration. Times are epoch seconds.
func (p *peerGroup) glEvents(end, first, last float64, haveIters bool, iters, n, in float64) {
	p.glReq = append(p.glReq, glEvent{end, 1})
	p.glPrompt = append(p.glPrompt, glEvent{first, in})
	if !haveIters || iters <= 1 {
		p.glOut = append(p.glOut, glEvent{last, n})
		return
	}
	one := 0.0
	if n != 0 {
		one = 1
	}
	p.glOut = append(p.glOut, glEvent{first, one})
	if n > 1 {
		per := (n - 1.0) / (iters - 1.0)
		for _, t := range glLinspace(first, last, int(iters))[1:] {
			p.glOut = append(p.glOut, glEvent{t, per})
		}
	}
}

func lastOr(rec *schema.Record, d float64) float64 {
	if len(rec.ChunksNS) == 0 {
		return d
	}
	return float64(rec.ChunksNS[len(rec.ChunksNS)-1])
}

// judge applies the SLO to one successful request's tool values; policy
// overrides the one-token policy ("" keeps the SLO's).
func (p *peerGroup) judge(ttft, e2e, tpot, n float64, policy string) {
	s := p.slo
	if !s.Any() {
		return
	}
	if policy == "" {
		policy = s.OneToken
	}
	if s.TTFTNS != nil && !(ttft <= float64(*s.TTFTNS)) {
		return
	}
	if s.E2ENS != nil && !(e2e <= float64(*s.E2ENS)) {
		return
	}
	if s.TPOTNS != nil {
		if math.IsNaN(tpot) {
			if n >= 2 || policy != schema.OneTokenPass {
				return
			}
		} else if !(tpot <= float64(*s.TPOTNS)) {
			return
		}
	}
	p.good++
}

func (p *peerGroup) finish(pr *PointResult, g *group) {
	switch p.def.Name {
	case "mlperf":
		pr.Dists["ttft_ns"] = mlperfDist(&p.mlTTFT)
		pr.Dists["e2e_ns"] = mlperfDist(&p.mlE2E)
		pr.Dists["tpot_ns"] = mlperfDist(&p.mlTPOT)
		pr.Dists["itl_ns"] = intDist(&g.itl)
	case "guidellm":
		ones := func(n int) []float64 {
			w := make([]float64, n)
			for i := range w {
				w[i] = 1
			}
			return w
		}
		pr.Dists["ttft_ns"] = glValueDist(p.ttft, ones(len(p.ttft)))
		pr.Dists["e2e_ns"] = glValueDist(p.e2e, ones(len(p.e2e)))
		pr.Dists["tpot_ns"] = glValueDist(p.tpot, p.tpotW)
		pr.Dists["itl_ns"] = emptyDist()
		for k, v := range p.extra {
			pr.Dists[k] = glValueDist(v, p.extraW[k])
		}
	case "llmperf":
		pr.Dists["ttft_ns"] = pandasDist(p.ttft)
		pr.Dists["e2e_ns"] = pandasDist(p.e2e)
		pr.Dists["tpot_ns"] = emptyDist()
		pr.Dists["itl_ns"] = emptyDist()
		for k, v := range p.extra {
			pr.Dists[k] = pandasDist(v)
		}
	default:
		pr.Dists["ttft_ns"] = floatDist(p.ttft, 0)
		pr.Dists["e2e_ns"] = floatDist(p.e2e, 0)
		pr.Dists["tpot_ns"] = floatDist(p.tpot, 0)
		pr.Dists["itl_ns"] = floatDist(p.itl, 0)
		for k, v := range p.extra {
			pr.Dists[k] = floatDist(v, 0)
		}
		if p.def.Name == "inference-perf" {
			// inference-perf reports no standard deviation.
			for k, d := range pr.Dists {
				if k == "ttft_ns" || k == "e2e_ns" || k == "tpot_ns" || k == "itl_ns" || p.extra[k] != nil {
					d.Stddev = Null
					pr.Dists[k] = d
				}
			}
		}
	}
	// Window and rates, in float64 as the tools compute them. A window
	// the records give (mlperf, or the span of the records' times) is
	// taken through the gate: the tool's stored window, or none, when the
	// send times were not measured.
	dur := math.NaN()
	gated := func() float64 {
		w, ok, src, why := g.cfg.gate.window(groupKey{pr.Point, pr.Repeat}, g)
		pr.WindowSource, p.noWindow = src, why
		if !ok {
			return math.NaN()
		}
		return float64(w)
	}
	switch {
	case p.def.Name == "mlperf":
		dur = gated() // integer ns
		if dur > 0 {
			pr.Scalars["window_ns"] = Int(int64(dur))
		}
	case p.haveNS:
		dur = float64(p.endNS - p.startNS)
	case p.duration > 0:
		dur = p.duration
	case p.haveMeasure && p.def.Name == "guidellm":
		dur = (p.measureEnd - p.measureStart) * 1e9
	case p.haveMeasure:
		dur = p.measureEnd - p.measureStart
	case p.haveSE && p.def.Name == "guidellm":
		dur = (p.end - p.start) * 1e9
	case p.haveSE:
		dur = p.end - p.start
		if g.cfg.gate.windowUnmeasured() {
			dur = gated()
		}
	}
	if p.def.Name != "mlperf" {
		pr.Scalars["window_ns"] = Float(dur)
	}
	rate := func(x float64) Value {
		if !(dur > 0) {
			return Null
		}
		return Float(x / (dur / 1e9))
	}
	if p.def.Name == "mlperf" {
		if dur > 0 && p.succ > 0 {
			pr.Scalars["request_throughput"] = Exact(big.NewRat((p.succ-1)*1e9, int64(dur)))
		} else {
			pr.Scalars["request_throughput"] = Null
		}
	} else {
		pr.Scalars["request_throughput"] = rate(float64(p.succ))
	}
	pr.Scalars["output_token_throughput"] = rate(float64(p.outTok))
	pr.Scalars["total_token_throughput"] = rate(float64(p.inTok))
	if p.def.Name == "guidellm" {
		// GuideLLM's *_per_second: means of its rate distributions.
		// Requests are counted at their end inside the measurement window;
		// token events are not cut to it.
		ms, me := p.start, p.end
		if p.haveMeasure {
			ms, me = p.measureStart, p.measureEnd
		}
		total := append(slices.Clone(p.glPrompt), p.glOut...)
		for _, r := range []struct {
			dist, scalar string
			d            Dist
		}{
			{"requests_per_second", "request_throughput", glRateDist(p.glReq, ms, me, p.haveMeasure || p.haveSE)},
			{"output_tokens_per_second", "output_token_throughput", glRateDist(p.glOut, 0, 0, false)},
			{"tokens_per_second", "total_token_throughput", glRateDist(total, 0, 0, false)},
			{"prompt_tokens_per_second", "", glRateDist(p.glPrompt, 0, 0, false)},
		} {
			pr.Dists[r.dist] = r.d
			if r.scalar != "" {
				pr.Scalars[r.scalar] = r.d.Mean
			}
		}
	}
	if p.slo.Any() {
		pr.Scalars["goodput"] = rate(float64(p.good))
		den := p.sent
		if p.def.Name == "inference-perf" {
			den = p.succ
		}
		if den > 0 {
			pr.Scalars["slo_attainment"] = Float(float64(p.good) / float64(den))
		} else {
			pr.Scalars["slo_attainment"] = Null
		}
		if p.succ > 0 {
			pr.Scalars["slo_attainment_ok"] = Float(float64(p.good) / float64(p.succ))
		} else {
			pr.Scalars["slo_attainment_ok"] = Null
		}
		pr.Counts.Good = p.good
		pr.Scalars["token_goodput"] = Null
	}
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

func (p *peerGroup) notesList() []string {
	var out []string
	if p.notes["no-latency"] {
		out = append(out, p.def.Name+": per-request latency not stored by this tool version: e2e and tpot not recomputable")
	}
	return out
}
