package genaiperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// Parse builds an import from GenAI-Perf files with every record in memory
// (Stream, collected).
func Parse(files []ingest.File) (*ingest.Result, error) {
	return ingest.Collect(Stream, files)
}

// Stream builds an import from profile_export.json (required) and the
// summary (optional), recognised by content. The export, one JSON
// document, is walked token by token (ingest.JSONWalker) and its requests
// are decoded one at a time, three times: to index them (32 bytes a
// request: where it is, its experiment, when it started), to build and
// check every record in file order once the run's streaming mode is
// known, and to emit the records in order of start.
func Stream(files []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
	var (
		exp  *exportIndex
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
			x, err := indexExport(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			exp = x
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
			return nil, errcond.Errorf(ingest.ErrNoFiles, "import genai-perf: no input file: %s is GenAI-Perf's CSV summary (statistics rounded to two decimals, no per-request data); the import needs profile_export.json (per-request timestamps), optionally with profile_export_genai_perf.json for the claims", csv)
		}
		return nil, errcond.Errorf(ingest.ErrNoFiles, "import genai-perf: no input file: need profile_export.json")
	}
	return build(exp, sum, sumF, cfg, emit)
}

// experiment is what the index keeps of one experiment (load point).
type experiment struct {
	Mode     string      `json:"mode"`
	Value    json.Number `json:"value"`
	requests int
}

// requestRef locates one request of the export.
type requestRef struct {
	off       int
	n, xi, ri int32
	idx       int32 // the record index in file order, for errors
	start     int64 // set by the check pass
}

// exportIndex is profile_export.json as where its requests are, with what
// the manifest takes from the first requests that say it.
type exportIndex struct {
	name    string
	data    []byte
	version string
	exps    []experiment
	refs    []requestRef
	// payloadStream and sseShape are the first request payload's
	// "stream" and the first response's shape (SSE line or whole body);
	// ok false when no request has one.
	payloadStream, sseShape [2]bool
	// model is the first model a request payload names.
	model string
}

// indexExport walks profile_export.json: experiments[].experiment and
// experiments[].requests[], in any key order; other keys are skipped.
// Keys match as encoding/json matches them (case-insensitively); a key
// met twice in one object is an error, since a document with two
// "requests" has no one meaning.
func indexExport(data []byte, name string) (*exportIndex, error) {
	if len(data) > math.MaxInt32 {
		// Request sizes are kept in 32 bits; ReadFiles reads at most 1 GiB.
		return nil, ingest.Errorf(name, "larger than %d bytes", math.MaxInt32)
	}
	w, err := ingest.NewJSONWalker(name, data)
	if err != nil {
		return nil, err
	}
	x := &exportIndex{name: name, data: data}
	once := onceKeys(w)
	err = w.Object("", func(key string) error {
		switch {
		case strings.EqualFold(key, "experiments"):
			if err := once("", "experiments", key); err != nil {
				return err
			}
			return w.List("experiments", func(xi int) error { return x.experiment(w, xi) })
		case strings.EqualFold(key, "version"):
			_, _, err := w.Decode(-1, "version", &x.version)
			return err
		}
		return w.Skip()
	})
	if err != nil {
		return nil, err
	}
	if len(x.exps) == 0 {
		return nil, ingest.Errorf(name, "no experiments: not a GenAI-Perf profile_export.json")
	}
	return x, nil
}

// experiment indexes element xi of experiments.
func (x *exportIndex) experiment(w *ingest.JSONWalker, xi int) error {
	field := fmt.Sprintf("experiments[%d]", xi)
	x.exps = append(x.exps, experiment{})
	e := &x.exps[xi]
	once := onceKeys(w)
	return w.Object(field, func(key string) error {
		switch {
		case strings.EqualFold(key, "experiment"):
			if err := once(field, "experiment", key); err != nil {
				return err
			}
			_, _, err := w.Decode(-1, field+".experiment", e)
			return err
		case strings.EqualFold(key, "requests"):
			if err := once(field, "requests", key); err != nil {
				return err
			}
			return w.List(field+".requests", func(ri int) error {
				idx := len(x.refs)
				var r Request
				off, n, err := w.Decode(idx, fmt.Sprintf("%s.requests[%d]", field, ri), &r)
				if err != nil {
					return err
				}
				x.refs = append(x.refs, requestRef{off: off, n: int32(n), xi: int32(xi), ri: int32(ri), idx: int32(idx)})
				e.requests++
				x.note(&r)
				return nil
			})
		}
		return w.Skip()
	})
}

// note keeps what the manifest takes from the first requests that say it.
func (x *exportIndex) note(r *Request) {
	if !x.payloadStream[1] {
		x.payloadStream[0], x.payloadStream[1] = payloadStream(r.RequestInputs)
	}
	if !x.sseShape[1] {
		x.sseShape[0], x.sseShape[1] = sse(r.ResponseOutputs)
	}
	if x.model == "" {
		x.model = payloadModel(r.RequestInputs)
	}
}

// onceKeys returns a check that a key (named by its field and canonical
// spelling) is met once in the object being walked.
func onceKeys(w *ingest.JSONWalker) func(field, canon, key string) error {
	seen := map[string]bool{}
	return func(field, canon, key string) error {
		if seen[canon] {
			f := canon
			if field != "" {
				f = field + "." + canon
			}
			return w.Errorf(f, "duplicate key %q", key)
		}
		seen[canon] = true
		return nil
	}
}

// request decodes the request ref points at.
func (x *exportIndex) request(ref *requestRef) (Request, error) {
	var r Request
	field := fmt.Sprintf("experiments[%d].requests[%d]", ref.xi, ref.ri)
	err := ingest.DecodeJSONAt(x.name, x.data, ref.off, x.data[ref.off:ref.off+int(ref.n)], int(ref.idx), field, &r)
	return r, err
}

// streaming says whether the run streamed: the summary's input_config
// when given, else the request payloads' "stream", else the shape of the
// responses (SSE lines or whole bodies), and how it knows.
func (x *exportIndex) streaming(cfg *Config) (streaming bool, from string) {
	switch {
	case cfg != nil && cfg.Streaming != nil:
		return *cfg.Streaming, "input_config streaming"
	case x.payloadStream[1]:
		return x.payloadStream[0], "the request payload's stream"
	case x.sseShape[1]:
		return x.sseShape[0], "the responses' shape"
	}
	return true, ""
}

// req is one request's record with its absolute times and the server's
// token counts.
type req struct {
	rec   schema.Record
	start int64
	end   int64
	// usage is the server's completion and prompt token counts, -1 when
	// the response bodies hold none.
	usage [2]int64
}

// builder builds the records of an export.
type builder struct {
	x          *exportIndex
	points     []schema.Point
	streaming  bool
	streamFrom string
}

// record builds and checks the record of the request ref points at.
func (b *builder) record(ref *requestRef) (req, error) {
	r, err := b.x.request(ref)
	if err != nil {
		return req{}, err
	}
	file, idx := b.x.name, int(ref.idx)
	field := fmt.Sprintf("experiments[%d].requests[%d]", ref.xi, ref.ri)
	start, err := ingest.Int(r.Timestamp)
	if err != nil {
		return req{}, ingest.RecordErrorf(file, 0, idx, field+".timestamp", "%w", err)
	}
	rec := schema.Record{ID: fmt.Sprintf("%d:%d", ref.xi, ref.ri), Point: b.points[ref.xi].Name, Phase: schema.PhaseMeasure, ChunksNS: []int64{}}
	if !b.streaming && len(r.ResponseTimestamps) > 1 {
		return req{}, ingest.RecordErrorf(file, 0, idx, field+".response_timestamps", "%d responses, but %s says the run was not streaming", len(r.ResponseTimestamps), b.streamFrom)
	}
	prev := int64(0)
	u := [2]int64{-1, -1}
	for j, ts := range r.ResponseTimestamps {
		t, err := ingest.Int(ts)
		if err != nil {
			return req{}, ingest.RecordErrorf(file, 0, idx, fmt.Sprintf("%s.response_timestamps[%d]", field, j), "%w", err)
		}
		if t < start || t-start < prev {
			return req{}, ingest.RecordErrorf(file, 0, idx, fmt.Sprintf("%s.response_timestamps[%d]", field, j), "before the request or the previous response (negative duration)")
		}
		prev = t - start
		rec.ChunksNS = append(rec.ChunksNS, prev)
	}
	orig, _ := json.Marshal(map[string]any{"timestamp": r.Timestamp, "response_timestamps": r.ResponseTimestamps})
	rec.Orig = orig
	if len(rec.ChunksNS) == 0 {
		rec.Status = schema.StatusError
		rec.Error = "no response"
	} else {
		rec.Status = schema.StatusOK
		rec.OutputTokens = int64(len(rec.ChunksNS))
		if c, p, ok := usage(r.ResponseOutputs); ok {
			u = [2]int64{c, p}
		}
	}
	return req{rec: rec, start: start, end: start + prev, usage: u}, nil
}

// pointsOf names the load points of the experiments, in order, and
// returns the load mode (rate when any experiment is).
func pointsOf(exps []experiment) ([]schema.Point, string) {
	mode := schema.ModeConcurrency
	var names ingest.PointNames
	points := make([]schema.Point, 0, len(exps))
	for _, x := range exps {
		pt := schema.Point{Requests: x.requests}
		switch x.Mode {
		case "request_rate":
			v, _ := ingest.ToFloat(x.Value, 1)
			mode = schema.ModeRate
			pt.Rate = v
			pt.Name = ingest.PointName(schema.ModeRate, v)
		default:
			v, _ := ingest.Int(x.Value)
			pt.Concurrency = int(v)
			pt.Name = ingest.PointName(schema.ModeConcurrency, float64(v))
		}
		pt.Name = names.Unique(pt.Name)
		points = append(points, pt)
	}
	return points, mode
}

// span is what the first pass over the records keeps for the manifest:
// how many ok requests carry server token counts, and the run's time span.
type span struct {
	okCount, withUsage, withPrompt int
	epoch, last                    int64
}

// scan builds and checks every record in file order, keeping its start
// (the emit order) and the counts the manifest needs; the records
// themselves are rebuilt by emitSorted.
func (b *builder) scan() (span, error) {
	sp := span{epoch: math.MaxInt64, last: math.MinInt64}
	for i := range b.x.refs {
		ref := &b.x.refs[i]
		r, err := b.record(ref)
		if err != nil {
			return span{}, err
		}
		ref.start = r.start
		if r.rec.Status == schema.StatusOK {
			sp.okCount++
			if r.usage[0] >= 0 {
				sp.withUsage++
				if r.usage[1] >= 0 {
					sp.withPrompt++
				}
			}
		}
		sp.epoch = min(sp.epoch, r.start)
		sp.last = max(sp.last, r.end)
	}
	return sp, nil
}

// tokenProvenance records where the token counts come from: the servers'
// usage when every ok request has it (the returned serverCounts), else
// the number of responses.
func tokenProvenance(m *schema.Manifest, sp span) (serverCounts bool) {
	if sp.okCount == 0 || sp.withUsage != sp.okCount {
		m.Client.TokenCounts = "chunk-count-estimate"
		ingest.Derive(m, "output_tokens: number of responses for the %d of %d ok requests without usage.completion_tokens in their response bodies (GenAI-Perf counts tokens with its client tokenizer over the response text, which is not re-run here)", sp.okCount-sp.withUsage, sp.okCount)
		ingest.Absent(m, schema.FieldOutputTokens, "no usage.completion_tokens in every response body; the number of responses")
		ingest.Absent(m, schema.FieldInputTokens, "no usage.prompt_tokens in every response body; 0 or the server's count")
		return false
	}
	m.Client.TokenCounts = "server-usage"
	ingest.Derive(m, "output_tokens, input_tokens: usage.completion_tokens and usage.prompt_tokens of the response bodies (server-counted; GenAI-Perf itself counts with its client tokenizer)")
	ingest.Measured(m, schema.FieldOutputTokens)
	if sp.withPrompt == sp.okCount {
		ingest.Measured(m, schema.FieldInputTokens)
	} else {
		ingest.Absent(m, schema.FieldInputTokens, "usage.prompt_tokens missing from some response bodies; 0 there")
	}
	return true
}

// emitSorted rebuilds the records and emits them in order of start
// (sent_ns), ties in file order, so only the index stays in memory.
func (b *builder) emitSorted(serverCounts bool, epoch int64, emit ingest.RecordFunc) error {
	x := b.x
	sort.SliceStable(x.refs, func(i, j int) bool { return x.refs[i].start < x.refs[j].start })
	for i := range x.refs {
		r, err := b.record(&x.refs[i])
		if err != nil {
			return err
		}
		rec := &r.rec
		if serverCounts && r.usage[0] >= 0 {
			rec.OutputTokens, rec.InputTokens = r.usage[0], max(0, r.usage[1])
		}
		rec.SentNS = r.start - epoch
		rec.EndNS = r.end - epoch
		if err := emit(rec); err != nil {
			return err
		}
	}
	return nil
}

// build turns the indexed export into the import: a checking pass, the
// manifest, then the records emitted in order of start.
func build(x *exportIndex, sum Summary, sumF string, cfg *Config, emit ingest.RecordFunc) (*ingest.Result, error) {
	file := x.name
	streaming, streamFrom := x.streaming(cfg)
	points, mode := pointsOf(x.exps)
	b := &builder{x: x, points: points, streaming: streaming, streamFrom: streamFrom}
	// First every record is built and checked in file order.
	sp, err := b.scan()
	if err != nil {
		return nil, err
	}
	if len(x.refs) == 0 {
		return nil, ingest.Errorf(file, "no requests")
	}
	m := ingest.NewManifest(Tool, x.version, sp.epoch, sp.last)
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
	// Server token counts are used only when every ok request has them.
	serverCounts := tokenProvenance(&m, sp)
	if cfg != nil && cfg.Tokenizer != "" {
		m.Model.Tokenizer = cfg.Tokenizer
	}
	if cfg != nil && len(cfg.ModelNames) > 0 {
		m.Model.Name = cfg.ModelNames[0]
	}
	if m.Model.Name == "" {
		// The model, from the first request payload that names one.
		m.Model.Name = x.model
	}
	c := ingest.NewClaimSet(Tool)
	if sum != nil && len(points) == 1 {
		claimSummary(c, sum, sumF, points[0].Name, streaming)
	}
	claims, err := c.Claims()
	if err != nil {
		return nil, err
	}
	// Then the records are rebuilt and emitted in order of start.
	if err := b.emitSorted(serverCounts, sp.epoch, emit); err != nil {
		return nil, err
	}
	return &ingest.Result{Manifest: m, Claims: claims}, nil
}
