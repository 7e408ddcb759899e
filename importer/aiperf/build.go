package aiperf

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

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
