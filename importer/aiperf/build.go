package aiperf

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
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

// build rebuilds the records of exp (or, without it, of raw) with the
// summary sum, read from sumOf. With emit, the records are built in order
// of start (sent_ns), ties in file order, and passed to emit; the refs of
// the record file are sorted so. Without emit, they are built in file
// order and only checked: the first error is that of the first bad line.
func build(exp *lineIndex, sum *Summary, sumOf string, raw *lineIndex, tel *Telemetry, emit ingest.RecordFunc) (*ingest.Result, error) {
	src := exp // the file whose lines are the records
	if exp == nil {
		src = raw
		if raw.startErr != nil {
			return nil, ingest.RecordErrorf(raw.name, raw.startErrLine, raw.startErrLine-1, "metadata", "%w", raw.startErr)
		}
	}
	// Epoch: the earliest request start, or the earliest telemetry
	// reading when that is earlier (the run's clock then holds the
	// readings before the first request, which bound its energy).
	epoch := int64(math.MaxInt64)
	for _, r := range src.refs {
		epoch = min(epoch, r.start)
	}
	if tel != nil {
		epoch = min(epoch, tel.first())
	}
	point := PointName
	if sum != nil {
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
	if emit != nil {
		// Only the refs of the record file are sorted: those of a raw
		// export beside profile_export.jsonl stay in file order for byID.
		slices.SortStableFunc(src.refs, func(x, y lineRef) int { return cmp.Compare(x.start, y.start) })
	}
	// Of the records nothing is kept but the latest end and whether the
	// raw export gave chunks.
	last := int64(math.MinInt64)
	usedRaw := false
	// Of the profiling phase's records (AIPerf summarises that phase
	// alone): the span, and the valid records' input tokens (total_isl).
	isl := int64(0)
	mFirst, mLast := int64(math.MaxInt64), int64(math.MinInt64)
	for i := range src.refs {
		rec, end, fromRaw, err := b.record(src, i)
		if err != nil {
			return nil, err
		}
		last = max(last, end)
		usedRaw = usedRaw || fromRaw
		if rec.Phase == schema.PhaseMeasure {
			mFirst, mLast = min(mFirst, epoch+rec.SentNS), max(mLast, end)
			if rec.Status == schema.StatusOK {
				isl += rec.InputTokens
			}
		}
		if emit != nil {
			if err := emit(&rec); err != nil {
				return nil, err
			}
		}
	}
	m, pt := manifest(exp, raw, sum, epoch, last, usedRaw, nonStreaming)
	pt.Name = point
	m.Load.Points = []schema.Point{pt}
	w, err := phaseWindow(sum, sumOf, max(mLast-mFirst, 0))
	if err != nil {
		return nil, err
	}
	if w > 0 {
		m.Provenance.Windows = append(m.Provenance.Windows, schema.ToolWindow{Point: point, WindowNS: w, How: phaseWindowHow})
		ingest.SetNote(&m, "aiperf.rate_window", phaseWindowNote(w))
	}
	claims := ingest.NewClaimSet(Tool)
	if sum != nil {
		addClaims(claims, sum, sumOf, point)
	}
	c, err := claims.Claims()
	if err != nil {
		return nil, err
	}
	tol := ingest.Tolerance
	if w > 0 {
		tol = windowTolerance(w)
		c.Tolerance = tol
	}
	if err := checkInputRate(sum, sumOf, isl, w, tol); err != nil {
		return nil, err
	}
	res := &ingest.Result{Manifest: m, Claims: c}
	if err := addTelemetry(res, tel, epoch, mFirst, mLast, point); err != nil {
		return nil, err
	}
	return res, nil
}

// addTelemetry converts the telemetry export, when there is one, into
// res's accelerator evidence (gpuEvidence) around the measured records'
// span [mFirst, mLast] (absolute; empty when none was measured, and then
// every reading is before the point).
func addTelemetry(res *ingest.Result, tel *Telemetry, epoch, mFirst, mLast int64, point string) error {
	if tel == nil {
		return nil
	}
	noteTelemetry(&res.Manifest, tel)
	first, last := int64(math.MaxInt64), int64(math.MaxInt64)
	if mFirst <= mLast {
		first, last = mFirst-epoch, mLast-epoch
	}
	var err error
	res.Manifest.GPUMetrics, res.Attachments, err = gpuEvidence(tel, epoch, first, last, point)
	return err
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
	start, _ := l.Metadata.start()
	rec = schema.Record{
		ID:     fmt.Sprintf("%s:%d", path.Base(linesOf), l.LineNo),
		Point:  b.point,
		Phase:  l.Metadata.phase(),
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
			return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metadata.request_end_ns", "%w", err))
		}
		endAbs = v
	}
	if l.Error != nil {
		return b.failedRecord(l, rec, start, endAbs)
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
	if rec.ChunksNS, err = b.rawContentChunks(l, okTTFT, ttft, lat); err != nil {
		return fail(err)
	}
	fromRaw = rec.ChunksNS != nil
	if !fromRaw {
		rec.ChunksNS = exportChunks(okTTFT, okGaps, ttft, lat, gaps)
	}
	if okTTFT && ttft > lat {
		return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metrics."+ttftTag, "larger than request_latency"))
	}
	if n := rec.ChunksNS[len(rec.ChunksNS)-1]; !fromRaw && (n-lat > int64(len(rec.ChunksNS)) || lat-n > int64(len(rec.ChunksNS))) {
		return fail(ingest.RecordErrorf(linesOf, l.LineNo, l.LineNo-1, "metrics.inter_chunk_latency", "time to first token + Σ inter_chunk_latency = %d ns, request_latency = %d ns: inconsistent values or units", n, lat))
	}
	endAbs = exportEnd(l, endAbs, start, lat, rec.ChunksNS[len(rec.ChunksNS)-1])
	rec.EndNS = endAbs - b.epoch
	return rec, endAbs, fromRaw, nil
}

// failedRecord finishes rec, the record of a line with an error: no
// chunks, ended at request_end_ns (endAbs when non-zero), else at its
// cancellation, else at its start.
func (b *builder) failedRecord(l *Line, rec schema.Record, start, endAbs int64) (schema.Record, int64, bool, error) {
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
		return schema.Record{}, 0, false, ingest.RecordErrorf(b.linesOf, l.LineNo, l.LineNo-1, "metadata", "request ends before it starts (negative duration)")
	}
	rec.EndNS = endAbs - b.epoch
	return rec, endAbs, false, nil
}

// rawContentChunks is l's content chunks (from the first token to the
// request's latency) from the raw export's line of the same request, nil
// when there is no raw export, no such line or no such chunk.
func (b *builder) rawContentChunks(l *Line, okTTFT bool, ttft, lat int64) ([]int64, error) {
	if b.raw == nil {
		return nil, nil
	}
	j, ok := b.raw.byID[l.Metadata.XRequestID]
	if !ok {
		return nil, nil
	}
	rl, err := b.raw.rawLine(j)
	if err != nil {
		return nil, err
	}
	ch, err := rawChunks(&rl, b.raw.name)
	if err != nil {
		return nil, err
	}
	var kept []int64
	for _, c := range ch {
		if (!okTTFT || c >= ttft) && c <= lat {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// exportChunks rebuilds the chunk times from the export's metrics alone:
// ttft plus the cumulative inter-chunk gaps, else [ttft, latency], else
// (non-streaming) the latency only.
func exportChunks(okTTFT, okGaps bool, ttft, lat int64, gaps []int64) []int64 {
	switch {
	case okTTFT && okGaps:
		ch := make([]int64, 0, len(gaps)+1)
		t := ttft
		ch = append(ch, t)
		for _, g := range gaps {
			t += g
			ch = append(ch, t)
		}
		return ch
	case okTTFT:
		ch := []int64{ttft}
		if lat != ttft {
			ch = append(ch, lat)
		}
		return ch
	default:
		return []int64{lat}
	}
}

// exportEnd is when a successful request ended (absolute ns): endAbs
// (request_end_ns) when non-zero, else max_response_timestamp, else start
// + latency; never before its last chunk.
func exportEnd(l *Line, endAbs, start, lat, lastChunk int64) int64 {
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
	if endAbs-start < lastChunk {
		endAbs = start + lastChunk
	}
	return endAbs
}

// rawRecord rebuilds the record of line i of the raw export, when there
// is no profile_export.jsonl.
func (b *builder) rawRecord(i int) (schema.Record, int64, error) {
	rl, err := b.raw.rawLine(i)
	if err != nil {
		return schema.Record{}, 0, err
	}
	rawOf := b.raw.name
	start, _ := rl.Metadata.start()
	ch, err := rawChunks(&rl, rawOf)
	if err != nil {
		return schema.Record{}, 0, err
	}
	rec := schema.Record{ID: rl.Metadata.XRequestID, Point: b.point, Phase: rl.Metadata.phase(), SentNS: start - b.epoch, ChunksNS: ch}
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
