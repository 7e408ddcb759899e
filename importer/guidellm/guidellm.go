package guidellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions: the
// name of its registration, schema.GuideLLM.
var Tool = schema.GuideLLM.Name

// Registration lists the importer in importer's registry (records emitted as they are read).
var Registration = ingest.Registration{Peer: schema.GuideLLM, Files: "benchmarks.json or benchmarks.yaml (one load point per benchmark)", Stream: Stream,
	// GuideLLM reports hold a benchmarks list (and, from 0.4, metadata
	// with guidellm_version).
	Format: ingest.Format{Title: "a GuideLLM report", Match: func(s *ingest.Sniffed) bool { return s.Has("benchmarks", "metadata.guidellm_version") }},
}

// Report is a parsed benchmarks.json.
type Report struct {
	Metadata struct {
		Version         json.Number `json:"version"`
		GuideLLMVersion string      `json:"guidellm_version"`
		PythonVersion   string      `json:"python_version"`
		Platform        string      `json:"platform"`
	} `json:"metadata"`
	Args       map[string]json.RawMessage `json:"args"`
	Benchmarks []Benchmark                `json:"benchmarks"`
}

// Benchmark is one benchmark of a report.
type Benchmark struct {
	Config struct {
		Strategy struct {
			Type           string      `json:"type_"`
			Streams        json.Number `json:"streams"`
			MaxConcurrency json.Number `json:"max_concurrency"`
			Rate           json.Number `json:"rate"`
		} `json:"strategy"`
		RunIndex json.Number `json:"run_index"`
	} `json:"config"`
	SchedulerMetrics json.RawMessage              `json:"scheduler_metrics"`
	Metrics          map[string]json.RawMessage   `json:"metrics"`
	Requests         map[string][]json.RawMessage `json:"requests"`
	StartTime        json.Number                  `json:"start_time"`
	EndTime          json.Number                  `json:"end_time"`
	Duration         json.Number                  `json:"duration"`
	WarmupDuration   json.Number                  `json:"warmup_duration"`
	CooldownDuration json.Number                  `json:"cooldown_duration"`
}

type schedMetrics struct {
	MeasureStartTime json.Number `json:"measure_start_time"`
	MeasureEndTime   json.Number `json:"measure_end_time"`
	RequestStartTime json.Number `json:"request_start_time"`
	RequestEndTime   json.Number `json:"request_end_time"`
}

// Request is one request's stats.
type Request struct {
	Info struct {
		Status  string                 `json:"status"`
		Timings map[string]json.Number `json:"timings"`
		Error   *string                `json:"error"`
	} `json:"info"`
	RequestID    string      `json:"request_id"`
	PromptTokens json.Number `json:"prompt_tokens"`
	OutputTokens json.Number `json:"output_tokens"`
}

// reportJSON returns a report as JSON: data itself, or benchmarks.yaml
// converted (recognised as not starting with '{').
func reportJSON(data []byte, name string) ([]byte, error) {
	h := ingest.Sniff(data, 1)
	if len(h) == 0 {
		return nil, ingest.Errorf(name, "empty file")
	}
	if h[0] != '{' {
		return ingest.YAMLToJSON(name, data)
	}
	return data, nil
}

// statusOf maps GuideLLM's request groups to record statuses.
var statusOf = map[string]string{
	"successful": schema.StatusOK,
	"errored":    schema.StatusError,
	"incomplete": schema.StatusCancelled,
}

type parsedReq struct {
	rec     schema.Record
	startNS int64
	endNS   int64
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func pointOf(b *Benchmark) (schema.Point, string) {
	s := b.Config.Strategy
	streams := s.Streams
	if streams == "" {
		streams = s.MaxConcurrency
	}
	switch s.Type {
	case "synchronous":
		return schema.Point{Name: "synchronous", Concurrency: 1}, schema.ModeConcurrency
	case "concurrent":
		v, _ := ingest.Int(streams)
		return schema.Point{Name: ingest.PointName(schema.ModeConcurrency, float64(v)), Concurrency: int(v)}, schema.ModeConcurrency
	case "throughput":
		v, _ := ingest.Int(s.MaxConcurrency)
		return schema.Point{Name: "throughput", Concurrency: int(v)}, schema.ModeConcurrency
	case "constant", "poisson", "async":
		r, _ := ingest.ToFloat(s.Rate, 1)
		p := schema.Point{Name: ingest.PointName(schema.ModeRate, r), Rate: r, Arrival: schema.ArrivalConstant}
		if s.Type == "poisson" {
			p.Arrival = schema.ArrivalPoisson
		}
		return p, schema.ModeRate
	}
	name := s.Type
	if name == "" {
		name = "benchmark"
	}
	return schema.Point{Name: name}, schema.ModeConcurrency
}

// timings is one request's info.timings, GuideLLM's seconds since the
// epoch, read as ns with errors naming the request's field.
type timings struct {
	tm          map[string]json.Number
	file, field string
}

// get is timing k in ns, false when it is absent or empty.
func (t timings) get(k string) (int64, bool, error) {
	n, ok := t.tm[k]
	if !ok || n == "" {
		return 0, false, nil
	}
	v, err := ingest.ToNS(n, ingest.Second)
	if err != nil {
		return 0, false, ingest.RecordErrorf(t.file, 0, -1, t.field+".info.timings."+k, "%w", err)
	}
	return v, true, nil
}

// span is the request's start (required) and end (the start when absent),
// refused when the end comes first.
func (t timings) span() (start, end int64, err error) {
	start, ok, err := t.get("request_start")
	if err != nil {
		return 0, 0, err
	}
	if !ok {
		return 0, 0, ingest.RecordErrorf(t.file, 0, -1, t.field+".info.timings.request_start", "missing")
	}
	end, okEnd, err := t.get("request_end")
	if err != nil {
		return 0, 0, err
	}
	if !okEnd {
		end = start
	}
	if end < start {
		return 0, 0, ingest.RecordErrorf(t.file, 0, -1, t.field+".info.timings", "request_end before request_start (negative duration)")
	}
	return start, end, nil
}

// chunks is the record's chunk times from the first and last token
// iterations: a successful request must have its first token within its
// span; a failed one keeps what it has that starts after its start.
func (t timings) chunks(status string, start, end int64) ([]int64, error) {
	out := []int64{}
	first, okF, err := t.get("first_token_iteration")
	if err != nil {
		return nil, err
	}
	lastTok, okL, err := t.get("last_token_iteration")
	if err != nil {
		return nil, err
	}
	if status == schema.StatusOK {
		if !okF {
			return nil, ingest.RecordErrorf(t.file, 0, -1, t.field+".info.timings.first_token_iteration", "missing for a successful request")
		}
		if !okL {
			lastTok = first
		}
		if first < start || lastTok < first || lastTok > end+1 {
			return nil, ingest.RecordErrorf(t.file, 0, -1, t.field+".info.timings", "token times outside request_start..request_end (negative duration or mixed units)")
		}
		out = append(out, first-start)
		if lastTok > first {
			out = append(out, lastTok-start)
		}
	} else if okF && first >= start {
		out = append(out, first-start)
		if okL && lastTok > first {
			out = append(out, lastTok-start)
		}
	}
	return out, nil
}

// tokenCount is a request's prompt_tokens or output_tokens (0 when
// empty), refused when not a count.
func tokenCount(v json.Number, file, field string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := ingest.Int(v)
	if err != nil || n < 0 {
		return 0, ingest.RecordErrorf(file, 0, -1, field, "not a token count: %s", v)
	}
	return n, nil
}

// request builds and checks the record of r, decoded from raw, one
// request of file at field.
func request(r *Request, raw json.RawMessage, file, field, status, point string, window map[string]json.Number) (parsedReq, error) {
	tm := r.Info.Timings
	if tm == nil {
		return parsedReq{}, ingest.RecordErrorf(file, 0, -1, field+".info.timings", "missing")
	}
	t := timings{tm: tm, file: file, field: field}
	start, end, err := t.span()
	if err != nil {
		return parsedReq{}, err
	}
	// Orig: the request's stats without its text (request_args, output).
	var obj map[string]json.RawMessage
	json.Unmarshal(raw, &obj)
	delete(obj, "request_args")
	delete(obj, "output")
	// The benchmark's measurement window, GuideLLM's rate denominator and
	// its rule for which requests count, copied into every record.
	w, _ := json.Marshal(window)
	obj["scheduler_metrics"] = w
	orig, _ := json.Marshal(obj)
	rec := schema.Record{ID: r.RequestID, Point: point, Phase: schema.PhaseMeasure, Status: status, ChunksNS: []int64{}, Orig: orig}
	if rec.ID == "" {
		rec.ID = field
	}
	if rec.InputTokens, err = tokenCount(r.PromptTokens, file, field+".prompt_tokens"); err != nil {
		return parsedReq{}, err
	}
	if rec.OutputTokens, err = tokenCount(r.OutputTokens, file, field+".output_tokens"); err != nil {
		return parsedReq{}, err
	}
	// Replay expands the iterations of a successful request only, and
	// only its output tokens bound them.
	outTok := math.Inf(1)
	if status == schema.StatusOK {
		outTok = float64(rec.OutputTokens)
	}
	if err := checkIterations(tm, orig, outTok, file, field); err != nil {
		return parsedReq{}, err
	}
	if r.Info.Error != nil && *r.Info.Error != "" {
		rec.Error = *r.Info.Error
		if len(rec.Error) > 4096 {
			rec.Error = rec.Error[:4096]
		}
	}
	if rec.ChunksNS, err = t.chunks(status, start, end); err != nil {
		return parsedReq{}, err
	}
	if len(rec.ChunksNS) > 0 && start+rec.ChunksNS[len(rec.ChunksNS)-1] > end {
		end = start + rec.ChunksNS[len(rec.ChunksNS)-1]
	}
	return parsedReq{rec: rec, startNS: start, endNS: end}, nil
}

func fillFromArgs(m *schema.Manifest, args map[string]json.RawMessage) {
	str := func(k string) string {
		var s string
		json.Unmarshal(args[k], &s)
		return s
	}
	if v := str("model"); v != "" {
		m.Model.Name = v
	}
	if v := str("processor"); v != "" {
		m.Model.Tokenizer = v
	}
	if v := str("request_format"); strings.HasPrefix(v, "/") {
		m.Decoding.Endpoint = v
	}
	if v := str("target"); v != "" {
		ingest.SetNote(m, "guidellm.target", v)
	}
	var data []string
	if json.Unmarshal(args["data"], &data) == nil && len(data) > 0 {
		m.Workload.Dataset = strings.Join(data, ",")
	}
	var seed json.Number
	if json.Unmarshal(args["random_seed"], &seed) == nil && seed != "" {
		if v, err := ingest.Int(seed); err == nil {
			m.Client.Seed = &v
		}
	}
	var mr json.Number
	if json.Unmarshal(args["max_requests"], &mr) == nil && mr != "" {
		if v, err := ingest.Int(mr); err == nil {
			for i := range m.Load.Points {
				m.Load.Points[i].Requests = int(v)
			}
		}
	}
	var w json.Number
	if json.Unmarshal(args["warmup"], &w) == nil && w != "" {
		ingest.SetNote(m, "guidellm.warmup", string(w))
	}
	if json.Unmarshal(args["cooldown"], &w) == nil && w != "" {
		ingest.SetNote(m, "guidellm.cooldown", string(w))
	}
	if len(args) > 0 {
		b, _ := json.Marshal(args)
		ingest.SetNote(m, "guidellm.args", string(b))
	}
}

// dists maps GuideLLM's per-request metrics to replay distributions, with
// the multiplier from the metric's unit to ns. GuideLLM's
// inter_token_latency_ms = (last token − first token)/(output tokens − 1)
// is the contract's tpot; its time_per_output_token_ms = (last token −
// request start)/output tokens includes the first token and is named
// time_per_output_token_ns (replay's extra distribution under GuideLLM's
// definitions). Its *_per_second metrics are rate distributions: the
// means are also claimed as the contract's throughputs.
var dists = []struct {
	metric, dist string
	mul          int64
	weighted     bool
}{
	{"time_to_first_token_ms", schema.MetricTTFT, ingest.Millisecond, false},
	{"request_latency", schema.MetricE2E, ingest.Second, false},
	{"inter_token_latency_ms", schema.MetricTPOT, ingest.Millisecond, true},
	{"time_per_output_token_ms", "time_per_output_token_ns", ingest.Millisecond, true},
	// GuideLLM's rate distributions (per second; their count is the
	// number of requests or tokens counted), replay's extra distributions
	// under GuideLLM's definitions.
	{"requests_per_second", "requests_per_second", 1, false},
	{"output_tokens_per_second", "output_tokens_per_second", 1, false},
	{"tokens_per_second", "tokens_per_second", 1, false},
	{"prompt_tokens_per_second", "prompt_tokens_per_second", 1, false},
}

var statKeys = []struct{ src, dst string }{
	{"count", "n"}, {"mean", "mean"}, {"std_dev", "stddev"}, {"min", "min"}, {"max", "max"},
}

var pctKeys = []struct{ src, dst string }{
	{"p001", "p01"}, {"p01", "p1"}, {"p05", "p5"}, {"p10", "p10"}, {"p25", "p25"}, {"p50", "p50"},
	{"p75", "p75"}, {"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"}, {"p999", "p999"},
}

type statusDist struct {
	Successful map[string]json.RawMessage `json:"successful"`
}

func claimBenchmark(c *ingest.ClaimSet, b *Benchmark, file, point string, bi int) {
	prefix := fmt.Sprintf("benchmarks[%d].metrics.", bi)
	for _, d := range dists {
		raw, ok := b.Metrics[d.metric]
		if !ok {
			continue
		}
		var sd statusDist
		if json.Unmarshal(raw, &sd) != nil || sd.Successful == nil {
			continue
		}
		num := func(k string) json.Number {
			var n json.Number
			json.Unmarshal(sd.Successful[k], &n)
			return n
		}
		cnt := num("count")
		if cnt == "0" {
			continue // GuideLLM writes 0.0 for every statistic of an empty distribution
		}
		for _, k := range statKeys {
			mul := d.mul
			if k.src == "count" {
				if d.weighted {
					// GuideLLM's count of a weighted distribution is its
					// total weight (Σ(n−1) tokens), not a number of samples.
					continue
				}
				mul = 1
			}
			c.Add(file, point, d.dist+"."+k.dst, prefix+d.metric+".successful."+k.src, num(k.src), mul)
		}
		var pcts map[string]json.Number
		json.Unmarshal(sd.Successful["percentiles"], &pcts)
		for _, k := range pctKeys {
			if v, ok := pcts[k.src]; ok {
				c.Add(file, point, d.dist+"."+k.dst, prefix+d.metric+".successful.percentiles."+k.src, v, d.mul)
			}
		}
	}
	var totals map[string]json.Number
	if json.Unmarshal(b.Metrics["request_totals"], &totals) == nil {
		c.Add(file, point, "counts.ok", prefix+"request_totals.successful", totals["successful"], 1)
		c.Add(file, point, "counts.error", prefix+"request_totals.errored", totals["errored"], 1)
		c.Add(file, point, "counts.cancelled", prefix+"request_totals.incomplete", totals["incomplete"], 1)
	}
	for _, r := range []struct{ metric, dst string }{
		{"requests_per_second", schema.MetricRequestThroughput},
		{"output_tokens_per_second", schema.MetricOutputTokenThroughput},
		{"tokens_per_second", schema.MetricTotalTokenThroughput},
	} {
		var sd statusDist
		if json.Unmarshal(b.Metrics[r.metric], &sd) != nil || sd.Successful == nil {
			continue
		}
		var n json.Number
		json.Unmarshal(sd.Successful["mean"], &n)
		c.Add(file, point, r.dst, prefix+r.metric+".successful.mean", n, 1)
	}
	c.Add(file, point, schema.MetricWindow, fmt.Sprintf("benchmarks[%d].duration", bi), b.Duration, ingest.Second)
}

// checkIterations refuses a token_iterations count (info.timings, or a
// timings block or key at the request's top level: where replay's GuideLLM
// definitions look) that a replay would expand into more events than the
// request's output tokens and stored bytes allow
// (schema.IterationCountProblem).
func checkIterations(tm map[string]json.Number, orig []byte, outputTokens float64, file, field string) error {
	check := func(path string, n json.Number) error {
		if n == "" {
			return nil
		}
		v, err := n.Float64()
		why := ""
		if err != nil {
			why = "not a number: " + string(n)
		} else {
			why = schema.IterationCountProblem(v, outputTokens, len(orig))
		}
		if why != "" {
			return ingest.RecordErrorf(file, 0, -1, field+"."+path, "%s", why)
		}
		return nil
	}
	if err := check("info.timings.token_iterations", tm["token_iterations"]); err != nil {
		return err
	}
	var top struct {
		Timings struct {
			N json.Number `json:"token_iterations"`
		} `json:"timings"`
		N json.Number `json:"token_iterations"`
	}
	if json.Unmarshal(orig, &top) == nil {
		if err := check("timings.token_iterations", top.Timings.N); err != nil {
			return err
		}
		return check("token_iterations", top.N)
	}
	return nil
}
