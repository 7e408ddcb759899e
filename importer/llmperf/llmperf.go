package llmperf

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions: the
// name of its registration, schema.LLMPerf.
var Tool = schema.LLMPerf.Name

// Registration lists the importer in importer's registry (records emitted as they are read).
var Registration = ingest.Registration{Peer: schema.LLMPerf, Files: "*_individual_responses.json [*_summary.json]", Stream: Stream,
	// LLMPerf: the individual responses are a list of objects with ttft_s
	// and end_to_end_latency_s; the summary holds results_* fields.
	Format: ingest.Format{Title: "LLMPerf output", Match: func(s *ingest.Sniffed) bool {
		return s.Has("ttft_s", "end_to_end_latency_s") || s.HasPrefix("results_")
	}},
}

// Response is one entry of *_individual_responses.json.
type Response struct {
	ErrorCode           json.Number `json:"error_code"`
	ErrorMsg            string      `json:"error_msg"`
	InterTokenLatencyS  json.Number `json:"inter_token_latency_s"`
	TTFTS               json.Number `json:"ttft_s"`
	EndToEndLatencyS    json.Number `json:"end_to_end_latency_s"`
	NumberOutputTokens  json.Number `json:"number_output_tokens"`
	NumberInputTokens   json.Number `json:"number_input_tokens"`
	NumberTotalTokens   json.Number `json:"number_total_tokens"`
	RequestOutputThroug json.Number `json:"request_output_throughput_token_per_s"`
	// Raw is the entry exactly as written.
	Raw json.RawMessage `json:"-"`
}

// eachResponse decodes and checks the entries of *_individual_responses.json
// one at a time, calling fn with each; r.Raw is valid only during the
// call.
func eachResponse(data []byte, name string, fn func(i int, r *Response) error) error {
	return ingest.EachJSONElement(name, data, func(i int, raw []byte) error {
		var r Response
		if err := ingest.DecodeJSON(name, raw, &r); err != nil {
			return ingest.RecordErrorf(name, 0, i, "", "%w", err)
		}
		var keys map[string]json.RawMessage
		json.Unmarshal(raw, &keys)
		for _, k := range []string{"ttft_s", "end_to_end_latency_s", "number_output_tokens"} {
			if _, ok := keys[k]; !ok {
				return ingest.RecordErrorf(name, 0, i, k, "missing: not an LLMPerf individual response")
			}
		}
		r.Raw = raw
		return fn(i, &r)
	})
}

// Summary is *_summary.json, its fields kept raw.
type Summary map[string]json.RawMessage

func parseSummary(data []byte, name string) (Summary, error) {
	var s Summary
	if err := ingest.DecodeJSON(name, data, &s); err != nil {
		return nil, err
	}
	if _, ok := s["results_ttft_s_mean"]; !ok {
		if _, ok := s["results_num_requests_started"]; !ok {
			return nil, ingest.Errorf(name, "not an LLMPerf summary: results_* fields missing")
		}
	}
	return s, nil
}

func (s Summary) number(k string) json.Number { return ingest.RawNumber(s[k]) }

func (s Summary) str(k string) string {
	var v string
	json.Unmarshal(s[k], &v)
	return v
}

// Parse builds an import from LLMPerf files with every record in memory
// (Stream, collected).
func Parse(files []ingest.File) (*ingest.Result, error) {
	return ingest.Collect(Stream, files)
}

// Stream builds an import from LLMPerf files: the individual responses
// (required) and the summary (optional), recognised by content. The
// individual responses, a JSON list, are read element by element: once to
// check and count them, once to build each record and pass it to emit.
func Stream(files []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
	var (
		resp  []byte
		n     int
		respF string
		sum   Summary
		sumF  string
	)
	for _, f := range files {
		h := ingest.Sniff(f.Data, 1)
		switch {
		case len(h) == 0:
			return nil, ingest.Errorf(f.Name, "empty file")
		case h[0] == '[':
			if resp != nil {
				return nil, ingest.Errorf(f.Name, "a second individual responses file (first was %s)", respF)
			}
			count := 0
			if err := eachResponse(f.Data, f.Name, func(int, *Response) error { count++; return nil }); err != nil {
				return nil, err
			}
			if count == 0 {
				return nil, ingest.Errorf(f.Name, "no responses")
			}
			resp, n, respF = f.Data, count, f.Name
		case h[0] == '{':
			if sum != nil {
				return nil, ingest.Errorf(f.Name, "a second summary (first was %s)", sumF)
			}
			s, err := parseSummary(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			sum, sumF = s, f.Name
		default:
			return nil, ingest.Errorf(f.Name, "not an LLMPerf result (expected a JSON list or object)")
		}
	}
	if resp == nil {
		return nil, errcond.Errorf(ingest.ErrNoFiles, "import llmperf: no input file: need *_individual_responses.json")
	}
	each := func(fn func(i int, r *Response) error) error { return eachResponse(resp, respF, fn) }
	return build(each, n, respF, sum, sumF, emit)
}

const fromRate = "LLMPerf did not store the run's start and end times; its only window is results_num_completed_requests ÷ results_num_completed_requests_per_min × 60 s, derived from the claimed rate itself, so a rate recomputed over it restates the claim"

const noWindow = "LLMPerf did not store the run's start and end times (time.monotonic around the whole run), so the denominator of its rates cannot be rebuilt"

// build emits one record per response, in the file's order, then builds
// the manifest and claims from the summary.
func build(each func(func(i int, r *Response) error) error, n int, respF string, sum Summary, sumF string, emit ingest.RecordFunc) (*ingest.Result, error) {
	point := "llmperf"
	conc := int64(0)
	if sum != nil {
		if v, err := ingest.Int(sum.number("num_concurrent_requests")); err == nil && v > 0 {
			conc = v
			point = ingest.PointName(schema.ModeConcurrency, float64(v))
		}
	}
	last := int64(0)
	err := each(func(i int, r *Response) error {
		rec, err := record(i, r, point, respF)
		if err != nil {
			return err
		}
		last = max(last, rec.EndNS)
		return emit(&rec)
	})
	if err != nil {
		return nil, err
	}
	epoch := int64(0)
	version := ""
	if sum != nil {
		version = sum.str("version")
		if v, err := ingest.Int(sum.number("timestamp")); err == nil && v > 0 {
			epoch = v * ingest.Second
		}
	}
	m := ingest.NewManifest(Tool, "", epoch, epoch+last)
	m.Source.Version = version
	m.Client.Version = ""
	m.Client.TokenCounts = "client-tokenizer"
	m.Decoding.Streaming = true
	m.Load.Mode = schema.ModeConcurrency
	pt := schema.Point{Name: point, Concurrency: int(conc), Requests: n}
	describe(&m, epoch)
	if w, ok := llmperfWindow(sum); ok {
		ingest.ToolWindow(&m, point, 0, w, "LLMPerf's results_num_completed_requests ÷ results_num_completed_requests_per_min × 60 s")
	}
	c := ingest.NewClaimSet(Tool)
	if sum != nil {
		fromSummary(&m, &pt, sum)
		if err := checkErrorRate(sum, sumF); err != nil {
			return nil, err
		}
		claimSummary(c, sum, sumF, point)
	}
	m.Load.Points = []schema.Point{pt}
	claims, err := c.Claims()
	if err != nil {
		return nil, err
	}
	return &ingest.Result{Manifest: m, Claims: claims}, nil
}

// record builds and checks the record of response i: an error code makes
// it an error with no timings; else its chunks are [ttft, e2e] and it
// ends at e2e (LLMPerf stores no send times).
func record(i int, r *Response, point, respF string) (schema.Record, error) {
	rec := schema.Record{ID: fmt.Sprint(i), Point: point, Phase: schema.PhaseMeasure, ChunksNS: []int64{}, Orig: r.Raw}
	if r.NumberInputTokens != "" {
		v, err := ingest.Int(r.NumberInputTokens)
		if err != nil || v < 0 {
			return rec, ingest.RecordErrorf(respF, 0, i, "number_input_tokens", "not a token count: %s", r.NumberInputTokens)
		}
		rec.InputTokens = v
	}
	if r.ErrorCode != "" {
		rec.Status = schema.StatusError
		rec.Error = strings.TrimSpace("error_code " + string(r.ErrorCode) + ": " + r.ErrorMsg)
		return rec, nil
	}
	rec.Status = schema.StatusOK
	out, err := ingest.Int(r.NumberOutputTokens)
	if err != nil || out < 0 {
		return rec, ingest.RecordErrorf(respF, 0, i, "number_output_tokens", "not a token count: %s", r.NumberOutputTokens)
	}
	rec.OutputTokens = out
	ttft, err := ingest.NonNegNS(r.TTFTS, ingest.Second, "ttft_s")
	if err != nil {
		return rec, ingest.RecordErrorf(respF, 0, i, "ttft_s", "%w", err)
	}
	e2e, err := ingest.NonNegNS(r.EndToEndLatencyS, ingest.Second, "end_to_end_latency_s")
	if err != nil {
		return rec, ingest.RecordErrorf(respF, 0, i, "end_to_end_latency_s", "%w", err)
	}
	if ttft > e2e {
		return rec, ingest.RecordErrorf(respF, 0, i, "ttft_s", "ttft %s s exceeds end_to_end_latency %s s (mixed units?)", r.TTFTS, r.EndToEndLatencyS)
	}
	rec.ChunksNS = []int64{ttft}
	if e2e > ttft {
		rec.ChunksNS = append(rec.ChunksNS, e2e)
	}
	rec.EndNS = e2e
	return rec, nil
}

// describe states in m how each record field was read from the
// responses, and where the epoch came from when the summary gave one.
func describe(m *schema.Manifest, epoch int64) {
	ingest.Derive(m, "sent_ns: not stored by LLMPerf; every request placed at t=0 (the run's start and the requests' send times are unknown)")
	ingest.Derive(m, "chunks_ns: only TTFT and end-to-end latency were stored; chunks_ns = [ttft_s, end_to_end_latency_s] in ns, not the real chunks")
	ingest.Derive(m, "end_ns: end_to_end_latency_s")
	ingest.Derive(m, "output_tokens: number_output_tokens (LLMPerf's recount with the hf-internal-testing/llama-tokenizer, whatever the model)")
	if epoch > 0 {
		ingest.Derive(m, "epoch_unix_ns: the summary's timestamp (when the summary was written, after the run)")
	}
	ingest.Absent(m, schema.FieldSent, "LLMPerf stores no send times; every request is placed at 0")
	ingest.Measured(m, schema.FieldFirstChunk, schema.FieldInputTokens)
	ingest.Derived(m, schema.FieldLastChunk, "end_to_end_latency_s")
	ingest.Derived(m, schema.FieldEnd, "end_to_end_latency_s")
	ingest.Absent(m, schema.FieldChunks, "only ttft_s and end_to_end_latency_s are stored; chunks_ns holds those two, not the real chunks")
	ingest.Derived(m, schema.FieldOutputTokens, "number_output_tokens, LLMPerf's recount with the hf-internal-testing/llama-tokenizer")
}

// fromSummary fills the model, title, framework note and token length
// distributions (m's workload and pt) from the summary.
func fromSummary(m *schema.Manifest, pt *schema.Point, sum Summary) {
	if md := sum.str("model"); md != "" {
		m.Model.Name = md
	}
	if fw := sum.str("framework"); fw != "" {
		ingest.SetNote(m, "llmperf.framework", fw)
	}
	if nm := sum.str("name"); nm != "" {
		m.Title = nm
	}
	if d, v := lengthDist(sum, "input"); d != nil {
		m.Workload.InputTokens = d
		pt.InputTokens = v
	}
	if d, v := lengthDist(sum, "output"); d != nil {
		m.Workload.OutputTokens = d
		pt.OutputTokens = v
		m.Decoding.MaxTokens = v
	}
}

// lengthDist is the summary's mean_<kind>_tokens as a distribution (fixed
// when stddev_<kind>_tokens is 0, else normal) and the mean, nil when the
// mean is not a positive integer.
func lengthDist(sum Summary, kind string) (*schema.LengthDist, int) {
	v, err := ingest.Int(sum.number("mean_" + kind + "_tokens"))
	if err != nil || v <= 0 {
		return nil, 0
	}
	d := &schema.LengthDist{Mean: float64(v)}
	if sd := sum.number("stddev_" + kind + "_tokens"); sd == "0" {
		d.Kind, d.Min, d.Max = "fixed", int(v), int(v)
	} else {
		d.Kind = "normal"
	}
	return d, int(v)
}

// llmperfWindow returns the run's window (ns) as LLMPerf measured it:
// it stores the completed requests and their rate per minute, whose
// quotient is its own time.monotonic window around the whole run.
func llmperfWindow(s Summary) (int64, bool) {
	if s == nil {
		return 0, false
	}
	w, err := ingest.QuotientNS(s.number("results_num_completed_requests"), s.number("results_num_completed_requests_per_min"), 60*ingest.Second)
	return w, err == nil && w > 0
}

var distRe = regexp.MustCompile(`^results_(ttft_s|end_to_end_latency_s|inter_token_latency_s|request_output_throughput_token_per_s|number_input_tokens|number_output_tokens)_(quantiles_p[0-9]+|mean|min|max|stddev)$`)

// dists maps LLMPerf's per-request metrics to replay distributions.
// LLMPerf's inter_token_latency_s is, per request, Σ chunk gaps including
// TTFT ÷ output tokens: a time per output token that includes the first
// token, which the claims name inter_token_latency_ns (replay's extra
// distribution under LLMPerf's definitions), not itl (pooled chunk gaps)
// or tpot.
// The per-request output throughput (tok/s) and token counts are extra
// distributions of the same name, claimed as written (perRow).
var dists = map[string]string{
	"ttft_s":                                schema.MetricTTFT,
	"end_to_end_latency_s":                  schema.MetricE2E,
	"inter_token_latency_s":                 "inter_token_latency_ns",
	"request_output_throughput_token_per_s": "request_output_throughput_token_per_s",
	"number_input_tokens":                   "number_input_tokens",
	"number_output_tokens":                  "number_output_tokens",
}

// perRow are the dists whose values are not times.
var perRow = map[string]bool{"request_output_throughput_token_per_s": true, "number_input_tokens": true, "number_output_tokens": true}

func claimSummary(c *ingest.ClaimSet, s Summary, file, point string) {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := distRe.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		stat := strings.TrimPrefix(m[2], "quantiles_")
		if stat == "mean" || stat == "stddev" || stat == "min" || stat == "max" {
			stat = ingest.StatKeys[stat]
		}
		mul := ingest.Second
		if perRow[m[1]] {
			mul = 1
		}
		c.Add(file, point, dists[m[1]]+"."+stat, k, s.number(k), mul)
	}
	c.Add(file, point, "counts.sent", "results_num_requests_started", s.number("results_num_requests_started"), 1)
	c.Add(file, point, "counts.ok", "results_num_completed_requests", s.number("results_num_completed_requests"), 1)
	c.Add(file, point, "counts.error", "results_number_errors", s.number("results_number_errors"), 1)
	// LLMPerf's rates divide by its run start-to-end time, which it does
	// not store. The manifest keeps completed ÷ completed-per-minute as
	// the tool's window (llmperfWindow), but that is the claimed rate
	// restated, so no rate claim is checked against it
	// (schema.ToolWindowFromRate): both are not recomputable.
	why := noWindow
	if _, ok := llmperfWindow(s); ok {
		why = fromRate
	}
	c.AddNotRecomputable(file, point, schema.MetricOutputTokenThroughput, "results_mean_output_throughput_token_per_s", s.number("results_mean_output_throughput_token_per_s"), 1, why)
	if n := s.number("results_num_completed_requests_per_min"); n != "" {
		v, err := ingest.ToFloatDiv(n, 60)
		if err == nil {
			c.AddValue(point, schema.MetricRequestThroughput, "results_num_completed_requests_per_min ÷ 60", v, why)
		}
	}
}

// checkErrorRate requires results_error_rate, when given, to be what
// LLMPerf computes from the two counts the claims name: errors ÷ requests
// started, 0 with none started (token_benchmark_ray.py, metrics_summary).
// Both counts are checked against the records, so a rate that is not
// their quotient is the summary contradicting its own claims.
func checkErrorRate(s Summary, file string) error {
	n := s.number("results_error_rate")
	if n == "" {
		return nil
	}
	got, err := n.Float64()
	if err != nil {
		return ingest.RecordErrorf(file, 0, -1, "results_error_rate", "not a number: %s", n)
	}
	errs, err1 := ingest.Int(s.number("results_number_errors"))
	started, err2 := ingest.Int(s.number("results_num_requests_started"))
	if err1 != nil || err2 != nil || errs < 0 || started < 0 {
		return ingest.RecordErrorf(file, 0, -1, "results_error_rate", "given without the whole counts it is the quotient of (results_number_errors, results_num_requests_started)")
	}
	want := 0.0
	if started > 0 {
		want = float64(errs) / float64(started)
	}
	if got != want {
		return ingest.RecordErrorf(file, 0, -1, "results_error_rate", "%s is not results_number_errors ÷ results_num_requests_started = %d ÷ %d = %s", digits.Shortest(got), errs, started, digits.Shortest(want))
	}
	return nil
}
