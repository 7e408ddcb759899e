package inferenceperf

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions.
const Tool = "inference-perf"

// Request is one entry of per_request_lifecycle_metrics.json; times in
// seconds on one clock.
type Request struct {
	StartTime json.Number `json:"start_time"`
	EndTime   json.Number `json:"end_time"`
	Info      struct {
		ResponseMetrics struct {
			OutputTokens     json.Number   `json:"output_tokens"`
			ChunkTimes       []json.Number `json:"chunk_times"`
			OutputTokenTimes []json.Number `json:"output_token_times"`
		} `json:"response_metrics"`
		RequestMetrics struct {
			PromptTokens json.Number `json:"prompt_tokens"`
			Stage        json.Number `json:"stage_id"`
		} `json:"request_metrics"`
	} `json:"info"`
	Error   json.RawMessage `json:"error"`
	Request json.RawMessage `json:"request"`
	Raw     json.RawMessage `json:"-"`
}

// ParsePerRequest reads per_request_lifecycle_metrics.json with every
// request in memory.
func ParsePerRequest(r io.Reader, name string) ([]Request, error) {
	return ingest.ReadParse(r, name, parsePerRequest)
}

func parsePerRequest(data []byte, name string) ([]Request, error) {
	var out []Request
	err := eachRequest(data, name, func(i, _ int, r *Request) error {
		r.Raw = append(json.RawMessage(nil), r.Raw...)
		out = append(out, *r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, ingest.Errorf(name, "no requests")
	}
	return out, nil
}

// eachRequest decodes and checks the entries of
// per_request_lifecycle_metrics.json one at a time (a JSON list read with
// ingest.JSONWalker), calling fn with each and its offset in data; r.Raw
// is valid only during the call.
func eachRequest(data []byte, name string, fn func(i, off int, r *Request) error) error {
	w, err := ingest.NewJSONWalker(name, data)
	if err != nil {
		return err
	}
	return w.List("", func(i int) error {
		off, raw, err := w.Raw()
		if err != nil {
			return err
		}
		r, err := decodeRequest(name, data, off, raw, i)
		if err != nil {
			return err
		}
		return fn(i, off, &r)
	})
}

// decodeRequest decodes entry i of per_request_lifecycle_metrics.json, at
// offset off of data; Raw aliases raw.
func decodeRequest(name string, data []byte, off int, raw []byte, i int) (Request, error) {
	var r Request
	if err := ingest.DecodeJSONAt(name, data, off, raw, i, "", &r); err != nil {
		return r, err
	}
	if r.StartTime == "" || r.EndTime == "" {
		return r, ingest.RecordErrorf(name, 0, i, "start_time", "start_time or end_time missing: not an inference-perf per-request record")
	}
	r.Raw = raw
	return r, nil
}

// Summary is one lifecycle-metrics report.
type Summary struct {
	Name        string
	LoadSummary map[string]json.RawMessage `json:"load_summary"`
	Successes   struct {
		Count      json.Number                           `json:"count"`
		Latency    map[string]map[string]json.RawMessage `json:"latency"`
		Throughput map[string]json.Number                `json:"throughput"`
	} `json:"successes"`
	Failures struct {
		Count json.Number `json:"count"`
	} `json:"failures"`
}

// ParseSummary reads a lifecycle-metrics summary.
func ParseSummary(r io.Reader, name string) (*Summary, error) {
	return ingest.ReadParse(r, name, parseSummary)
}

func parseSummary(data []byte, name string) (*Summary, error) {
	var s Summary
	if err := ingest.DecodeJSON(name, data, &s); err != nil {
		return nil, err
	}
	if s.Successes.Count == "" && s.Successes.Latency == nil {
		return nil, ingest.Errorf(name, "not an inference-perf lifecycle report: successes missing")
	}
	s.Name = name
	return &s, nil
}

// Parse builds an import from inference-perf files with every record in
// memory (Stream, collected).
func Parse(files []ingest.File) (*ingest.Result, error) {
	return ingest.Collect(Stream, files)
}

// Stream builds an import from per_request_lifecycle_metrics.json
// (required) and summaries, recognised by content. A summary named
// stage_N_… claims point "stage-N"; the overall summary claims the single
// point when there is one stage. The per-request file, a JSON list, is
// read element by element: once to check every record in file order,
// keeping only where each entry is and when it started (24 bytes an
// entry), then once more in order of start to rebuild each record and
// pass it to emit.
func Stream(files []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
	var (
		reqs *requestIndex
		sums []*Summary
	)
	for _, f := range files {
		h := ingest.Sniff(f.Data, 1)
		switch {
		case len(h) == 0:
			return nil, ingest.Errorf(f.Name, "empty file")
		case h[0] == '[':
			if reqs != nil {
				return nil, ingest.Errorf(f.Name, "a second per-request file")
			}
			x, err := indexRequests(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			reqs = x
		case h[0] == '{':
			s, err := parseSummary(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			sums = append(sums, s)
		default:
			return nil, ingest.Errorf(f.Name, "not an inference-perf report")
		}
	}
	if reqs == nil {
		return nil, fmt.Errorf("import inference-perf: %w: need per_request_lifecycle_metrics.json (report with per_request: true)", ingest.ErrNoFiles)
	}
	return build(reqs, sums, emit)
}

// requestRef locates one checked entry of the per-request file.
type requestRef struct {
	off   int
	n, i  int32
	start int64
}

// requestIndex is a checked per_request_lifecycle_metrics.json as where
// its entries are, with what the manifest needs of them.
type requestIndex struct {
	name        string
	data        []byte
	refs        []requestRef
	epoch, last int64
	points      map[string]bool
	// model is the first model named by a request body.
	model string
}

// indexRequests checks every entry of data, the per-request file, in file
// order and keeps where each is.
func indexRequests(data []byte, name string) (*requestIndex, error) {
	if len(data) > math.MaxInt32 {
		// Entry sizes are kept in 32 bits; ReadFiles reads at most 1 GiB.
		return nil, ingest.Errorf(name, "larger than %d bytes", math.MaxInt32)
	}
	x := &requestIndex{name: name, data: data, epoch: math.MaxInt64, last: math.MinInt64, points: map[string]bool{}}
	err := eachRequest(data, name, func(i, off int, r *Request) error {
		b, err := record(r, name, i)
		if err != nil {
			return err
		}
		x.refs = append(x.refs, requestRef{off: off, n: int32(len(r.Raw)), i: int32(i), start: b.start})
		x.epoch = min(x.epoch, b.start)
		x.last = max(x.last, b.end)
		x.points[b.rec.Point] = true
		if x.model == "" {
			x.model = modelOf(r.Request)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(x.refs) == 0 {
		return nil, ingest.Errorf(name, "no requests")
	}
	return x, nil
}

// modelOf returns the "model" of a request body (a JSON object, or a JSON
// string holding one), "" when it names none.
func modelOf(body json.RawMessage) string {
	var s string
	if json.Unmarshal(body, &s) == nil {
		body = json.RawMessage(s)
	}
	var b struct {
		Model string `json:"model"`
	}
	json.Unmarshal(body, &b)
	return b.Model
}

type built struct {
	rec        schema.Record
	start, end int64
}

func pointOf(stage json.Number) string {
	if stage == "" {
		return "stage-0"
	}
	return "stage-" + string(stage)
}

// record builds and checks the record of entry i (its times are absolute:
// SentNS and EndNS are set once the epoch is known).
func record(r *Request, file string, i int) (built, error) {
	start, err := ingest.ToNS(r.StartTime, ingest.Second)
	if err != nil {
		return built{}, ingest.RecordErrorf(file, 0, i, "start_time", "%v", err)
	}
	end, err := ingest.ToNS(r.EndTime, ingest.Second)
	if err != nil {
		return built{}, ingest.RecordErrorf(file, 0, i, "end_time", "%v", err)
	}
	if end < start {
		return built{}, ingest.RecordErrorf(file, 0, i, "end_time", "before start_time (negative duration)")
	}
	rm := r.Info.ResponseMetrics
	point := pointOf(r.Info.RequestMetrics.Stage)
	rec := schema.Record{ID: fmt.Sprint(i), Point: point, Phase: schema.PhaseMeasure, ChunksNS: []int64{}}
	var prev int64
	for j, ct := range rm.ChunkTimes {
		t, err := ingest.ToNS(ct, ingest.Second)
		if err != nil {
			return built{}, ingest.RecordErrorf(file, 0, i, fmt.Sprintf("info.response_metrics.chunk_times[%d]", j), "%v", err)
		}
		if t < start || t-start < prev || t > end {
			return built{}, ingest.RecordErrorf(file, 0, i, fmt.Sprintf("info.response_metrics.chunk_times[%d]", j), "outside start_time..end_time or earlier than the previous chunk (negative duration or mixed units)")
		}
		prev = t - start
		rec.ChunksNS = append(rec.ChunksNS, prev)
	}
	if rm.OutputTokens != "" {
		v, err := ingest.Int(rm.OutputTokens)
		if err != nil || v < 0 {
			return built{}, ingest.RecordErrorf(file, 0, i, "info.response_metrics.output_tokens", "not a token count: %s", rm.OutputTokens)
		}
		rec.OutputTokens = v
	}
	// Tokens per chunk: inference-perf gives every token its chunk's
	// arrival time (output_token_times).
	if len(rm.OutputTokenTimes) == int(rec.OutputTokens) && len(rm.ChunkTimes) > 0 {
		counts := make([]int64, len(rm.ChunkTimes))
		k, okTok := 0, true
		for _, tt := range rm.OutputTokenTimes {
			for k < len(rm.ChunkTimes) && string(rm.ChunkTimes[k]) != string(tt) {
				k++
			}
			if k == len(rm.ChunkTimes) {
				okTok = false
				break
			}
			counts[k]++
		}
		if okTok {
			rec.ChunkTokens = counts
		}
	}
	if n := r.Info.RequestMetrics.PromptTokens; n != "" {
		v, err := ingest.Int(n)
		if err != nil || v < 0 {
			return built{}, ingest.RecordErrorf(file, 0, i, "info.request_metrics.prompt_tokens", "not a token count: %s", n)
		}
		rec.InputTokens = v
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		rec.Status = schema.StatusError
		var msg string
		if json.Unmarshal(r.Error, &msg) != nil {
			msg = string(r.Error)
		}
		rec.Error = msg
		if len(rec.Error) > 4096 {
			rec.Error = rec.Error[:4096]
		}
		rec.OutputTokens, rec.ChunkTokens = 0, nil
	} else {
		rec.Status = schema.StatusOK
	}
	// Orig: the request's timing and token fields (no bodies).
	orig, _ := json.Marshal(map[string]any{
		"start_time": r.StartTime, "end_time": r.EndTime,
		"output_tokens": rm.OutputTokens, "chunk_times": rm.ChunkTimes, "output_token_times": rm.OutputTokenTimes,
		"error": r.Error,
	})
	rec.Orig = orig
	return built{rec: rec, start: start, end: end}, nil
}

// build rebuilds the records of reqs in order of start, passing each to
// emit, and returns the manifest and the summaries' claims.
func build(reqs *requestIndex, sums []*Summary, emit ingest.RecordFunc) (*ingest.Result, error) {
	epoch, last, pts := reqs.epoch, reqs.last, reqs.points
	names := make([]string, 0, len(pts))
	for p := range pts {
		names = append(names, p)
	}
	sort.Strings(names)
	m := ingest.NewManifest(Tool, "", epoch, last)
	m.Decoding.Streaming = true
	m.Client.TokenCounts = "client-tokenizer"
	m.Load.Mode = schema.ModeRate
	for _, n := range names {
		m.Load.Points = append(m.Load.Points, schema.Point{Name: n})
	}
	ingest.Derive(&m, "sent_ns: start_time (s) minus the earliest; end_ns: end_time; chunks_ns: info.response_metrics.chunk_times − start_time (absolute chunk times)")
	ingest.Derive(&m, "chunk_tokens: the number of output_token_times equal to each chunk time (inference-perf gives every token its chunk's arrival time)")
	ingest.Derive(&m, "points: one per load stage (info.request_metrics.stage_id), named stage-N")
	ingest.Measured(&m, schema.FieldSent, schema.FieldEnd, schema.FieldFirstChunk, schema.FieldLastChunk, schema.FieldChunks, schema.FieldInputTokens, schema.FieldOutputTokens)
	ingest.Derived(&m, schema.FieldChunkTokens, "the number of output_token_times equal to each chunk time")
	m.Model.Name = reqs.model
	// The offered rate of each stage, from its summary's load_summary.
	stageRates := map[string]float64{}
	for _, s := range sums {
		if mt := stageRe.FindStringSubmatch(path.Base(s.Name)); mt != nil {
			var rate float64
			if json.Unmarshal(s.LoadSummary["requested_rate"], &rate) == nil && rate > 0 {
				stageRates["stage-"+mt[1]] = rate
			}
		}
	}
	for i := range m.Load.Points {
		p := &m.Load.Points[i]
		p.Rate = stageRates[p.Name]
		p.Arrival = schema.ArrivalConstant
	}
	if len(stageRates) == len(m.Load.Points) {
		ingest.Derive(&m, "load.points[].rate: the stage summaries' load_summary.requested_rate; arrival: not stated in the reports, set to constant (inference-perf's default load type)")
	} else {
		m.Load.Mode = schema.ModeConcurrency
		ingest.Derive(&m, "load: the offered rate of some stages is not in the given reports; points declared in concurrency mode with the observed peak concurrency")
		for i := range m.Load.Points {
			m.Load.Points[i].Rate, m.Load.Points[i].Arrival = 0, ""
		}
	}
	c := ingest.NewClaimSet(Tool)
	for _, s := range sums {
		point := ""
		if mt := stageRe.FindStringSubmatch(path.Base(s.Name)); mt != nil {
			point = "stage-" + mt[1]
		} else if len(names) == 1 {
			point = names[0]
		}
		if point == "" || !pts[point] {
			continue
		}
		claimSummary(c, s, point)
		if len(s.LoadSummary) > 0 {
			b, _ := json.Marshal(s.LoadSummary)
			ingest.SetNote(&m, "inference-perf."+point+".load_summary", string(b))
		}
	}
	claims, err := c.Claims()
	if err != nil {
		return nil, err
	}
	// Then the records are rebuilt and emitted in order of start
	// (sent_ns), ties in file order.
	sort.SliceStable(reqs.refs, func(i, j int) bool { return reqs.refs[i].start < reqs.refs[j].start })
	for _, ref := range reqs.refs {
		i := int(ref.i)
		r, err := decodeRequest(reqs.name, reqs.data, ref.off, reqs.data[ref.off:ref.off+int(ref.n)], i)
		if err != nil {
			return nil, err
		}
		b, err := record(&r, reqs.name, i)
		if err != nil {
			return nil, err
		}
		b.rec.SentNS = b.start - epoch
		b.rec.EndNS = b.end - epoch
		if err := emit(&b.rec); err != nil {
			return nil, err
		}
	}
	return &ingest.Result{Manifest: m, Claims: claims}, nil
}

var stageRe = regexp.MustCompile(`^stage_([0-9]+)_lifecycle_metrics\.json$`)

// dists maps inference-perf's latency metrics (seconds) to replay
// distributions: its time_per_output_token = (last token − first token)/(N−1)
// is the contract's tpot, normalized_time_per_output_token = (end −
// start)/N is normalized_time_per_output_token_ns (an extra key), and inter_token_latency (per-token gaps, tokens of
// one chunk sharing its time) is itl.
var dists = map[string]string{
	"time_to_first_token":              "ttft_ns",
	"request_latency":                  "e2e_ns",
	"time_per_output_token":            "tpot_ns",
	"normalized_time_per_output_token": "normalized_time_per_output_token_ns",
	"inter_token_latency":              "itl_ns",
}

func statKey(k string) (string, bool) {
	switch k {
	case "mean", "min", "max":
		return k, true
	case "median":
		return "p50", true
	}
	if strings.HasPrefix(k, "p") {
		return "p" + strings.ReplaceAll(k[1:], ".", ""), true
	}
	return "", false
}

func claimSummary(c *ingest.ClaimSet, s *Summary, point string) {
	c.Add(s.Name, point, "counts.ok", "successes.count", s.Successes.Count, 1)
	c.Add(s.Name, point, "counts.error", "failures.count", s.Failures.Count, 1)
	metrics := make([]string, 0, len(s.Successes.Latency))
	for k := range s.Successes.Latency {
		metrics = append(metrics, k)
	}
	sort.Strings(metrics)
	for _, mk := range metrics {
		dist, ok := dists[mk]
		if !ok {
			continue
		}
		blk := s.Successes.Latency[mk]
		keys := make([]string, 0, len(blk))
		for k := range blk {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			dst, ok := statKey(k)
			if !ok {
				continue
			}
			var n json.Number
			if json.Unmarshal(blk[k], &n) != nil || n == "" {
				continue
			}
			c.Add(s.Name, point, dist+"."+dst, "successes.latency."+mk+"."+k, n, ingest.Second)
		}
	}
	tp := s.Successes.Throughput
	c.Add(s.Name, point, "request_throughput", "successes.throughput.requests_per_sec", tp["requests_per_sec"], 1)
	c.Add(s.Name, point, "output_token_throughput", "successes.throughput.output_tokens_per_sec", tp["output_tokens_per_sec"], 1)
	c.Add(s.Name, point, "total_token_throughput", "successes.throughput.total_tokens_per_sec", tp["total_tokens_per_sec"], 1)
}
