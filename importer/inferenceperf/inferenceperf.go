package inferenceperf

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions: the
// name of its registration, schema.InferencePerf.
var Tool = schema.InferencePerf.Name

// Registration lists the importer in importer's registry (records emitted as they are read).
var Registration = ingest.Registration{Peer: schema.InferencePerf, Files: "per_request_lifecycle_metrics.json [summary_lifecycle_metrics.json | stage_N_lifecycle_metrics.json ...]", Stream: Stream,
	// inference-perf: per-request records with start_time, end_time and
	// info; summaries with load_summary.
	Format: ingest.Format{Title: "inference-perf output", Match: func(s *ingest.Sniffed) bool {
		return s.Has("load_summary") || s.Has("start_time") && s.Has("end_time") && s.Has("info.request_metrics", "info.response_metrics")
	}},
}

// Request is one entry of per_request_lifecycle_metrics.json as
// inference-perf's reportgen writes it ({start_time, end_time, request,
// response, info, error}; times in seconds of time.perf_counter). Its info
// is InferenceInfo.model_dump() in one of three layouts: v0.2–v0.4 keep
// input_tokens, output_tokens and output_token_times in info itself; v0.5
// moves the response side to info.response_info; v0.6+ have
// info.request_metrics.text.input_tokens (mirrored as info.input_tokens) and
// info.response_metrics. No layout writes the request's stage.
type Request struct {
	StartTime json.Number `json:"start_time"`
	EndTime   json.Number `json:"end_time"`
	Info      struct {
		InputTokens json.Number `json:"input_tokens"`
		response
		// ResponseInfo is v0.5's, ResponseMetrics v0.6+'s.
		ResponseInfo    *response `json:"response_info"`
		ResponseMetrics *response `json:"response_metrics"`
		RequestMetrics  *struct {
			Text *struct {
				InputTokens json.Number `json:"input_tokens"`
			} `json:"text"`
		} `json:"request_metrics"`
	} `json:"info"`
	Error   json.RawMessage `json:"error"`
	Request json.RawMessage `json:"request"`
	Raw     json.RawMessage `json:"-"`
}

// response is the response side of a request's info.
type response struct {
	OutputTokens     json.Number   `json:"output_tokens"`
	ChunkTimes       []json.Number `json:"chunk_times"`
	OutputTokenTimes []json.Number `json:"output_token_times"`
}

// layout returns the request's response side, the field path it is at,
// and its input tokens with their path.
func (r *Request) layout() (resp response, at string, in json.Number, inAt string) {
	switch {
	case r.Info.ResponseMetrics != nil:
		resp, at = *r.Info.ResponseMetrics, "info.response_metrics"
	case r.Info.ResponseInfo != nil:
		resp, at = *r.Info.ResponseInfo, "info.response_info"
	default:
		resp, at = r.Info.response, "info"
	}
	in, inAt = r.Info.InputTokens, "info.input_tokens"
	if rm := r.Info.RequestMetrics; rm != nil && rm.Text != nil {
		in, inAt = rm.Text.InputTokens, "info.request_metrics.text.input_tokens"
	}
	return resp, at, in, inAt
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
	Name string
	// BenchmarkTime is max end − min start over the report's requests
	// (v0.6+).
	BenchmarkTime json.Number                `json:"benchmark_time_seconds"`
	LoadSummary   map[string]json.RawMessage `json:"load_summary"`
	Successes     struct {
		Count      json.Number                           `json:"count"`
		Latency    map[string]map[string]json.RawMessage `json:"latency"`
		Throughput map[string]json.Number                `json:"throughput"`
	} `json:"successes"`
	Failures struct {
		Count json.Number `json:"count"`
	} `json:"failures"`
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
// (required) and lifecycle reports, recognised by content: the stage
// summaries stage_N_lifecycle_metrics.json (each claims point "stage-N",
// whose requests are assigned as in assign) and the run summary
// summary_lifecycle_metrics.json (claimRun). The per-request file, a JSON
// list, is read element by element: once to check every record in file
// order, keeping only where each entry is and when it started and ended
// (40 bytes an entry), then once more in order of start to rebuild each
// record and pass it to emit.
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
		return nil, errcond.Errorf(ingest.ErrNoFiles, "import inference-perf: no input file: need per_request_lifecycle_metrics.json (report with per_request: true)")
	}
	return build(reqs, sums, emit)
}

// requestRef locates one checked entry of the per-request file.
type requestRef struct {
	off   int
	n, i  int32
	start int64
	// startS and endS are start_time and end_time as the float64 seconds
	// inference-perf computed with.
	startS, endS float64
}

// requestIndex is a checked per_request_lifecycle_metrics.json as where
// its entries are, with what the manifest needs of them.
type requestIndex struct {
	name        string
	data        []byte
	refs        []requestRef
	epoch, last int64
	ok, failed  int
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
	x := &requestIndex{name: name, data: data, epoch: math.MaxInt64, last: math.MinInt64}
	err := eachRequest(data, name, func(i, off int, r *Request) error {
		b, err := record(r, name, i, "")
		if err != nil {
			return err
		}
		ss, _ := strconv.ParseFloat(string(r.StartTime), 64)
		es, _ := strconv.ParseFloat(string(r.EndTime), 64)
		x.refs = append(x.refs, requestRef{off: off, n: int32(len(r.Raw)), i: int32(i), start: b.start, startS: ss, endS: es})
		x.epoch = min(x.epoch, b.start)
		x.last = max(x.last, b.end)
		if b.rec.Status == schema.StatusOK {
			x.ok++
		} else {
			x.failed++
		}
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

// record builds and checks the record of entry i at point (its times are
// absolute: SentNS and EndNS are set once the epoch is known).
func record(r *Request, file string, i int, point string) (built, error) {
	start, err := ingest.ToNS(r.StartTime, ingest.Second)
	if err != nil {
		return built{}, ingest.RecordErrorf(file, 0, i, "start_time", "%w", err)
	}
	end, err := ingest.ToNS(r.EndTime, ingest.Second)
	if err != nil {
		return built{}, ingest.RecordErrorf(file, 0, i, "end_time", "%w", err)
	}
	if end < start {
		return built{}, ingest.RecordErrorf(file, 0, i, "end_time", "before start_time (negative duration)")
	}
	rm, at, in, inAt := r.layout()
	rec := schema.Record{ID: fmt.Sprint(i), Point: point, Phase: schema.PhaseMeasure, ChunksNS: []int64{}}
	// v0.2–v0.4 store no chunk times: the chunks are the distinct token
	// times (every token carries its chunk's arrival).
	times, field := rm.ChunkTimes, at+".chunk_times"
	if len(times) == 0 {
		times, field = distinct(rm.OutputTokenTimes), at+".output_token_times"
	}
	var prev int64
	for j, ct := range times {
		t, err := ingest.ToNS(ct, ingest.Second)
		if err != nil {
			return built{}, ingest.RecordErrorf(file, 0, i, fmt.Sprintf("%s[%d]", field, j), "%w", err)
		}
		if t < start || t-start < prev || t > end {
			return built{}, ingest.RecordErrorf(file, 0, i, fmt.Sprintf("%s[%d]", field, j), "outside start_time..end_time or earlier than the previous chunk (negative duration or mixed units)")
		}
		prev = t - start
		rec.ChunksNS = append(rec.ChunksNS, prev)
	}
	if rm.OutputTokens != "" {
		v, err := ingest.Int(rm.OutputTokens)
		if err != nil || v < 0 {
			return built{}, ingest.RecordErrorf(file, 0, i, at+".output_tokens", "not a token count: %s", rm.OutputTokens)
		}
		rec.OutputTokens = v
	}
	if counts, ok := tokensPerChunk(times, rm.OutputTokenTimes); ok && len(rm.OutputTokenTimes) == int(rec.OutputTokens) {
		rec.ChunkTokens = counts
	}
	if in != "" {
		v, err := ingest.Int(in)
		if err != nil || v < 0 {
			return built{}, ingest.RecordErrorf(file, 0, i, inAt, "not a token count: %s", in)
		}
		if m := r.Info.InputTokens; m != "" && inAt != "info.input_tokens" && m != in {
			return built{}, ingest.RecordErrorf(file, 0, i, "info.input_tokens", "%s, but its source info.request_metrics.text.input_tokens is %s", m, in)
		}
		rec.InputTokens = v
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		rec.Status = schema.StatusError
		rec.Error = errorText(r.Error)
		rec.OutputTokens, rec.ChunkTokens = 0, nil
	} else {
		rec.Status = schema.StatusOK
	}
	// Orig: the request's timing and token fields under inference-perf's
	// names, its numbers as written (no bodies): inference-perf's figures
	// are recomputed from these float seconds.
	orig, _ := json.Marshal(map[string]any{
		"start_time": r.StartTime, "end_time": r.EndTime, "input_tokens": in,
		"output_tokens": rm.OutputTokens, "chunk_times": rm.ChunkTimes, "output_token_times": rm.OutputTokenTimes,
		"error": r.Error,
	})
	rec.Orig = orig
	return built{rec: rec, start: start, end: end}, nil
}

// distinct returns times without consecutive repeats.
func distinct(times []json.Number) []json.Number {
	var out []json.Number
	for _, t := range times {
		if len(out) == 0 || out[len(out)-1] != t {
			out = append(out, t)
		}
	}
	return out
}

// tokensPerChunk counts the token times equal to each chunk time; ok is
// false when a token time matches no chunk at or after the previous one.
func tokensPerChunk(chunks, tokens []json.Number) ([]int64, bool) {
	if len(chunks) == 0 {
		return nil, false
	}
	counts := make([]int64, len(chunks))
	k := 0
	for _, tt := range tokens {
		for k < len(chunks) && chunks[k] != tt {
			k++
		}
		if k == len(chunks) {
			return nil, false
		}
		counts[k]++
	}
	return counts, true
}

// errorText is an ErrorResponseInfo ({error_type, error_msg}) as
// "type: message", a string error as itself, anything else as its JSON;
// at most 4096 bytes.
func errorText(raw json.RawMessage) string {
	var e struct {
		Type string `json:"error_type"`
		Msg  string `json:"error_msg"`
	}
	var msg string
	switch {
	case json.Unmarshal(raw, &msg) == nil:
	case json.Unmarshal(raw, &e) == nil && (e.Type != "" || e.Msg != ""):
		msg = strings.TrimPrefix(e.Type+": "+e.Msg, ": ")
	default:
		msg = string(raw)
	}
	if len(msg) > 4096 {
		msg = msg[:4096]
	}
	return msg
}

// stage is one stage summary (stage_N_lifecycle_metrics.json) with the
// requests inference-perf gave it.
type stage struct {
	n     int
	sum   *Summary
	point string
	refs  []requestRef
}

// summaries sorts the reports into stage summaries, by stage, and the run
// summary (summary_lifecycle_metrics.json: a report without a requested
// rate). A stage summary must be named stage_N_lifecycle_metrics.json, as
// inference-perf names it: nothing else in it says which stage it is.
func summaries(sums []*Summary) ([]*stage, *Summary, error) {
	var (
		stages []*stage
		run    *Summary
	)
	seen := map[int]string{}
	for _, s := range sums {
		mt := stageRe.FindStringSubmatch(path.Base(s.Name))
		if mt == nil {
			if _, ok := s.LoadSummary["requested_rate"]; ok {
				return nil, nil, ingest.Errorf(s.Name, "a stage summary (load_summary.requested_rate) whose name does not say its stage: give it inference-perf's name stage_N_lifecycle_metrics.json")
			}
			if run != nil {
				return nil, nil, ingest.Errorf(s.Name, "a second run summary (the first is %s)", run.Name)
			}
			run = s
			continue
		}
		n, err := strconv.Atoi(mt[1])
		if err != nil || n > 1<<20 {
			return nil, nil, ingest.Errorf(s.Name, "stage number out of range")
		}
		if prev, dup := seen[n]; dup {
			return nil, nil, ingest.Errorf(s.Name, "stage %d given twice (also %s)", n, prev)
		}
		seen[n] = s.Name
		stages = append(stages, &stage{n: n, sum: s, point: "stage-" + mt[1]})
	}
	sort.Slice(stages, func(i, j int) bool { return stages[i].n < stages[j].n })
	return stages, run, nil
}

// assign gives each stage its requests as inference-perf ran them: stages
// one after another, so in order of start the first load_summary.count
// requests are stage 0's, the next ones stage 1's, and so on. Each
// stage's send_duration (last start − first start, float seconds), when
// the summary states it, must be what its requests give.
func assign(stages []*stage, refs []requestRef) error {
	k := 0
	for _, st := range stages {
		n, err := ingest.Int(st.sum.count())
		if err != nil || n <= 0 {
			return ingest.RecordErrorf(st.sum.Name, 0, -1, "load_summary.count", "not a positive request count: %q", st.sum.count())
		}
		if int64(len(refs)-k) < n {
			return ingest.Errorf(st.sum.Name, "load_summary.count %d, but only %d of the %d requests are left after the earlier stages: give every stage's summary, or none", n, len(refs)-k, len(refs))
		}
		st.refs = refs[k : k+int(n)]
		k += int(n)
		if raw, ok := st.sum.LoadSummary["send_duration"]; ok {
			var want float64
			if json.Unmarshal(raw, &want) == nil {
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, r := range st.refs {
					lo, hi = min(lo, r.startS), max(hi, r.startS)
				}
				if got := hi - lo; math.Abs(got-want) > 1e-9*math.Max(math.Abs(want), 1e-9) {
					return ingest.Errorf(st.sum.Name, "load_summary.send_duration %s s, but stage %d's requests (in order of start, %d after the earlier stages) were sent over %s s: these summaries are not of this per-request file, or a stage is missing", digits.Shortest(want), st.n, k-int(n), digits.Shortest(got))
				}
			}
		}
	}
	if k != len(refs) {
		return ingest.Errorf(stages[len(stages)-1].sum.Name, "the stage summaries count %d requests, the per-request file holds %d: give every stage's summary, or none", k, len(refs))
	}
	return nil
}

// count is the report's load_summary.count.
func (s *Summary) count() json.Number {
	var n json.Number
	json.Unmarshal(s.LoadSummary["count"], &n)
	return n
}

// build rebuilds the records of reqs in order of start, passing each to
// emit, and returns the manifest and the summaries' claims.
func build(reqs *requestIndex, sums []*Summary, emit ingest.RecordFunc) (*ingest.Result, error) {
	stages, run, err := summaries(sums)
	if err != nil {
		return nil, err
	}
	// In order of start (ties in file order): stage assignment and the
	// records both follow it.
	sort.SliceStable(reqs.refs, func(i, j int) bool { return reqs.refs[i].start < reqs.refs[j].start })
	if len(stages) > 0 {
		if err := assign(stages, reqs.refs); err != nil {
			return nil, err
		}
	} else {
		// Without stage summaries nothing tells the stages apart: one
		// point holds every request.
		stages = []*stage{{n: -1, point: "run", refs: reqs.refs}}
	}
	m := ingest.NewManifest(Tool, "", reqs.epoch, reqs.last)
	m.Decoding.Streaming = true
	m.Client.TokenCounts = "client-tokenizer"
	m.Load.Mode = schema.ModeRate
	ingest.Derive(&m, "sent_ns: start_time (s) minus the earliest; end_ns: end_time; chunks_ns: chunk_times − start_time (info.response_metrics, v0.6+; info.response_info, v0.5), or the distinct output_token_times (info, v0.2–v0.4, which store no chunk times)")
	ingest.Derive(&m, "chunk_tokens: the number of output_token_times equal to each chunk time (inference-perf gives every token its chunk's arrival time)")
	ingest.Derive(&m, "input_tokens: info.request_metrics.text.input_tokens (v0.6+), else info.input_tokens")
	if stages[0].sum != nil {
		ingest.Derive(&m, "points: one per stage summary, named stage-N; inference-perf writes no stage per request and runs its stages one after another, so in order of start the first load_summary.count requests are the first stage's, and so on (each stage's send_duration checked)")
	} else {
		ingest.Derive(&m, "points: one, \"run\", holding every request (no stage summary given, so the stages cannot be told apart)")
	}
	ingest.Measured(&m, schema.FieldSent, schema.FieldEnd, schema.FieldFirstChunk, schema.FieldLastChunk, schema.FieldChunks, schema.FieldInputTokens, schema.FieldOutputTokens)
	ingest.Derived(&m, schema.FieldChunkTokens, "the number of output_token_times equal to each chunk time")
	m.Model.Name = reqs.model
	pointOf := make([]string, int(maxIndex(reqs.refs))+1)
	rated := 0
	for _, st := range stages {
		p := schema.Point{Name: st.point}
		if st.sum != nil {
			var rate float64
			if json.Unmarshal(st.sum.LoadSummary["requested_rate"], &rate) == nil && rate > 0 {
				p.Rate, p.Arrival = rate, schema.ArrivalConstant
				rated++
			}
		}
		m.Load.Points = append(m.Load.Points, p)
		for _, r := range st.refs {
			pointOf[r.i] = st.point
		}
	}
	if rated == len(m.Load.Points) {
		ingest.Derive(&m, "load.points[].rate: the stage summaries' load_summary.requested_rate; arrival: not stated in the reports, set to constant (inference-perf's default load type)")
	} else {
		m.Load.Mode = schema.ModeConcurrency
		ingest.Derive(&m, "load: the offered rate of some stages is not in the given reports; points declared in concurrency mode with the observed peak concurrency")
		for i := range m.Load.Points {
			m.Load.Points[i].Rate, m.Load.Points[i].Arrival = 0, ""
		}
	}
	c := ingest.NewClaimSet(Tool)
	claimed := map[string]json.Number{}
	for _, st := range stages {
		if st.sum == nil {
			continue
		}
		claimSummary(c, st.sum, st.point, claimed)
		if len(st.sum.LoadSummary) > 0 {
			b, _ := json.Marshal(st.sum.LoadSummary)
			ingest.SetNote(&m, "inference-perf."+st.point+".load_summary", string(b))
		}
	}
	if run != nil {
		if err := claimRun(c, run, stages, reqs, claimed, &m); err != nil {
			return nil, err
		}
	}
	claims, err := c.Claims()
	if err != nil {
		return nil, err
	}
	for _, ref := range reqs.refs {
		i := int(ref.i)
		r, err := decodeRequest(reqs.name, reqs.data, ref.off, reqs.data[ref.off:ref.off+int(ref.n)], i)
		if err != nil {
			return nil, err
		}
		b, err := record(&r, reqs.name, i, pointOf[i])
		if err != nil {
			return nil, err
		}
		b.rec.SentNS = b.start - reqs.epoch
		b.rec.EndNS = b.end - reqs.epoch
		if err := emit(&b.rec); err != nil {
			return nil, err
		}
	}
	return &ingest.Result{Manifest: m, Claims: claims}, nil
}

func maxIndex(refs []requestRef) int32 {
	var n int32
	for _, r := range refs {
		n = max(n, r.i)
	}
	return n
}

// claimRun claims the run summary (summary_lifecycle_metrics.json, over
// every request). With one point its figures are that point's: claimed
// there, or, where a stage summary claims the same figure, required to
// be the same value. Over several stages the run summary pools points,
// which claims do not: its counts and window are checked here against
// the requests (an import error when they differ), its distributions and
// rates are not claimed (said in source.derived).
func claimRun(c *ingest.ClaimSet, run *Summary, stages []*stage, reqs *requestIndex, claimed map[string]json.Number, m *schema.Manifest) error {
	if len(stages) == 1 {
		mine := map[string]json.Number{}
		tmp := ingest.NewClaimSet(Tool)
		claimSummary(tmp, run, stages[0].point, mine)
		for k, v := range mine {
			if w, ok := claimed[k]; ok && w != v {
				return ingest.Errorf(run.Name, "%s is %s, but %s states %s for the same requests", k, v, stages[0].sum.Name, w)
			}
		}
		fresh := map[string]json.Number{}
		for k, v := range mine {
			if _, ok := claimed[k]; !ok {
				fresh[k] = v
			}
		}
		claimSummary(c, run, stages[0].point, claimed, fresh)
		return nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range reqs.refs {
		lo, hi = min(lo, r.startS), max(hi, r.endS)
	}
	for _, chk := range []struct {
		field string
		n     json.Number
		want  float64
	}{
		{"load_summary.count", run.count(), float64(len(reqs.refs))},
		{"successes.count", run.Successes.Count, float64(reqs.ok)},
		{"failures.count", run.Failures.Count, float64(reqs.failed)},
		{"benchmark_time_seconds", run.BenchmarkTime, hi - lo},
	} {
		if chk.n == "" {
			continue
		}
		v, err := strconv.ParseFloat(string(chk.n), 64)
		if err != nil || math.Abs(v-chk.want) > 1e-9*math.Max(math.Abs(chk.want), 1) {
			return ingest.Errorf(run.Name, "%s is %s, but the per-request file gives %s", chk.field, chk.n, digits.Shortest(chk.want))
		}
	}
	ingest.Derive(m, "%s: the run summary over %d stages: its request counts and benchmark_time_seconds checked against the requests; its distributions and rates pool the stages, which per-point claims cannot hold, so they are not claimed", path.Base(run.Name), len(stages))
	return nil
}

var stageRe = regexp.MustCompile(`^stage_([0-9]+)_lifecycle_metrics\.json$`)

// dists maps inference-perf's latency metrics (seconds) to replay
// distributions: its time_per_output_token = (last token − first token)/(N−1)
// is the contract's tpot, normalized_time_per_output_token = (end −
// start)/N is normalized_time_per_output_token_ns (an extra key), and inter_token_latency (per-token gaps, tokens of
// one chunk sharing its time) is itl.
var dists = map[string]string{
	"time_to_first_token":              schema.MetricTTFT,
	"request_latency":                  schema.MetricE2E,
	"time_per_output_token":            schema.MetricTPOT,
	"normalized_time_per_output_token": "normalized_time_per_output_token_ns",
	"inter_token_latency":              schema.MetricITL,
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

// claimSummary claims the figures of report s at point, recording each
// as "point metric" and its value in claimed; with only, just the keys in
// it.
func claimSummary(c *ingest.ClaimSet, s *Summary, point string, claimed map[string]json.Number, only ...map[string]json.Number) {
	add := func(metric, source string, n json.Number, mul int64) {
		key := point + " " + metric
		if n == "" || (len(only) > 0 && only[0][key] == "") {
			return
		}
		if _, dup := claimed[key]; dup && len(only) == 0 {
			return
		}
		claimed[key] = n
		c.Add(s.Name, point, metric, source, n, mul)
	}
	add("counts.sent", "load_summary.count", s.count(), 1)
	add("counts.ok", "successes.count", s.Successes.Count, 1)
	add("counts.error", "failures.count", s.Failures.Count, 1)
	add(schema.MetricWindow, "benchmark_time_seconds", s.BenchmarkTime, ingest.Second)
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
			add(dist+"."+dst, "successes.latency."+mk+"."+k, n, ingest.Second)
		}
	}
	tp := s.Successes.Throughput
	add(schema.MetricRequestThroughput, "successes.throughput.requests_per_sec", tp["requests_per_sec"], 1)
	add(schema.MetricOutputTokenThroughput, "successes.throughput.output_tokens_per_sec", tp["output_tokens_per_sec"], 1)
	add(schema.MetricTotalTokenThroughput, "successes.throughput.total_tokens_per_sec", tp["total_tokens_per_sec"], 1)
}
