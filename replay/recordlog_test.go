package replay

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// fullRecord sets every field of a Record, by reflection, so that a field
// added to Record and forgotten by the records log fails the round trip.
func fullRecord(t *testing.T) *schema.Record {
	rec := new(schema.Record)
	fill(t, reflect.ValueOf(rec).Elem(), "Record")
	return rec
}

func fill(t *testing.T, v reflect.Value, name string) {
	switch {
	case v.Kind() == reflect.String:
		v.SetString("s-" + name + "-é")
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		v.SetInt(-int64(len(name)) * 1e15)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Int64:
		v.Set(reflect.ValueOf([]int64{5, 3, math.MaxInt64, math.MinInt64, 0}))
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		v.SetBytes([]byte(`{"` + name + `":[1,2.5e300]}`))
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem(), name)
		v.Set(p)
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			fill(t, v.Field(i), name+"."+v.Type().Field(i).Name)
		}
	default:
		t.Fatalf("%s is a %s: teach the records log (recordlog.go) and this test the field", name, v.Type())
	}
}

func logged(t *testing.T, recs []*schema.Record) *recordLog {
	l := &recordLog{}
	t.Cleanup(l.close)
	for _, r := range recs {
		l.add(r)
	}
	return l
}

// readLog reads a log back, by Next when owned, else by NextInto (whose
// records are copied, as replay's batches copy them).
func readLog(t *testing.T, l *recordLog, owned bool) []*schema.Record {
	it, err := l.open()
	if err != nil {
		t.Fatal(err)
	}
	var out []*schema.Record
	for {
		var rec *schema.Record
		if owned {
			rec, err = it.Next()
		} else {
			rec = new(schema.Record)
			if err = it.(recordInto).NextInto(rec); err == nil {
				rec.ChunksNS, rec.ChunkTokens = cloneNil(rec.ChunksNS), cloneNil(rec.ChunkTokens)
				if rec.Orig != nil {
					rec.Orig = append(json.RawMessage{}, rec.Orig...)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

// TestRecordLogRoundTripsEveryField: every field of a record comes back
// from the log as it went in — set or absent, empty or nil, extreme
// values that make the deltas wrap, arrays at the edges of each width —
// from memory and from a file, by Next
// and by NextInto.
func TestRecordLogRoundTripsEveryField(t *testing.T) {
	full := fullRecord(t)
	empty := &schema.Record{ChunksNS: []int64{}, ChunkTokens: []int64{}, Orig: json.RawMessage{}, Server: &schema.ServerReport{}}
	wrap := &schema.Record{SentNS: math.MaxInt64, EndNS: math.MinInt64, ChunksNS: []int64{math.MinInt64, math.MaxInt64, -1}}
	// The widths appendLogInts chooses, each at its edges: one byte,
	// four, and varints past them.
	byte1 := &schema.Record{SentNS: 1e12, ChunksNS: []int64{0, 255}, ChunkTokens: []int64{0, 1, 255}}
	byte4 := &schema.Record{SentNS: 7, ChunksNS: []int64{256, 256 + 1<<32 - 1}, ChunkTokens: []int64{256, 1<<32 - 1}}
	wide := &schema.Record{SentNS: 7, ChunksNS: []int64{1 << 32, 7}, ChunkTokens: []int64{1 << 32, -1}}
	// Three bytes (deltas under 2²⁴, at their edges) and one repeated
	// count (logSame), at logSameMax and past it, and a negative one.
	byte3 := &schema.Record{ChunksNS: []int64{256, 256 + 1<<24 - 1, 2 << 24}, ChunkTokens: []int64{1 << 24, 1<<24 - 1}}
	ones := make([]int64, logSameMax)
	for i := range ones {
		ones[i] = 1
	}
	same := &schema.Record{ChunksNS: []int64{5, 5, 5}, ChunkTokens: ones}
	longer := &schema.Record{ChunkTokens: append(slices.Clone(ones), 1)}
	negative := &schema.Record{ChunkTokens: []int64{-3, -3}}
	recs := []*schema.Record{empty, full, {}, empty, wrap, full, byte1, byte4, wide, byte3, same, longer, negative}
	for _, mem := range []int{8 << 20, 1} {
		old := logMemory
		logMemory = mem
		l := logged(t, recs)
		logMemory = old
		if inFile := l.f != nil; inFile != (mem == 1) || !l.usable() {
			t.Fatalf("logMemory %d: in a file %v, usable %v", mem, inFile, l.usable())
		}
		for _, owned := range []bool{true, false} {
			got := readLog(t, l, owned)
			if len(got) != len(recs) {
				t.Fatalf("logMemory %d, Next %v: %d records back, want %d", mem, owned, len(got), len(recs))
			}
			for i := range recs {
				if !reflect.DeepEqual(got[i], recs[i]) {
					t.Errorf("logMemory %d, Next %v: record %d differs after the log:\n%#v\nwant\n%#v", mem, owned, i, *got[i], *recs[i])
				}
			}
		}
	}
}

// withLogMemory sets logMemory for one test.
func withLogMemory(t *testing.T, n int) {
	old := logMemory
	logMemory = n
	t.Cleanup(func() { logMemory = old })
}

// logInFile logs one full record with the log in a file, under a
// temporary directory of the test's own, which it returns.
func logInFile(t *testing.T) (*recordLog, string) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	withLogMemory(t, 1)
	l := logged(t, []*schema.Record{fullRecord(t)})
	if l.f == nil {
		t.Fatal("the log is not in a file")
	}
	return l, dir
}

// TestRecordLogFileLeavesNothing: the log's file is unlinked as soon as it
// exists, so a killed replay leaves no file behind.
func TestRecordLogFileLeavesNothing(t *testing.T) {
	_, dir := logInFile(t)
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("%s holds %d entries while the log is open", dir, len(left))
	}
}

// TestRecordLogCloseRemovesOnlyItsOwnFile: once the log's file is
// unlinked, its name is free; a file created there afterwards (by another
// process) survives the log's close.
func TestRecordLogCloseRemovesOnlyItsOwnFile(t *testing.T) {
	l, _ := logInFile(t)
	other := l.f.Name()
	if err := os.WriteFile(other, []byte("another's"), 0o600); err != nil {
		t.Fatal(err)
	}
	l.close()
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("the log's close removed a file it did not create: %v", err)
	}
}

// TestRecordLogWithoutTempDirIsAbandoned: a log that cannot move to a file
// says it is not usable (the second pass then reads the source).
func TestRecordLogWithoutTempDirIsAbandoned(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "absent"))
	withLogMemory(t, 1)
	l := logged(t, []*schema.Record{fullRecord(t), {}})
	if l.usable() || l.buf != nil {
		t.Fatalf("usable %v, %d bytes held", l.usable(), len(l.buf))
	}
}

// TestRecordLogWhoseLastWriteFailsIsNotUsable: a log in a file whose
// pending bytes cannot be written when the first pass ends (a disk full
// at that moment) says it is not usable, so the second pass reads the
// source; it does not fail the replay.
func TestRecordLogWhoseLastWriteFailsIsNotUsable(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	withLogMemory(t, 1)
	l := logged(t, []*schema.Record{fullRecord(t), {}})
	if l.f == nil || len(l.buf) == 0 {
		t.Fatalf("want a log in a file with bytes pending: in a file %v, %d pending", l.f != nil, len(l.buf))
	}
	// A file of the test's own opened read-only (writes fail) stands for
	// the full disk; close removes it by name, so never a system file.
	name := filepath.Join(t.TempDir(), "read-only")
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ro, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	l.f.Close()
	l.f = ro
	if l.usable() {
		t.Fatal("a log whose pending bytes could not be written says it is usable")
	}
}

// TestRecordLogRefusesATruncatedFrame: a frame cut short is an error, not
// a record with zeros.
func TestRecordLogRefusesATruncatedFrame(t *testing.T) {
	l := logged(t, []*schema.Record{fullRecord(t)})
	l.buf = l.buf[:len(l.buf)-3]
	it, err := l.open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := it.Next(); !errors.Is(err, errLogCorrupt) {
		t.Fatalf("error = %v, want errLogCorrupt", err)
	}
}

// TestRecordLogFileFramesLargerThanItsBuffer: from a file the iterator
// decodes a frame in its read buffer; one larger than that buffer is
// copied, and comes back the same, between records that are not.
func TestRecordLogFileFramesLargerThanItsBuffer(t *testing.T) {
	withLogMemory(t, 1)
	big := fullRecord(t)
	big.Orig = json.RawMessage(`"` + strings.Repeat("x", 3*logFlush) + `"`)
	big.ChunksNS = make([]int64, logFlush/2)
	for i := range big.ChunksNS {
		big.ChunksNS[i] = int64(i) * 7e6
	}
	recs := []*schema.Record{fullRecord(t), big, fullRecord(t), big}
	l := logged(t, recs)
	if l.f == nil || !l.usable() {
		t.Fatal("the log is not in a usable file")
	}
	for _, owned := range []bool{true, false} {
		got := readLog(t, l, owned)
		if !reflect.DeepEqual(got, recs) {
			t.Fatalf("Next %v: the records differ after the log", owned)
		}
	}
}

// TestRecordLogFileRefusesATruncatedFrame: a file log that ends inside a
// frame, small or larger than the read buffer, is an error, never io.EOF.
func TestRecordLogFileRefusesATruncatedFrame(t *testing.T) {
	withLogMemory(t, 1)
	big := fullRecord(t)
	big.Orig = json.RawMessage(`"` + strings.Repeat("x", 2*logFlush) + `"`)
	for _, rec := range []*schema.Record{fullRecord(t), big} {
		for _, cut := range []int64{1, 3, 5} {
			l := logged(t, []*schema.Record{rec})
			if !l.usable() {
				t.Fatal("the log is not usable")
			}
			l.written -= cut
			it, err := l.open()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := it.Next(); !errors.Is(err, errLogCorrupt) || errors.Is(err, io.EOF) {
				t.Fatalf("cut %d: error = %v, want errLogCorrupt and not io.EOF", cut, err)
			}
		}
	}
}

// FuzzRecordLogRoundTrip: any record comes back from the log unchanged.
func FuzzRecordLogRoundTrip(f *testing.F) {
	f.Add("r1", "p", 0, "measure", int64(5), int64(9), []byte{1, 200, 3}, []byte(`{"a":1}`), int64(-1), "ok", uint8(0xff))
	f.Fuzz(func(t *testing.T, id, point string, repeat int, phase string, sent, end int64, chunks, orig []byte, opt int64, status string, present uint8) {
		rec := &schema.Record{ID: id, Point: point, Repeat: repeat, Phase: phase, SentNS: sent, EndNS: end, Status: status, Error: status + id}
		ptr := func(bit uint8) *int64 {
			if present&bit == 0 {
				return nil
			}
			v := opt * int64(bit)
			return &v
		}
		rec.Item, rec.Shard, rec.Session, rec.Turn, rec.ScheduledNS = ptr(1), ptr(2), ptr(4), ptr(8), ptr(16)
		if present&32 != 0 {
			rec.Server = &schema.ServerReport{CacheN: ptr(64), PredictedNS: ptr(128)}
		}
		if chunks != nil {
			rec.ChunksNS = []int64{}
			for i, c := range chunks {
				rec.ChunksNS = append(rec.ChunksNS, int64(c)*opt+int64(i))
			}
			rec.ChunkTokens = append([]int64{}, rec.ChunksNS...)
		}
		if orig != nil {
			rec.Orig = orig
		}
		l := logged(t, []*schema.Record{rec, rec})
		for _, owned := range []bool{true, false} {
			if got := readLog(t, l, owned); len(got) != 2 || !reflect.DeepEqual(got[1], rec) {
				t.Fatalf("Next %v: %+v, want %+v", owned, got, rec)
			}
		}
	})
}
