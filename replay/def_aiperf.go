package replay

import (
	"fmt"
	"math"

	"github.com/benchseal/benchseal/schema"
)

// aiperfDef is NVIDIA AIPerf's definitions (github.com/ai-dynamo/aiperf;
// docs/replay.md, "Peer definitions", gives each formula).
var aiperfDef = &aiperfDefinition{info: info{
	tool:    schema.AIPerf,
	summary: "NVIDIA AIPerf: ITL = (latency − TTFT)/(OSL − 1) (→ " + schema.MetricTPOT + "), inter-chunk latency (→ " + schema.MetricITL + "), numpy linear, ddof 0",
	help: `Valid (non-error) records only. ttft = first content response − request start; request_latency = last content response −
start; inter_token_latency = (request_latency − ttft)/(OSL − 1), none for OSL < 2 (reported as ` + schema.MetricTPOT + `); inter_chunk_latency =
pooled content-chunk gaps (` + schema.MetricITL + `); benchmark_duration = max response timestamp − min request timestamp; throughputs = totals
÷ duration (float64), ` + schema.MetricTotalTokenThroughput + ` counting input + output tokens; a time-based run (1.x summary,
--benchmark-duration) divides its rates and goodput by the profiling phase instead, end_time − start_time of the
summary (grace period included; stored by the import as the tool's window, the tool's word). Percentiles numpy linear, mean/std numpy (ddof 0) in float64. orig (read only in an AIPerf import): metrics {tag: {value, unit}} as AIPerf
wrote them (ms), min_request_timestamp/max_response_timestamp (ns). A one-token answer fails a TPOT (ITL) limit, whatever the SLO states;
` + schema.MetricSLOAttainment + ` = good ÷ (valid + error) records. Extra distributions from each valid record's own metric (numpy, ddof 0):
time_to_second_token_ns (second − first response, ns), output_token_throughput_per_user (tokens/s/user),
input_sequence_length and output_sequence_length (tokens).`,
	meanings: map[string]string{
		schema.MetricTPOT: "tpot = (request latency − TTFT) ÷ (output tokens − 1), per request (AIPerf's inter_token_latency)",
		schema.MetricITL:  "itl = gaps between content chunks, pooled (AIPerf's inter_chunk_latency)",
	},
	oneToken:     schema.OneTokenFail,
	oneTokenRule: "AIPerf gives a one-token answer no inter_token_latency, so it fails an ITL (TPOT) limit",
	aliases:      map[string]string{"time_to_first_token": schema.MetricTTFT, "ttft": schema.MetricTTFT, "request_latency": schema.MetricE2E, "inter_token_latency": schema.MetricTPOT, "inter_chunk_latency": schema.MetricITL, "request_throughput": schema.MetricRequestThroughput, "output_token_throughput": schema.MetricOutputTokenThroughput, "benchmark_duration": schema.MetricWindow, "goodput": schema.MetricGoodput, "total_token_throughput": schema.MetricTotalTokenThroughput, "time_to_second_token": "time_to_second_token_ns", "ttst": "time_to_second_token_ns"},
}, storedITL: true, perRecord: true, phaseWindow: true}

// aiperfDefinition is AIPerf's, or (roundITL) GenAI-Perf's, which AIPerf
// replaced and whose per-request file it reads the same way.
type aiperfDefinition struct {
	info
	// storedITL: AIPerf's inter_token_latency as it stored it is used
	// when present (GenAI-Perf recomputes it).
	storedITL bool
	// roundITL: GenAI-Perf rounds the ITL to integer ns.
	roundITL bool
	// perRecord: the extra distributions of AIPerf's own per-record
	// metrics (schema.AIPerf.ExtraDists) are computed.
	perRecord bool
	// phaseWindow: the rates of a point whose AIPerf import stored the
	// profiling phase's window (a time-based run) are over that window.
	phaseWindow bool
}

func init() { register(aiperfDef) }

func (d *aiperfDefinition) peerRules() peerRules {
	r := &aiperfRules{storedITL: d.storedITL, roundITL: d.roundITL, phaseWindow: d.phaseWindow}
	if d.perRecord {
		r.extra = map[string][]float64{}
	}
	return r
}

type aiperfRules struct {
	floatSamples
	storedITL, roundITL bool
	phaseWindow         bool
	startNS, endNS      int64 // AIPerf epoch-ns timestamps, exact
	haveNS              bool
	// extra holds the samples of the extra distributions by name (nil:
	// not computed, GenAI-Perf).
	extra map[string][]float64
}

func (a *aiperfRules) add(p *peerGroup, rec *schema.Record, o orig, ok bool) {
	p.span(float64(rec.SentNS), float64(rec.SentNS)+lastOr(rec, 0))
	// Error records are not valid records: they enter no statistic, only
	// the attainment denominator (AIPerf's good_request_fraction is
	// good_request_count ÷ (request_count + error_request_count):
	// ai-dynamo/aiperf, GoodRequestFractionMetric).
	if !ok || (o != nil && o.present("error")) {
		return
	}
	// AIPerf's TTFT tag: "time_to_first_token" since Oct 2025
	// (ai-dynamo/aiperf PR #343), "ttft" before. Its latencies are
	// integer ns (perf_ns differences) written in ms: rounded back.
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
		return
	}
	p.succ++
	osl := o.numOr(float64(rec.OutputTokens), "metrics.output_sequence_length.value", "output_sequence_length")
	a.ttft = append(a.ttft, ttft)
	a.e2e = append(a.e2e, lat)
	// ITL needs OSL ≥ 2: AIPerf gives a one-token answer NoMetricValue
	// (excluded), so it fails an ITL limit (missing value ⇒ not good).
	tp := math.NaN()
	if osl >= 2 {
		if v, ok := o.aiperfMetric("inter_token_latency", false); ok && a.storedITL {
			tp = v
		} else {
			tp = (lat - ttft) / (osl - 1)
			if a.roundITL {
				// GenAI-Perf: Python round(), half to even
				// (triton-inference-server/perf_analyzer,
				// genai-perf/genai_perf/profile_data_parser/llm_profile_data_parser.py).
				tp = math.RoundToEven(tp)
			}
		}
		a.tpot = append(a.tpot, tp)
	}
	if g, ok := o.aiperfList("inter_chunk_latency"); ok {
		a.itl = append(a.itl, g...)
	} else {
		a.itl = append(a.itl, recGaps(rec)...)
	}
	p.outTok += int64(osl)
	isl := o.numOr(float64(rec.InputTokens), "metrics.input_sequence_length.value", "input_sequence_length")
	p.inTok += int64(isl) + int64(osl) // total tokens: input + output
	if a.extra != nil {
		a.addExtras(o, isl, osl)
	}
	if s, ok := o.integer("metrics.min_request_timestamp.value", "min_request_timestamp"); ok {
		if e, ok := o.integer("metrics.max_response_timestamp.value", "max_response_timestamp"); ok {
			if !a.haveNS || s < a.startNS {
				a.startNS = s
			}
			if !a.haveNS || e > a.endNS {
				a.endNS = e
			}
			a.haveNS = true
		}
	}
	p.judge(ttft, lat, tp, osl)
}

// addExtras adds a valid record's own time_to_second_token (tag "ttst"
// before Oct 2025), output_token_throughput_per_user (none for a record
// that lacks them: AIPerf gives those NoMetricValue), and its ISL and OSL.
func (a *aiperfRules) addExtras(o orig, isl, osl float64) {
	if v, ok := o.aiperfMetric("time_to_second_token", true); ok {
		a.extra["time_to_second_token_ns"] = append(a.extra["time_to_second_token_ns"], v)
	} else if v, ok := o.aiperfMetric("ttst", true); ok {
		a.extra["time_to_second_token_ns"] = append(a.extra["time_to_second_token_ns"], v)
	}
	if v, ok := o.aiperfValue("output_token_throughput_per_user"); ok {
		a.extra["output_token_throughput_per_user"] = append(a.extra["output_token_throughput_per_user"], v)
	}
	a.extra["input_sequence_length"] = append(a.extra["input_sequence_length"], isl)
	a.extra["output_sequence_length"] = append(a.extra["output_sequence_length"], osl)
}

func (a *aiperfRules) finish(p *peerGroup, pr *PointResult, g *group) {
	a.numpyDists(pr)
	for k, xs := range a.extra {
		pr.Dists[k] = floatDist(xs, 0)
	}
	// benchmark_duration = max_response_timestamp − min_request_timestamp
	// (epoch ns, exact as integers) when the records carry them, else the
	// span of the records' times.
	var dur float64
	if a.haveNS {
		dur = float64(a.endNS - a.startNS)
	} else {
		dur = p.spanWindow(pr, g)
	}
	rateDur, why := a.rateWindow(p, pr, dur)
	p.throughputs(pr, rateDur)
	pr.Scalars[schema.MetricWindow] = Float(dur)
	p.goodput(pr, rateDur, p.sent)
	if why != "" {
		for _, k := range []string{schema.MetricRequestThroughput, schema.MetricOutputTokenThroughput, schema.MetricTotalTokenThroughput, schema.MetricGoodput} {
			if _, ok := pr.Scalars[k]; ok {
				setNull(pr, k, why)
			}
		}
	}
}

// rateWindow is the window a time-based AIPerf run divides its rates by:
// the profiling phase, end_time − start_time of its summary, which its
// import stores as the tool's window (importer/aiperf/window.go gives
// AIPerf's rule). Every other run's rates are over benchmark_duration
// (dur). The stated phase is the tool's word: it is labelled so, and one
// shorter than the records' own span (which it holds) gives no rate, with
// the reason.
func (a *aiperfRules) rateWindow(p *peerGroup, pr *PointResult, dur float64) (float64, string) {
	if !a.phaseWindow || !p.readOrig {
		return dur, ""
	}
	tw, ok := p.prov.Window(pr.Point, pr.Repeat)
	if !ok {
		return dur, ""
	}
	w := float64(tw.WindowNS)
	if dur > w+float64(aiperfPhaseSlackNS) {
		return math.NaN(), fmt.Sprintf("AIPerf's stated profiling phase (%s) is shorter than its requests' span (benchmark_duration %s), which it holds: no rate over it", schema.Duration(tw.WindowNS), schema.Duration(int64(dur)))
	}
	pr.WindowSource = fmt.Sprintf(schema.MetricWindow+" is benchmark_duration; the rates are over AIPerf's profiling phase of this time-based run, %s (%s): the tool's word, not determined by the records", schema.Duration(tw.WindowNS), tw.How)
	return w, ""
}

// aiperfPhaseSlackNS is how far (ns) AIPerf's phase window, written to the
// microsecond, may fall short of the records' span it holds.
const aiperfPhaseSlackNS = 2000

func lastOr(rec *schema.Record, d float64) float64 {
	if len(rec.ChunksNS) == 0 {
		return d
	}
	return float64(rec.ChunksNS[len(rec.ChunksNS)-1])
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

// aiperfValue reads an AIPerf record metric that is not a time (tokens,
// tokens/s/user) as written.
func (o orig) aiperfValue(tag string) (float64, bool) {
	var out float64
	ok := o.aiperfFields(tag, func(v any, _ string) bool {
		f, ok := toFloat(v)
		out = f
		return ok
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
