package genaiperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"

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

// payloadModel returns the "model" of a request payload (a JSON object,
// or a JSON string holding one, under request_inputs.payload).
func payloadModel(in json.RawMessage) string {
	var ri struct {
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(in, &ri) != nil || len(ri.Payload) == 0 {
		return ""
	}
	p := ri.Payload
	var s string
	if json.Unmarshal(p, &s) == nil {
		p = json.RawMessage(s)
	}
	var body struct {
		Model string `json:"model"`
	}
	json.Unmarshal(p, &body)
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
	)
	for _, f := range files {
		h := ingest.Sniff(f.Data, 1<<12)
		switch {
		case len(h) == 0:
			return nil, ingest.Errorf(f.Name, "empty file")
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
		default:
			return nil, ingest.Errorf(f.Name, "not a GenAI-Perf export")
		}
	}
	if exp == nil {
		return nil, fmt.Errorf("import genai-perf: %w: need profile_export.json", ingest.ErrNoFiles)
	}
	return build(exp, expF, sum, sumF)
}

type req struct {
	rec   schema.Record
	start int64
	end   int64
}

func build(e *Export, file string, sum Summary, sumF string) (*ingest.Result, error) {
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
			prev := int64(0)
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
			}
			epoch = min(epoch, start)
			last = max(last, end)
			all = append(all, req{rec: rec, start: start, end: end})
		}
	}
	if len(all) == 0 {
		return nil, ingest.Errorf(file, "no requests")
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].start < all[j].start })
	recs := make([]schema.Record, len(all))
	for i, r := range all {
		recs[i] = r.rec
		recs[i].SentNS = r.start - epoch
		recs[i].EndNS = r.end - epoch
	}
	m := ingest.NewManifest(Tool, e.Version, epoch, last)
	m.Load.Mode = mode
	m.Load.Points = points
	m.Decoding.Streaming = true
	m.Client.TokenCounts = "chunk-count-estimate"
	ingest.Derive(&m, "sent_ns: timestamp (ns) minus the earliest; chunks_ns: response_timestamps − timestamp (absolute per-response times, kept exactly)")
	ingest.Derive(&m, "output_tokens: number of responses (GenAI-Perf counts tokens with its client tokenizer over the response text, which is not re-run here)")
	ingest.Derive(&m, "status: a request with no response is error; the export stores no error details")
	ingest.Measured(&m, schema.FieldSent, schema.FieldEnd, schema.FieldFirstChunk, schema.FieldLastChunk, schema.FieldChunks)
	ingest.Absent(&m, schema.FieldOutputTokens, "GenAI-Perf's export stores no token counts; the number of responses")
	ingest.Absent(&m, schema.FieldInputTokens, "GenAI-Perf's export stores no token counts; 0")
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
		claimSummary(c, sum, sumF, points[0].Name)
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

func claimSummary(c *ingest.ClaimSet, s Summary, file, point string) {
	for _, d := range dists {
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
			c.AddNotRecomputable(file, point, d.dist+"."+st.dst, d.metric+"."+st.src, n, mul, d.reason)
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
