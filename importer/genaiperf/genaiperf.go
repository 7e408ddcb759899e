package genaiperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions.
const Tool = "genai-perf"

// Export is profile_export.json.
type Export struct {
	Experiments []Experiment `json:"experiments"`
	Version     string       `json:"version"`
}

// Experiment is one load point of an export.
type Experiment struct {
	Experiment struct {
		Mode  string      `json:"mode"`
		Value json.Number `json:"value"`
	} `json:"experiment"`
	Requests []Request `json:"requests"`
}

// Request is one request of an experiment; times in ns on one clock.
type Request struct {
	Timestamp          json.Number       `json:"timestamp"`
	ResponseTimestamps []json.Number     `json:"response_timestamps"`
	ResponseOutputs    []json.RawMessage `json:"response_outputs"`
	RequestInputs      json.RawMessage   `json:"request_inputs"`
}

// payload returns the request payload of request_inputs.payload (a JSON
// object, or a JSON string holding one), nil when there is none.
func payload(in json.RawMessage) json.RawMessage {
	var ri struct {
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(in, &ri) != nil || len(ri.Payload) == 0 {
		return nil
	}
	p := ri.Payload
	var s string
	if json.Unmarshal(p, &s) == nil {
		p = json.RawMessage(s)
	}
	return p
}

// payloadModel returns the "model" of a request payload.
func payloadModel(in json.RawMessage) string {
	var body struct {
		Model string `json:"model"`
	}
	json.Unmarshal(payload(in), &body)
	return body.Model
}

// ParseExport reads profile_export.json.
func ParseExport(r io.Reader, name string) (*Export, error) {
	return ingest.ReadParse(r, name, parseExport)
}

func parseExport(data []byte, name string) (*Export, error) {
	var e Export
	if err := ingest.DecodeJSON(name, data, &e); err != nil {
		return nil, err
	}
	if len(e.Experiments) == 0 {
		return nil, ingest.Errorf(name, "no experiments: not a GenAI-Perf profile_export.json")
	}
	return &e, nil
}

// Summary is profile_export_genai_perf.json: metric blocks {unit, avg,
// min, max, p1…p99, std}.
type Summary map[string]map[string]json.RawMessage

// ParseSummary reads profile_export_genai_perf.json.
func ParseSummary(r io.Reader, name string) (Summary, error) {
	return ingest.ReadParse(r, name, parseSummary)
}

func parseSummary(data []byte, name string) (Summary, error) {
	var top map[string]json.RawMessage
	if err := ingest.DecodeJSON(name, data, &top); err != nil {
		return nil, err
	}
	s := Summary{}
	for k, raw := range top {
		var blk map[string]json.RawMessage
		if json.Unmarshal(raw, &blk) != nil {
			continue
		}
		if _, ok := blk["unit"]; ok {
			s[k] = blk
		}
	}
	if len(s) == 0 {
		return nil, ingest.Errorf(name, "no metric blocks: not a GenAI-Perf summary")
	}
	return s, nil
}

// Parse builds an import from profile_export.json (required) and the
// summary (optional), recognised by content.
func Parse(files []ingest.File) (*ingest.Result, error) {
	var (
		exp  *Export
		expF string
		sum  Summary
		sumF string
		cfg  *Config
		csv  string
	)
	for _, f := range files {
		h := ingest.Sniff(f.Data, 1<<12)
		switch {
		case len(h) == 0:
			return nil, ingest.Errorf(f.Name, "empty file")
		case bytes.HasPrefix(h, []byte("Metric,")):
			// profile_export_genai_perf.csv: the same statistics rounded
			// to two decimals; kept as an attachment only.
			csv = f.Name
		case h[0] == '{' && bytes.Contains(h, []byte(`"experiments"`)):
			if exp != nil {
				return nil, ingest.Errorf(f.Name, "a second profile_export.json")
			}
			e, err := parseExport(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			exp, expF = e, f.Name
		case h[0] == '{':
			if sum != nil {
				return nil, ingest.Errorf(f.Name, "a second summary")
			}
			s, err := parseSummary(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			sum, sumF = s, f.Name
			if cfg, err = parseConfig(f.Data, f.Name); err != nil {
				return nil, err
			}
		default:
			return nil, ingest.Errorf(f.Name, "not a GenAI-Perf export (expected profile_export.json, profile_export_genai_perf.json or profile_export_genai_perf.csv)")
		}
	}
	if exp == nil {
		if csv != "" {
			return nil, fmt.Errorf("import genai-perf: %w: %s is GenAI-Perf's CSV summary (statistics rounded to two decimals, no per-request data); the import needs profile_export.json (per-request timestamps), optionally with profile_export_genai_perf.json for the claims", ingest.ErrNoFiles, csv)
		}
		return nil, fmt.Errorf("import genai-perf: %w: need profile_export.json", ingest.ErrNoFiles)
	}
	return build(exp, expF, sum, sumF, cfg)
}

// Config is what the importer reads of input_config in
// profile_export_genai_perf.json: the streaming switch (endpoint.streaming
// in current versions, a top-level streaming flag in older ones) and the
// model and tokenizer names.
type Config struct {
	Streaming  *bool
	ModelNames []string
	Tokenizer  string
}

func parseConfig(data []byte, name string) (*Config, error) {
	var top struct {
		InputConfig *struct {
			Streaming  *bool           `json:"streaming"`
			ModelNames []string        `json:"model_names"`
			Tokenizer  json.RawMessage `json:"tokenizer"`
			Endpoint   struct {
				Streaming *bool `json:"streaming"`
			} `json:"endpoint"`
		} `json:"input_config"`
	}
	if err := ingest.DecodeJSON(name, data, &top); err != nil {
		return nil, err
	}
	ic := top.InputConfig
	if ic == nil {
		return nil, nil
	}
	c := &Config{Streaming: ic.Endpoint.Streaming, ModelNames: ic.ModelNames}
	if c.Streaming == nil {
		c.Streaming = ic.Streaming
	}
	var tok struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(ic.Tokenizer, &tok) == nil {
		c.Tokenizer = tok.Name
	} else {
		json.Unmarshal(ic.Tokenizer, &c.Tokenizer)
	}
	return c, nil
}

// payloadStream returns the "stream" switch of a request payload, and
// whether it has one.
func payloadStream(in json.RawMessage) (bool, bool) {
	var body struct {
		Stream *bool `json:"stream"`
	}
	if json.Unmarshal(payload(in), &body) != nil || body.Stream == nil {
		return false, false
	}
	return *body.Stream, true
}

// usage returns the server's token counts from the response bodies of one
// request: usage.completion_tokens and usage.prompt_tokens of the last
// response that carries them (a whole JSON body when not streaming, an
// SSE "data:" line when streaming with usage enabled). prompt is -1 when
// the body holds no prompt_tokens.
func usage(outputs []json.RawMessage) (completion, prompt int64, ok bool) {
	for _, o := range outputs {
		var ro struct {
			Response string `json:"response"`
		}
		if json.Unmarshal(o, &ro) != nil {
			continue
		}
		body := strings.TrimSpace(ro.Response)
		body = strings.TrimSpace(strings.TrimPrefix(body, "data:"))
		var b struct {
			Usage *struct {
				Completion *json.Number `json:"completion_tokens"`
				Prompt     *json.Number `json:"prompt_tokens"`
			} `json:"usage"`
		}
		dec := json.NewDecoder(strings.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&b) != nil || b.Usage == nil || b.Usage.Completion == nil {
			continue
		}
		c, err := ingest.Int(*b.Usage.Completion)
		if err != nil || c < 0 {
			continue
		}
		completion, ok = c, true
		prompt = -1
		if b.Usage.Prompt != nil {
			if p, err := ingest.Int(*b.Usage.Prompt); err == nil && p >= 0 {
				prompt = p
			}
		}
	}
	return completion, prompt, ok
}

// sse reports whether the first response of a request is an SSE line
// (streaming) or a whole body, and whether there was one.
func sse(outputs []json.RawMessage) (bool, bool) {
	for _, o := range outputs {
		var ro struct {
			Response string `json:"response"`
		}
		if json.Unmarshal(o, &ro) != nil || strings.TrimSpace(ro.Response) == "" {
			continue
		}
		return strings.HasPrefix(strings.TrimSpace(ro.Response), "data:"), true
	}
	return false, false
}

type req struct {
	rec   schema.Record
	start int64
	end   int64
	// usage is the server's completion and prompt token counts, -1 when
	// the response bodies hold none.
	usage [2]int64
}

// streamingOf says whether the run streamed: the summary's input_config
// when given, else the request payloads' "stream", else the shape of the
// responses (SSE lines or whole bodies), and how it knows.
func streamingOf(e *Export, cfg *Config) (streaming bool, from string) {
	if cfg != nil && cfg.Streaming != nil {
		return *cfg.Streaming, "input_config streaming"
	}
	for _, x := range e.Experiments {
		for _, r := range x.Requests {
			if v, ok := payloadStream(r.RequestInputs); ok {
				return v, "the request payload's stream"
			}
		}
	}
	for _, x := range e.Experiments {
		for _, r := range x.Requests {
			if v, ok := sse(r.ResponseOutputs); ok {
				return v, "the responses' shape"
			}
		}
	}
	return true, ""
}

func build(e *Export, file string, sum Summary, sumF string, cfg *Config) (*ingest.Result, error) {
	streaming, streamFrom := streamingOf(e, cfg)
	withUsage, withPrompt, okCount := 0, 0, 0
	epoch := int64(math.MaxInt64)
	last := int64(math.MinInt64)
	var all []req
	var points []schema.Point
	mode := schema.ModeConcurrency
	names := map[string]int{}
	for xi, x := range e.Experiments {
		pt := schema.Point{Requests: len(x.Requests)}
		switch x.Experiment.Mode {
		case "request_rate":
			v, _ := ingest.ToFloat(x.Experiment.Value, 1)
			mode = schema.ModeRate
			pt.Rate = v
			pt.Name = ingest.PointName(schema.ModeRate, v)
		default:
			v, _ := ingest.Int(x.Experiment.Value)
			pt.Concurrency = int(v)
			pt.Name = ingest.PointName(schema.ModeConcurrency, float64(v))
		}
		if n := names[pt.Name]; n > 0 {
			pt.Name = fmt.Sprintf("%s#%d", pt.Name, n+1)
		}
		names[pt.Name]++
		points = append(points, pt)
		for ri, r := range x.Requests {
			field := fmt.Sprintf("experiments[%d].requests[%d]", xi, ri)
			idx := len(all)
			start, err := ingest.Int(r.Timestamp)
			if err != nil {
				return nil, ingest.RecordErrorf(file, 0, idx, field+".timestamp", "%v", err)
			}
			rec := schema.Record{ID: fmt.Sprintf("%d:%d", xi, ri), Point: pt.Name, Phase: schema.PhaseMeasure, ChunksNS: []int64{}}
			if !streaming && len(r.ResponseTimestamps) > 1 {
				return nil, ingest.RecordErrorf(file, 0, idx, field+".response_timestamps", "%d responses, but %s says the run was not streaming", len(r.ResponseTimestamps), streamFrom)
			}
			prev := int64(0)
			u := [2]int64{-1, -1}
			for j, ts := range r.ResponseTimestamps {
				t, err := ingest.Int(ts)
				if err != nil {
					return nil, ingest.RecordErrorf(file, 0, idx, fmt.Sprintf("%s.response_timestamps[%d]", field, j), "%v", err)
				}
				if t < start || t-start < prev {
					return nil, ingest.RecordErrorf(file, 0, idx, fmt.Sprintf("%s.response_timestamps[%d]", field, j), "before the request or the previous response (negative duration)")
				}
				prev = t - start
				rec.ChunksNS = append(rec.ChunksNS, prev)
			}
			orig, _ := json.Marshal(map[string]any{"timestamp": r.Timestamp, "response_timestamps": r.ResponseTimestamps})
			rec.Orig = orig
			end := start + prev
			if len(rec.ChunksNS) == 0 {
				rec.Status = schema.StatusError
				rec.Error = "no response"
			} else {
				rec.Status = schema.StatusOK
				rec.OutputTokens = int64(len(rec.ChunksNS))
				okCount++
				if c, p, ok := usage(r.ResponseOutputs); ok {
					u = [2]int64{c, p}
					withUsage++
					if p >= 0 {
						withPrompt++
					}
				}
			}
			epoch = min(epoch, start)
			last = max(last, end)
			all = append(all, req{rec: rec, start: start, end: end, usage: u})
		}
	}
	if len(all) == 0 {
		return nil, ingest.Errorf(file, "no requests")
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].start < all[j].start })
	// Server token counts are used only when every ok request has them.
	serverCounts := okCount > 0 && withUsage == okCount
	recs := make([]schema.Record, len(all))
	for i, r := range all {
		recs[i] = r.rec
		if serverCounts && r.usage[0] >= 0 {
			recs[i].OutputTokens, recs[i].InputTokens = r.usage[0], max(0, r.usage[1])
		}
		recs[i].SentNS = r.start - epoch
		recs[i].EndNS = r.end - epoch
	}
	m := ingest.NewManifest(Tool, e.Version, epoch, last)
	m.Load.Mode = mode
	m.Load.Points = points
	m.Decoding.Streaming = streaming
	ingest.Derive(&m, "sent_ns: timestamp (ns) minus the earliest; chunks_ns: response_timestamps − timestamp (absolute per-response times, kept exactly)")
	ingest.Derive(&m, "status: a request with no response is error; the export stores no error details")
	ingest.Measured(&m, schema.FieldSent, schema.FieldEnd, schema.FieldLastChunk)
	if streaming {
		ingest.Measured(&m, schema.FieldFirstChunk, schema.FieldChunks)
	} else {
		m.Client.Boundary = schema.BoundaryNonStreaming
		ingest.Derive(&m, "boundary non-streaming (from %s): each response arrived whole; chunks_ns holds its arrival only, so only e2e is measured", streamFrom)
		ingest.Measured(&m, schema.FieldChunks)
		ingest.Absent(&m, schema.FieldFirstChunk, "non-streaming: no first-token time; chunks_ns[0] is the whole response's arrival")
	}
	if serverCounts {
		m.Client.TokenCounts = "server-usage"
		ingest.Derive(&m, "output_tokens, input_tokens: usage.completion_tokens and usage.prompt_tokens of the response bodies (server-counted; GenAI-Perf itself counts with its client tokenizer)")
		ingest.Measured(&m, schema.FieldOutputTokens)
		if withPrompt == okCount {
			ingest.Measured(&m, schema.FieldInputTokens)
		} else {
			ingest.Absent(&m, schema.FieldInputTokens, "usage.prompt_tokens missing from some response bodies; 0 there")
		}
	} else {
		m.Client.TokenCounts = "chunk-count-estimate"
		ingest.Derive(&m, "output_tokens: number of responses for the %d of %d ok requests without usage.completion_tokens in their response bodies (GenAI-Perf counts tokens with its client tokenizer over the response text, which is not re-run here)", okCount-withUsage, okCount)
		ingest.Absent(&m, schema.FieldOutputTokens, "no usage.completion_tokens in every response body; the number of responses")
		ingest.Absent(&m, schema.FieldInputTokens, "no usage.prompt_tokens in every response body; 0 or the server's count")
	}
	if cfg != nil && cfg.Tokenizer != "" {
		m.Model.Tokenizer = cfg.Tokenizer
	}
	if cfg != nil && len(cfg.ModelNames) > 0 {
		m.Model.Name = cfg.ModelNames[0]
	}
	// The model, from the first request payload that names one.
	for _, x := range e.Experiments {
		for _, r := range x.Requests {
			if m.Model.Name == "" {
				m.Model.Name = payloadModel(r.RequestInputs)
			}
		}
	}
	c := ingest.NewClaimSet(Tool)
	if sum != nil && len(points) == 1 {
		claimSummary(c, sum, sumF, points[0].Name, streaming)
	}
	claims, err := c.Claims()
	if err != nil {
		return nil, err
	}
	return &ingest.Result{Manifest: m, Records: recs, Claims: claims}, nil
}

const noTokens = "GenAI-Perf counts output tokens with its client tokenizer over the response text; the raw export stores no token counts"

var dists = []struct {
	metric, dist, reason string
}{
	{"time_to_first_token", "ttft_ns", ""},
	{"request_latency", "e2e_ns", ""},
	{"inter_token_latency", "tpot_ns", noTokens},
}

var stats = []struct{ src, dst string }{
	{"avg", "mean"}, {"std", "stddev"}, {"min", "min"}, {"max", "max"},
	{"p1", "p1"}, {"p5", "p5"}, {"p10", "p10"}, {"p25", "p25"}, {"p50", "p50"}, {"p75", "p75"},
	{"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"},
}

func units(u string) (int64, bool) {
	switch u {
	case "ns":
		return 1, true
	case "us":
		return ingest.Microsecond, true
	case "ms":
		return ingest.Millisecond, true
	case "s", "sec":
		return ingest.Second, true
	}
	return 0, false
}

const noFirstToken = "non-streaming run: each response arrived whole, so there is no first-token time and no gap between tokens"

func claimSummary(c *ingest.ClaimSet, s Summary, file, point string, streaming bool) {
	for _, d := range dists {
		reason := d.reason
		if !streaming && d.dist != "e2e_ns" {
			reason = noFirstToken
		}
		blk, ok := s[d.metric]
		if !ok {
			continue
		}
		var unit string
		json.Unmarshal(blk["unit"], &unit)
		mul, ok := units(unit)
		if !ok {
			continue
		}
		for _, st := range stats {
			var n json.Number
			if json.Unmarshal(blk[st.src], &n) != nil || n == "" {
				continue
			}
			c.AddNotRecomputable(file, point, d.dist+"."+st.dst, d.metric+"."+st.src, n, mul, reason)
		}
	}
	avg := func(k string) json.Number {
		var n json.Number
		json.Unmarshal(s[k]["avg"], &n)
		return n
	}
	c.Add(file, point, "request_throughput", "request_throughput.avg", avg("request_throughput"), 1)
	c.AddNotRecomputable(file, point, "output_token_throughput", "output_token_throughput.avg", avg("output_token_throughput"), 1, noTokens)
}
