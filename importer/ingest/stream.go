package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path"

	"github.com/benchseal/benchseal/schema"
)

// RecordFunc receives each record an importer builds, in the order the
// records are stored. The importer keeps nothing of rec after the call;
// the callee must not keep it either (it may be reused).
type RecordFunc func(rec *schema.Record) error

// StreamFunc parses the files of one import, passing every record to
// emit as it is built instead of keeping it: the Result it returns has no
// Records. It never touches the file system.
type StreamFunc func(files []File, emit RecordFunc) (*Result, error)

// Stream turns an importer that builds all records in memory into a
// StreamFunc: the records are emitted after parse returns. Importers whose
// input cannot be read element by element (column-oriented documents) use
// it; the records are then in memory once, as the parser built them.
func Stream(parse func([]File) (*Result, error)) StreamFunc {
	return func(files []File, emit RecordFunc) (*Result, error) {
		res, err := parse(files)
		if err != nil {
			return nil, err
		}
		recs := res.Records
		res.Records = nil
		for i := range recs {
			if err := emit(&recs[i]); err != nil {
				return nil, err
			}
			recs[i] = schema.Record{} // let the record go once written
		}
		return res, nil
	}
}

// Collect runs stream and keeps every record in Result.Records: the
// in-memory form, for tests and callers that want the records.
func Collect(stream StreamFunc, files []File) (*Result, error) {
	var recs []schema.Record
	res, err := stream(files, func(rec *schema.Record) error {
		recs = append(recs, own(rec))
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Records = recs
	return res, nil
}

// own returns a copy of rec that shares no memory with it (an emitted
// record's slices may alias the parser's buffers).
func own(rec *schema.Record) schema.Record {
	r := *rec
	r.ChunksNS = cloneNonNil(rec.ChunksNS)
	r.ChunkTokens = cloneNonNil(rec.ChunkTokens)
	r.Orig = json.RawMessage(cloneNonNil([]byte(rec.Orig)))
	for _, p := range []**int64{&r.Item, &r.Shard, &r.ScheduledNS} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return r
}

// cloneNonNil copies s, keeping nil and empty apart (the encoding does).
func cloneNonNil[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// RecordFacts is what an import keeps of each record it has written: the
// send and end times per point (for the peak concurrency) and the number
// of warmup records per point, 16 bytes per record in all.
type RecordFacts struct {
	spans  map[string][][2]int64
	warmup map[string]int
}

// Add notes the facts of rec.
func (f *RecordFacts) Add(rec *schema.Record) {
	if f.spans == nil {
		f.spans, f.warmup = map[string][][2]int64{}, map[string]int{}
	}
	f.spans[rec.Point] = append(f.spans[rec.Point], [2]int64{rec.SentNS, rec.EndNS})
	if rec.Phase == schema.PhaseWarmup {
		f.warmup[rec.Point]++
	}
}

// factsOf returns the facts of res: res.Facts with res.Records added.
func factsOf(res *Result) *RecordFacts {
	f := &RecordFacts{}
	if res.Facts != nil {
		*f = *res.Facts
		if len(res.Records) > 0 {
			// Do not append to the caller's slices.
			f.spans = make(map[string][][2]int64, len(res.Facts.spans))
			for k, v := range res.Facts.spans {
				f.spans[k] = append([][2]int64(nil), v...)
			}
			f.warmup = make(map[string]int, len(res.Facts.warmup))
			for k, v := range res.Facts.warmup {
				f.warmup[k] = v
			}
		}
	}
	for i := range res.Records {
		f.Add(&res.Records[i])
	}
	return f
}

// WriteStream parses files with parse and writes the run directory at
// dest, writing each record as it is parsed: only RecordFacts are kept of
// the records. Once the manifest is finished (FromFiles, the overlay), the
// staged records are read back once and validated with the manifest and
// claims (Check's rules) before the run is moved into place. On any error
// nothing is left at dest. Result.Written counts the records written.
func WriteStream(dest, tool string, files []File, parse StreamFunc, opts WriteOptions) (*Result, error) {
	w, err := schema.CreateRun(dest, opts.Compress)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			w.Abort()
		}
	}()
	facts := &RecordFacts{}
	res, err := parse(files, func(rec *schema.Record) error {
		facts.Add(rec)
		if err := w.WriteRecord(rec); err != nil {
			return fmt.Errorf("write record %d: %w", w.Records().Count(), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Facts = facts
	if err := finishManifest(res, tool, files, opts); err != nil {
		return nil, err
	}
	for i := range res.Records {
		// A parser may still return records (the in-memory form).
		if err := w.WriteRecord(&res.Records[i]); err != nil {
			return nil, fmt.Errorf("write record %d: %w", i, err)
		}
	}
	res.Written = w.Records().Count()
	if err := w.CloseRecords(); err != nil {
		return nil, err
	}
	if err := checkStaged(res, w.RecordsPath(), opts); err != nil {
		return nil, err
	}
	if err := w.SetManifest(&res.Manifest); err != nil {
		return nil, err
	}
	if res.Claims != nil {
		if err := w.SetClaims(res.Claims); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		if _, _, err := w.AddAttachment(path.Base(f.Name), bytes.NewReader(f.Data)); err != nil {
			return nil, err
		}
	}
	for _, f := range res.Attachments {
		if _, _, err := w.AddAttachment(f.Name, bytes.NewReader(f.Data)); err != nil {
			return nil, err
		}
	}
	if err := w.Commit(); err != nil {
		return nil, err
	}
	committed = true
	return res, nil
}

// checkStaged validates res's manifest and claims and the records written
// to the staged file at recordsPath, as Finish does in memory.
func checkStaged(res *Result, recordsPath string, opts WriteOptions) error {
	rr, err := (&schema.RunDir{RecordsPath: recordsPath}).OpenRecordReader()
	if err != nil {
		return err
	}
	defer rr.Close()
	var readErr error
	var rec schema.Record
	next := func() (*schema.Record, error) {
		err := rr.NextInto(&rec)
		if err != nil && err != io.EOF {
			readErr = fmt.Errorf("read back the written records: %w", err)
		}
		return &rec, err
	}
	err = check(res, next)
	if readErr != nil {
		return readErr
	}
	return invalidRun(err, opts)
}
