package aiperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions.
const Tool = "aiperf"

// Metadata is the metadata block of one profile_export.jsonl line. The
// 2025 development schema has TimestampNS and CreditPhase; schema 1.x has
// RequestStartNS, RequestAckNS, RequestEndNS, BenchmarkPhase and the
// cancellation fields.
type Metadata struct {
	XRequestID         string      `json:"x_request_id"`
	SessionNum         json.Number `json:"session_num"`
	TimestampNS        json.Number `json:"timestamp_ns"`
	RequestStartNS     json.Number `json:"request_start_ns"`
	RequestAckNS       json.Number `json:"request_ack_ns"`
	RequestEndNS       json.Number `json:"request_end_ns"`
	CreditPhase        string      `json:"credit_phase"`
	BenchmarkPhase     string      `json:"benchmark_phase"`
	WasCancelled       bool        `json:"was_cancelled"`
	CancellationTimeNS json.Number `json:"cancellation_time_ns"`
}

// MetricValue is one per-request metric: a number or a list of numbers in
// Unit.
type MetricValue struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

// ErrorDetails is the error block of a failed request.
type ErrorDetails struct {
	Code    json.Number `json:"code"`
	Type    string      `json:"type"`
	Message string      `json:"message"`
}

// Line is one parsed profile_export.jsonl line; Raw keeps its bytes.
type Line struct {
	Metadata Metadata               `json:"metadata"`
	Metrics  map[string]MetricValue `json:"metrics"`
	Error    *ErrorDetails          `json:"error"`
	// Raw is the line exactly as written.
	Raw json.RawMessage `json:"-"`
	// LineNo is the 1-based line number.
	LineNo int `json:"-"`
}

// start returns the request's wall-clock start in Unix ns.
func (l *Line) start() (int64, error) {
	n := l.Metadata.RequestStartNS
	if n == "" {
		n = l.Metadata.TimestampNS
	}
	if n == "" {
		return 0, fmt.Errorf("neither metadata.request_start_ns nor metadata.timestamp_ns is set")
	}
	return ingest.Int(n)
}

func (l *Line) phase() string {
	p := l.Metadata.BenchmarkPhase
	if p == "" {
		p = l.Metadata.CreditPhase
	}
	if strings.EqualFold(p, "warmup") {
		return schema.PhaseWarmup
	}
	return schema.PhaseMeasure
}

// ParseExport reads profile_export.jsonl (either schema). Every line must
// be a record; errors name the file and line.
func ParseExport(r io.Reader, name string) ([]Line, error) {
	return ingest.ReadParse(r, name, parseExport)
}

func parseExport(data []byte, name string) ([]Line, error) {
	return ingest.ReadLines(data, name, "records", func(name string, lineNo int, raw []byte) (Line, bool, error) {
		l, ok, err := exportLine(name, lineNo, raw)
		l.Raw = append(json.RawMessage(nil), raw...)
		return l, ok, err
	})
}

// exportLine decodes and checks line lineNo of profile_export.jsonl; ok
// is false for a blank line. Raw is left unset.
func exportLine(name string, lineNo int, raw []byte) (l Line, ok bool, err error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return l, false, nil
	}
	if err := ingest.DecodeJSONLine(name, lineNo, raw, &l); err != nil {
		return l, false, err
	}
	if l.Metrics == nil && l.Error == nil {
		return l, false, ingest.RecordErrorf(name, lineNo, lineNo-1, "metrics", "missing: not an AIPerf profile_export.jsonl record")
	}
	if _, err := l.start(); err != nil {
		return l, false, ingest.RecordErrorf(name, lineNo, lineNo-1, "metadata", "%v", err)
	}
	l.LineNo = lineNo
	return l, true, nil
}

// Stats is one metric's block in profile_export_aiperf.json.
type Stats struct {
	Unit string `json:"unit"`
	// Values maps avg, min, max, p1…p99, std, count, sum to their values.
	Values map[string]json.Number `json:"-"`
}

// Summary is profile_export_aiperf.json in either schema: metric blocks
// under "records" (2025 development schema) or at the top level (1.x).
type Summary struct {
	SchemaVersion string `json:"schema_version"`
	AIPerfVersion string `json:"aiperf_version"`
	BenchmarkID   string `json:"benchmark_id"`
	StartTime     string `json:"start_time"`
	EndTime       string `json:"end_time"`
	WasCancelled  bool   `json:"was_cancelled"`
	InputConfig   struct {
		Endpoint struct {
			ModelNames []string `json:"model_names"`
			Type       string   `json:"type"`
			Streaming  *bool    `json:"streaming"`
			URL        string   `json:"url"`
			URLs       []string `json:"urls"`
		} `json:"endpoint"`
		// Models, Datasets and Phases are the schema 1.3 (AIPerf 0.10)
		// layout; the model is models.items[0].name.
		Models *struct {
			Items []struct {
				Name string `json:"name"`
			} `json:"items"`
		} `json:"models"`
		Datasets []struct {
			Name       string      `json:"name"`
			Type       string      `json:"type"`
			Dataset    string      `json:"dataset"`
			Path       string      `json:"path"`
			Format     string      `json:"format"`
			Entries    json.Number `json:"entries"`
			RandomSeed json.Number `json:"random_seed"`
		} `json:"datasets"`
		Phases    []Phase `json:"phases"`
		Tokenizer struct {
			Name     string `json:"name"`
			Revision string `json:"revision"`
		} `json:"tokenizer"`
		Input struct {
			Prompt struct {
				InputTokens struct {
					Mean json.Number `json:"mean"`
				} `json:"input_tokens"`
				OutputTokens struct {
					Mean json.Number `json:"mean"`
				} `json:"output_tokens"`
			} `json:"prompt"`
			RandomSeed json.Number `json:"random_seed"`
		} `json:"input"`
		Loadgen struct {
			Concurrency     json.Number `json:"concurrency"`
			RequestRate     json.Number `json:"request_rate"`
			RequestRateMode string      `json:"request_rate_mode"`
			ArrivalPattern  string      `json:"arrival_pattern"`
			RequestCount    json.Number `json:"request_count"`
			WarmupRequests  json.Number `json:"warmup_request_count"`
		} `json:"loadgen"`
		CLICommand string `json:"cli_command"`
	} `json:"input_config"`
	RunInfo *struct {
		RandomSeed json.Number `json:"random_seed"`
		CLICommand string      `json:"cli_command"`
		RunLabel   string      `json:"run_label"`
	} `json:"run_info"`
	TelemetryData *struct {
		Endpoints map[string]struct {
			GPUs map[string]struct {
				GPUName string `json:"gpu_name"`
			} `json:"gpus"`
		} `json:"endpoints"`
	} `json:"telemetry_data"`
	// Metrics maps metric tags to their statistics.
	Metrics map[string]Stats `json:"-"`
}

// ParseSummary reads profile_export_aiperf.json.
func ParseSummary(r io.Reader, name string) (*Summary, error) {
	return ingest.ReadParse(r, name, parseSummary)
}

func parseSummary(data []byte, name string) (*Summary, error) {
	var s Summary
	if err := ingest.DecodeJSON(name, data, &s); err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := ingest.DecodeJSON(name, data, &top); err != nil {
		return nil, err
	}
	blocks := top
	if rec, ok := top["records"]; ok {
		blocks = nil
		if err := ingest.DecodeJSON(name, rec, &blocks); err != nil {
			return nil, err
		}
	}
	s.Metrics = map[string]Stats{}
	for tag, raw := range blocks {
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		var m map[string]json.RawMessage
		if err := ingest.DecodeJSON(name, raw, &m); err != nil {
			return nil, err
		}
		unitRaw, ok := m["unit"]
		if !ok {
			continue // not a metric block (input_config, run_info, ...)
		}
		if _, hasAvg := m["avg"]; !hasAvg {
			continue
		}
		var st Stats
		if err := json.Unmarshal(unitRaw, &st.Unit); err != nil {
			return nil, ingest.RecordErrorf(name, 0, -1, tag+".unit", "not a string")
		}
		st.Values = map[string]json.Number{}
		for k, v := range m {
			if k == "unit" || k == "tag" || k == "header" {
				continue
			}
			var n *json.Number
			if err := ingest.DecodeJSON(name, v, &n); err != nil {
				continue // non-numeric field
			}
			if n != nil {
				st.Values[k] = *n
			}
		}
		s.Metrics[tag] = st
	}
	if len(s.Metrics) == 0 {
		return nil, ingest.Errorf(name, "no metric blocks: not an AIPerf profile_export_aiperf.json")
	}
	return &s, nil
}

// RawLine is one profile_export_raw.jsonl line (--export-level raw):
// absolute per-chunk perf-counter times.
type RawLine struct {
	Metadata    Metadata          `json:"metadata"`
	StartPerfNS json.Number       `json:"start_perf_ns"`
	Responses   []json.RawMessage `json:"responses"`
	Error       *ErrorDetails     `json:"error"`
	LineNo      int               `json:"-"`
}

// ParseRaw reads profile_export_raw.jsonl.
func ParseRaw(r io.Reader, name string) ([]RawLine, error) {
	return ingest.ReadParse(r, name, parseRaw)
}

func parseRaw(data []byte, name string) ([]RawLine, error) {
	return ingest.ReadLines(data, name, "records", rawLine)
}

// rawLine decodes and checks line lineNo of profile_export_raw.jsonl; ok
// is false for a blank line.
func rawLine(name string, lineNo int, raw []byte) (l RawLine, ok bool, err error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return l, false, nil
	}
	if err := ingest.DecodeJSONLine(name, lineNo, raw, &l); err != nil {
		return l, false, err
	}
	if l.StartPerfNS == "" {
		return l, false, ingest.RecordErrorf(name, lineNo, lineNo-1, "start_perf_ns", "missing: not an AIPerf raw export record")
	}
	l.LineNo = lineNo
	return l, true, nil
}

// rawChunks returns the offsets (ns since start_perf_ns) of the responses
// that carry content; [DONE] markers and responses without perf_ns are
// skipped.
func rawChunks(l *RawLine, name string) ([]int64, error) {
	start, err := ingest.Int(l.StartPerfNS)
	if err != nil {
		return nil, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "start_perf_ns", "%v", err)
	}
	var out []int64
	for j, resp := range l.Responses {
		var r struct {
			PerfNS json.Number `json:"perf_ns"`
			Text   string      `json:"text"`
		}
		if err := json.Unmarshal(resp, &r); err != nil || r.PerfNS == "" {
			continue
		}
		if strings.Contains(r.Text, "[DONE]") {
			continue
		}
		t, err := ingest.Int(r.PerfNS)
		if err != nil {
			return nil, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, fmt.Sprintf("responses[%d].perf_ns", j), "%v", err)
		}
		if t < start {
			return nil, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, fmt.Sprintf("responses[%d].perf_ns", j), "before start_perf_ns (negative duration)")
		}
		if len(out) > 0 && t-start < out[len(out)-1] {
			return nil, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, fmt.Sprintf("responses[%d].perf_ns", j), "earlier than the previous response")
		}
		out = append(out, t-start)
	}
	return out, nil
}

// unitNS returns the nanoseconds of one display unit.
func unitNS(u string) (int64, bool) {
	switch u {
	case "ns":
		return ingest.Nanosecond, true
	case "us":
		return ingest.Microsecond, true
	case "ms":
		return ingest.Millisecond, true
	case "s", "sec":
		return ingest.Second, true
	}
	return 0, false
}

// duration reads a per-request time metric as integer ns.
func (l *Line) duration(name, tag string) (int64, bool, error) {
	mv, ok := l.Metrics[tag]
	if !ok {
		return 0, false, nil
	}
	u, ok := unitNS(mv.Unit)
	if !ok {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".unit", "unknown time unit %q", mv.Unit)
	}
	var n json.Number
	if err := json.Unmarshal(mv.Value, &n); err != nil {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".value", "not a number")
	}
	v, err := ingest.NonNegNS(n, u, tag)
	if err != nil {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".value", "%v", err)
	}
	return v, true, nil
}

func (l *Line) count(name, tag string) (int64, bool, error) {
	mv, ok := l.Metrics[tag]
	if !ok {
		return 0, false, nil
	}
	var n json.Number
	if err := json.Unmarshal(mv.Value, &n); err != nil {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".value", "not a number")
	}
	v, err := ingest.Int(n)
	if err != nil || v < 0 {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".value", "not a token count: %s", n)
	}
	return v, true, nil
}

func (l *Line) gaps(name string) ([]int64, bool, error) {
	mv, ok := l.Metrics["inter_chunk_latency"]
	if !ok {
		return nil, false, nil
	}
	u, ok := unitNS(mv.Unit)
	if !ok {
		return nil, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics.inter_chunk_latency.unit", "unknown time unit %q", mv.Unit)
	}
	var ns []json.Number
	if err := json.Unmarshal(mv.Value, &ns); err != nil {
		return nil, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics.inter_chunk_latency.value", "not a list of numbers")
	}
	out := make([]int64, len(ns))
	for i, n := range ns {
		v, err := ingest.NonNegNS(n, u, fmt.Sprintf("inter_chunk_latency[%d]", i))
		if err != nil {
			return nil, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics.inter_chunk_latency.value", "%v", err)
		}
		out[i] = v
	}
	return out, true, nil
}

func status(e *ErrorDetails, cancelled bool) string {
	t := strings.ToLower(e.Type + " " + e.Message)
	switch {
	case cancelled || e.Code == "499" || strings.Contains(t, "cancel"):
		return schema.StatusCancelled
	case strings.Contains(t, "timeout") || strings.Contains(t, "timed out"):
		return schema.StatusTimeout
	}
	return schema.StatusError
}

// PointName is the load point of an AIPerf import when the summary states
// no load; otherwise the point is named after its concurrency or rate.
const PointName = "profile"

// Parse builds an import from AIPerf files with every record in memory
// (Stream, collected).
func Parse(files []ingest.File) (*ingest.Result, error) {
	return ingest.Collect(Stream, files)
}

// Stream builds an import from AIPerf files: profile_export.jsonl
// (required), profile_export_aiperf.json (the tool's summary, turned into
// claims) and profile_export_raw.jsonl (absolute per-chunk times). Each
// file is recognised by its content. The JSON Lines files are read line
// by line and only where each line is and when it started are kept (48
// bytes a line); each record is rebuilt from its line and passed to emit
// in order of start. Lines are decoded three times: to check them, to
// build and check every record in file order (so the first bad line is
// the one reported), and to emit the records sorted by start.
func Stream(files []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
	var (
		exp, raw *lineIndex
		sum      *Summary
		sumOf    string
	)
	for _, f := range files {
		head := ingest.Sniff(f.Data, 4096)
		switch {
		case len(head) == 0:
			return nil, ingest.Errorf(f.Name, "empty file")
		case bytes.HasPrefix(head, []byte("Metric,")):
			// The CSV twin of the summary: kept as an attachment only.
		case head[0] == '{' && firstLineHas(f.Data, "start_perf_ns"):
			if raw != nil {
				return nil, ingest.Errorf(f.Name, "a second raw export (first was %s)", raw.name)
			}
			r, err := indexLines(f.Data, f.Name, true)
			if err != nil {
				return nil, err
			}
			raw = r
		case head[0] == '{' && firstLineHas(f.Data, "metadata"):
			if exp != nil {
				return nil, ingest.Errorf(f.Name, "a second profile_export.jsonl (first was %s)", exp.name)
			}
			l, err := indexLines(f.Data, f.Name, false)
			if err != nil {
				return nil, err
			}
			exp = l
		case head[0] == '{':
			if sum != nil {
				return nil, ingest.Errorf(f.Name, "a second summary (first was %s)", sumOf)
			}
			s, err := parseSummary(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			sum, sumOf = s, f.Name
		default:
			return nil, ingest.Errorf(f.Name, "not an AIPerf export (expected profile_export.jsonl, profile_export_aiperf.json or profile_export_raw.jsonl)")
		}
	}
	if exp == nil && raw == nil {
		return nil, fmt.Errorf("import aiperf: %w: need profile_export.jsonl (or profile_export_raw.jsonl)", ingest.ErrNoFiles)
	}
	return build(exp, sum, sumOf, raw, emit)
}

// lineRef locates one checked line of a JSON Lines export.
type lineRef struct {
	off, n, lineNo int
	start          int64
	// startErr is why a raw export line has no start time.
	startErr error
}

// lineIndex is a checked JSON Lines export (profile_export.jsonl or, when
// raw, profile_export_raw.jsonl) as where its lines are.
type lineIndex struct {
	name string
	data []byte
	refs []lineRef
	raw  bool
	// byID maps a raw export's request ids to their line (the last one
	// with the id).
	byID map[string]int
}

// indexLines checks every line of data as profile_export.jsonl (or, when
// raw, profile_export_raw.jsonl) and keeps where each line is.
func indexLines(data []byte, name string, raw bool) (*lineIndex, error) {
	x := &lineIndex{name: name, data: data, raw: raw}
	if raw {
		x.byID = map[string]int{}
	}
	err := ingest.EachLine(data, func(lineNo, off int, b []byte) error {
		ref := lineRef{off: off, n: len(b), lineNo: lineNo}
		if raw {
			l, ok, err := rawLine(name, lineNo, b)
			if !ok {
				return err
			}
			ref.start, ref.startErr = l.start()
			if id := l.Metadata.XRequestID; id != "" {
				x.byID[id] = len(x.refs)
			}
		} else {
			l, ok, err := exportLine(name, lineNo, b)
			if !ok {
				return err
			}
			ref.start, _ = l.start()
		}
		x.refs = append(x.refs, ref)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(x.refs) == 0 {
		return nil, ingest.Errorf(name, "no records")
	}
	return x, nil
}

// bytes returns line i.
func (x *lineIndex) bytes(i int) []byte {
	r := x.refs[i]
	return x.data[r.off : r.off+r.n]
}

// line decodes line i of profile_export.jsonl; Raw aliases the file.
func (x *lineIndex) line(i int) (Line, error) {
	l, _, err := exportLine(x.name, x.refs[i].lineNo, x.bytes(i))
	l.Raw = x.bytes(i)
	return l, err
}

// rawLine decodes line i of profile_export_raw.jsonl.
func (x *lineIndex) rawLine(i int) (RawLine, error) {
	l, _, err := rawLine(x.name, x.refs[i].lineNo, x.bytes(i))
	return l, err
}

// builder rebuilds records from the lines of an export.
type builder struct {
	linesOf      string
	raw          *lineIndex
	epoch        int64
	point        string
	nonStreaming bool
}

func build(exp *lineIndex, sum *Summary, sumOf string, raw *lineIndex, emit ingest.RecordFunc) (*ingest.Result, error) {
	// Epoch: the earliest request start.
	epoch := int64(math.MaxInt64)
	last := int64(math.MinInt64)
	src := exp // the file whose lines are the records
	if exp != nil {
		for _, r := range exp.refs {
			epoch = min(epoch, r.start)
		}
	} else {
		src = raw
		for _, r := range raw.refs {
			if r.startErr != nil {
				return nil, ingest.RecordErrorf(raw.name, r.lineNo, r.lineNo-1, "metadata", "%v", r.startErr)
			}
			epoch = min(epoch, r.start)
		}
	}
	point := PointName
	version := ""
	if sum != nil {
		version = sum.AIPerfVersion
		ld := sum.load()
		switch {
		case ld.rate > 0:
			point = ingest.PointName(schema.ModeRate, ld.rate)
		case ld.concurrency > 0:
			point = ingest.PointName(schema.ModeConcurrency, float64(ld.concurrency))
		}
	}
	// A record without a TTFT metric is only valid when the summary says
	// the run was not streaming.
	nonStreaming := sum != nil && sum.InputConfig.Endpoint.Streaming != nil && !*sum.InputConfig.Endpoint.Streaming
	b := &builder{raw: raw, epoch: epoch, point: point, nonStreaming: nonStreaming}
	if exp != nil {
		b.linesOf = exp.name
	}
	// First every record is built and checked in file order, keeping
	// nothing but the latest end and whether the raw export gave chunks.
	usedRaw := false
	for i := range src.refs {
		_, end, fromRaw, err := b.record(src, i)
		if err != nil {
			return nil, err
		}
		last = max(last, end)
		usedRaw = usedRaw || fromRaw
	}
	rawOf := ""
	if raw != nil {
		rawOf = raw.name
	}
	m := ingest.NewManifest(Tool, version, epoch, last)
	if exp != nil {
		ingest.Derive(&m, "sent_ns: metadata request start (request_start_ns or timestamp_ns) minus the earliest start")
		if usedRaw {
			ingest.Derive(&m, "chunks_ns: responses[].perf_ns − start_perf_ns from %s (absolute per-chunk times)", rawOf)
		} else {
			ingest.Derive(&m, "chunks_ns: rebuilt as time_to_first_token (ttft before Oct 2025) + cumulative sum of inter_chunk_latency (ms, exact to the ns); non-streaming records: one chunk at request_latency")
		}
		ingest.Derive(&m, "end_ns: request_end_ns, else max_response_timestamp, else start + request_latency; failed requests without an end time end at their start")
		ingest.Derive(&m, "output_tokens: output_sequence_length (output + reasoning tokens, AIPerf's count); input_tokens: input_sequence_length")
	} else {
		ingest.Derive(&m, "output_tokens: number of content responses (no token counts in the raw export)")
	}
	declareProvenance(&m, exp != nil, usedRaw)
	if nonStreaming {
		ingest.Absent(&m, schema.FieldFirstChunk, "non-streaming: no first-token time; chunks_ns holds one element at request_latency")
		ingest.Derived(&m, schema.FieldChunks, "non-streaming: one element at request_latency")
	}
	m.Client.TokenCounts = "tool-reported"
	m.Decoding.Streaming = true
	m.Load.Mode = schema.ModeConcurrency
	pt := schema.Point{Name: point}
	claims := ingest.NewClaimSet(Tool)
	if sum != nil {
		fillManifest(&m, sum, &pt)
		addClaims(claims, sum, sumOf, point)
	}
	m.Load.Points = []schema.Point{pt}
	c, err := claims.Claims()
	if err != nil {
		return nil, err
	}
	// Then the records are rebuilt and emitted in order of start (sent_ns),
	// ties in file order.
	order := make([]int32, len(src.refs))
	for i := range order {
		order[i] = int32(i)
	}
	sort.SliceStable(order, func(i, j int) bool { return src.refs[order[i]].start < src.refs[order[j]].start })
	for _, i := range order {
		rec, _, _, err := b.record(src, int(i))
		if err != nil {
			return nil, err
		}
		if err := emit(&rec); err != nil {
			return nil, err
		}
	}
	return &ingest.Result{Manifest: m, Claims: c}, nil
}

// record rebuilds the record of line i of src, with the absolute time it
// ended and whether its chunk times come from the raw export.
func (b *builder) record(src *lineIndex, i int) (schema.Record, int64, bool, error) {
	if src.raw {
		rec, end, err := b.rawRecord(i)
		return rec, end, false, err
	}
	l, err := src.line(i)
	if err != nil {
		return schema.Record{}, 0, false, err
	}
	return b.exportRecord(&l)
}

// exportRecord rebuilds the record of one profile_export.jsonl line.
func (b *builder) exportRecord(l *Line) (rec schema.Record, endAbs int64, fromRaw bool, err error) {
	linesOf := b.linesOf
	fail := func(e error) (schema.Record, int64, bool, error) { return schema.Record{}, 0, false, e }
	start, _ := l.start()
	rec = schema.Record{
		ID:     fmt.Sprintf("%s:%d", path.Base(linesOf), l.LineNo),
		Point:  b.point,
		Phase:  l.phase(),
		SentNS: start - b.epoch,
		Orig:   l.Raw,
	}
	if l.Metadata.XRequestID != "" {
		rec.ID = l.Metadata.XRequestID
	}
	if v, ok, err := l.count(linesOf, "input_sequence_length"); err != nil {
		return fail(err)
	} else if ok {
		rec.InputTokens = v
	} else if v, ok, err := l.count(linesOf, "error_isl"); err == nil && ok {
		rec.InputTokens = v
	}
	if l.Metadata.RequestEndNS != "" {
		v, err := ingest.Int(l.Metadata.RequestEndNS)
		if err != nil {
			return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metadata.request_end_ns", "%v", err))
		}
		endAbs = v
	}
	if l.Error != nil {
		rec.Status = status(l.Error, l.Metadata.WasCancelled)
		rec.Error = strings.TrimSpace(l.Error.Type + ": " + l.Error.Message)
		rec.ChunksNS = []int64{}
		if endAbs == 0 && l.Metadata.CancellationTimeNS != "" {
			if v, err := ingest.Int(l.Metadata.CancellationTimeNS); err == nil {
				endAbs = v
			}
		}
		if endAbs == 0 {
			endAbs = start
		}
		if endAbs < start {
			return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metadata", "request ends before it starts (negative duration)"))
		}
		rec.EndNS = endAbs - b.epoch
		return rec, endAbs, false, nil
	}
	rec.Status = schema.StatusOK
	lat, okLat, err := l.duration(linesOf, "request_latency")
	if err != nil {
		return fail(err)
	}
	if !okLat {
		return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metrics.request_latency", "missing"))
	}
	ttftTag, okTTFT := firstTag(ttftTags, func(t string) bool { _, ok := l.Metrics[t]; return ok })
	var ttft int64
	if okTTFT {
		if ttft, _, err = l.duration(linesOf, ttftTag); err != nil {
			return fail(err)
		}
	} else if !b.nonStreaming {
		return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metrics", "no time-to-first-token metric (AIPerf writes it as %s): a streaming record cannot be rebuilt without it; if the run was not streaming, add profile_export_aiperf.json, which says so", strings.Join(ttftTags, " or ")))
	}
	osl, okOSL, err := l.count(linesOf, "output_sequence_length")
	if err != nil {
		return fail(err)
	}
	if !okOSL {
		return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metrics.output_sequence_length", "missing"))
	}
	rec.OutputTokens = osl
	gaps, okGaps, err := l.gaps(linesOf)
	if err != nil {
		return fail(err)
	}
	if b.raw != nil {
		if j, ok := b.raw.byID[l.Metadata.XRequestID]; ok {
			rl, err := b.raw.rawLine(j)
			if err != nil {
				return fail(err)
			}
			ch, err := rawChunks(&rl, b.raw.name)
			if err != nil {
				return fail(err)
			}
			// Content chunks: those from the first token to the last.
			var kept []int64
			for _, c := range ch {
				if (!okTTFT || c >= ttft) && c <= lat {
					kept = append(kept, c)
				}
			}
			if len(kept) > 0 {
				rec.ChunksNS = kept
				fromRaw = true
			}
		}
	}
	if rec.ChunksNS == nil {
		switch {
		case okTTFT && okGaps:
			ch := make([]int64, 0, len(gaps)+1)
			t := ttft
			ch = append(ch, t)
			for _, g := range gaps {
				t += g
				ch = append(ch, t)
			}
			rec.ChunksNS = ch
		case okTTFT:
			rec.ChunksNS = []int64{ttft}
			if lat != ttft {
				rec.ChunksNS = append(rec.ChunksNS, lat)
			}
		default:
			rec.ChunksNS = []int64{lat}
		}
	}
	if okTTFT && ttft > lat {
		return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metrics."+ttftTag, "larger than request_latency"))
	}
	if n := rec.ChunksNS[len(rec.ChunksNS)-1]; !fromRaw && (n-lat > int64(len(rec.ChunksNS)) || lat-n > int64(len(rec.ChunksNS))) {
		return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metrics.inter_chunk_latency", "time to first token + Σ inter_chunk_latency = %d ns, request_latency = %d ns: inconsistent values or units", n, lat))
	}
	if endAbs == 0 {
		if mr, ok := l.Metrics["max_response_timestamp"]; ok && mr.Unit == "ns" {
			var n json.Number
			if json.Unmarshal(mr.Value, &n) == nil {
				if v, err := ingest.Int(n); err == nil {
					endAbs = v
				}
			}
		}
	}
	if endAbs == 0 {
		endAbs = start + lat
	}
	if endAbs-start < rec.ChunksNS[len(rec.ChunksNS)-1] {
		endAbs = start + rec.ChunksNS[len(rec.ChunksNS)-1]
	}
	rec.EndNS = endAbs - b.epoch
	return rec, endAbs, fromRaw, nil
}

// rawRecord rebuilds the record of line i of the raw export, when there
// is no profile_export.jsonl.
func (b *builder) rawRecord(i int) (schema.Record, int64, error) {
	rl, err := b.raw.rawLine(i)
	if err != nil {
		return schema.Record{}, 0, err
	}
	rawOf := b.raw.name
	start, _ := rl.start()
	ch, err := rawChunks(&rl, rawOf)
	if err != nil {
		return schema.Record{}, 0, err
	}
	rec := schema.Record{ID: rl.Metadata.XRequestID, Point: b.point, Phase: phaseOf(rl.Metadata), SentNS: start - b.epoch, ChunksNS: ch}
	if rec.ID == "" {
		rec.ID = fmt.Sprintf("%s:%d", path.Base(rawOf), rl.LineNo)
	}
	if rl.Error != nil {
		rec.Status = status(rl.Error, rl.Metadata.WasCancelled)
		rec.Error = strings.TrimSpace(rl.Error.Type + ": " + rl.Error.Message)
	} else {
		rec.Status = schema.StatusOK
		rec.OutputTokens = int64(len(ch))
	}
	end := start
	if len(ch) > 0 {
		end = start + ch[len(ch)-1]
	}
	rec.EndNS = end - b.epoch
	return rec, end, nil
}

// firstLineHas reports whether the first line of data is a JSON object
// with the top-level key.
func firstLineHas(data []byte, key string) bool {
	line := data
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line = data[:i]
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil {
		return false
	}
	_, ok := obj[key]
	return ok
}

func (l *RawLine) start() (int64, error) {
	tmp := Line{Metadata: l.Metadata}
	return tmp.start()
}

func phaseOf(md Metadata) string {
	tmp := Line{Metadata: md}
	return tmp.phase()
}

// distributions maps AIPerf record-metric tags to replay distributions.
// AIPerf's "inter_token_latency" is (request_latency − TTFT)/(OSL − 1) per
// request, which the replay contract calls tpot; its pooled per-chunk gaps
// ("inter_chunk_latency") are the contract's itl.
var distributions = []struct {
	tags []string
	dist string
}{
	{ttftTags, "ttft_ns"},
	{[]string{"request_latency"}, "e2e_ns"},
	{[]string{"inter_token_latency"}, "tpot_ns"},
	{[]string{"inter_chunk_latency"}, "itl_ns"},
}

// percentiles are the statistics a t-digest approximates.
var percentiles = map[string]bool{"p1": true, "p5": true, "p10": true, "p25": true, "p50": true, "p75": true, "p90": true, "p95": true, "p99": true}

var statOrder = []string{"count", "avg", "std", "min", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "max"}

func addClaims(c *ingest.ClaimSet, s *Summary, file, point string) {
	approx, isApprox := approxICL(s)
	for _, d := range distributions {
		tag, ok := firstTag(d.tags, func(t string) bool { _, ok := s.Metrics[t]; return ok })
		if !ok {
			continue
		}
		st := s.Metrics[tag]
		u, ok := unitNS(st.Unit)
		if !ok {
			continue
		}
		for _, k := range statOrder {
			v, ok := st.Values[k]
			if !ok {
				continue
			}
			mul := u
			if k == "count" {
				mul = 1
			}
			if isApprox && d.dist == "itl_ns" && percentiles[k] {
				c.AddNotRecomputable(file, point, d.dist+"."+ingest.StatKeys[k], tag+"."+k, v, mul, approx)
				continue
			}
			c.Add(file, point, d.dist+"."+ingest.StatKeys[k], tag+"."+k, v, mul)
		}
	}
	scalar := func(tag, metric string, mul int64) {
		if st, ok := s.Metrics[tag]; ok {
			c.Add(file, point, metric, tag+".avg", st.Values["avg"], mul)
		}
	}
	scalar("request_count", "counts.ok", 1)
	if st, ok := s.Metrics["benchmark_duration"]; ok {
		if u, ok := unitNS(st.Unit); ok {
			c.Add(file, point, "window_ns", "benchmark_duration.avg", st.Values["avg"], u)
		}
	}
	scalar("request_throughput", "request_throughput", 1)
	scalar("output_token_throughput", "output_token_throughput", 1)
	scalar("total_token_throughput", "total_token_throughput", 1)
	scalar("goodput", "goodput", 1)
}

// declareProvenance states which record fields AIPerf measured: with
// per-record metrics (lines), the send times, token counts and first
// chunk; the chunk times are measured in the raw export (usedRaw) and
// rebuilt from inter-chunk latencies otherwise. The raw export alone
// stores no token counts.
func declareProvenance(m *schema.Manifest, lines, usedRaw bool) {
	ingest.Measured(m, schema.FieldSent, schema.FieldFirstChunk)
	if usedRaw {
		ingest.Measured(m, schema.FieldChunks, schema.FieldLastChunk)
	} else {
		ingest.Derived(m, schema.FieldChunks, "ttft + cumulative sum of inter_chunk_latency")
		ingest.Derived(m, schema.FieldLastChunk, "ttft + Σ inter_chunk_latency")
	}
	ingest.Derived(m, schema.FieldEnd, "request_end_ns, else max_response_timestamp, else start + request_latency")
	if lines {
		ingest.Measured(m, schema.FieldInputTokens, schema.FieldOutputTokens)
	} else {
		ingest.Absent(m, schema.FieldInputTokens, "the raw export stores no token counts; 0")
		ingest.Absent(m, schema.FieldOutputTokens, "the raw export stores no token counts; the number of content responses")
	}
}
