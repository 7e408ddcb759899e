package genaiperf

import (
	"encoding/json"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions: the
// name of its registration, schema.GenAIPerf.
var Tool = schema.GenAIPerf.Name

// Registration lists the importer in importer's registry (records emitted as they are read).
var Registration = ingest.Registration{Peer: schema.GenAIPerf, Files: "profile_export.json [profile_export_genai_perf.json]", Stream: Stream,
	// GenAI-Perf: profile_export.json holds experiments; its summary holds
	// the metric blocks at the top with no AIPerf field.
	Format: ingest.Format{Title: "GenAI-Perf output", Match: func(s *ingest.Sniffed) bool {
		return s.Has("experiments") || s.Has("time_to_first_token", "request_latency") && !s.Has("aiperf_version", "schema_version", "benchmark_id")
	}},
}

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

// Summary is profile_export_genai_perf.json: metric blocks {unit, avg,
// min, max, p1…p99, std}.
type Summary map[string]map[string]json.RawMessage

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

const noTokens = "GenAI-Perf counts output tokens with its client tokenizer over the response text; the raw export stores no token counts"

var dists = []struct {
	metric, dist, reason string
}{
	{"time_to_first_token", schema.MetricTTFT, ""},
	{"request_latency", schema.MetricE2E, ""},
	{"inter_token_latency", schema.MetricTPOT, noTokens},
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
		if !streaming && d.dist != schema.MetricE2E {
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
	c.Add(file, point, schema.MetricRequestThroughput, "request_throughput.avg", avg("request_throughput"), 1)
	c.AddNotRecomputable(file, point, schema.MetricOutputTokenThroughput, "output_token_throughput.avg", avg("output_token_throughput"), 1, noTokens)
}
