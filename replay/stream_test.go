package replay

import (
	"context"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// zstdSynthRun writes a small synthetic run with zstd records.
func zstdSynthRun(t testing.TB, requests int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := schema.CreateRun(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	o := synth.DefaultOptions()
	o.Requests = requests
	if _, err := synth.Generate(context.Background(), o, w); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStreamedReplayMatchesInMemory checks that the pipelined replay of a
// run directory (records decoded into reused batches) gives exactly the
// result of a replay of the same records held in memory, one by one.
func TestStreamedReplayMatchesInMemory(t *testing.T) {
	rd, err := schema.OpenRunDir(zstdSynthRun(t, 3000))
	if err != nil {
		t.Fatal(err)
	}
	it, err := rd.OpenRecords()
	if err != nil {
		t.Fatal(err)
	}
	mem := &memRun{m: rd.Manifest()}
	for {
		rec, err := it.Next()
		if err != nil {
			break
		}
		mem.recs = append(mem.recs, rec)
	}
	it.Close()
	if len(mem.recs) < batchRecords*3 {
		t.Fatalf("only %d records: too few to span batches", len(mem.recs))
	}
	for _, o := range []Options{
		{},
		{Definitions: "vllm"},
		{Smooth: &SmoothParams{Alpha: big.NewRat(1, 2), VNS: 2e7, F: "linear", LNS: 2e9}, MLPerf: &MLPerfLimits{TTFTNS: 45e7, TPOTNS: 4e7}},
	} {
		got, err := Replay(context.Background(), rd, o)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Replay(context.Background(), mem, o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("definitions %q: streamed replay differs from the in-memory one", o.Definitions)
		}
	}
}

// TestStreamedReplayStopsAtFirstError checks that records before a bad
// line are processed in order and that the error names its line.
func TestStreamedReplayStopsAtFirstError(t *testing.T) {
	dir := zstdSynthRun(t, 3000)
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite the records uncompressed with line 1500 broken.
	rr, err := rd.OpenRecordReader()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for n := 1; ; n++ {
		rec, err := rr.Next()
		if err != nil {
			break
		}
		line, _ := schema.AppendRecord(nil, rec)
		if n == 1500 {
			line = []byte(strings.Replace(string(line), `"status":"`, `"status":"x`, 1))
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	rr.Close()
	os.Remove(filepath.Join(dir, schema.RecordsZstdFile))
	if err := os.WriteFile(filepath.Join(dir, schema.RecordsFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err = schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Replay(context.Background(), rd, Options{})
	if err == nil || !strings.Contains(err.Error(), `unknown status "x`) {
		t.Fatalf("error = %v, want the unknown status of line 1500", err)
	}
	// A cancelled context stops the replay before any record.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Replay(ctx, rd, Options{}); err != context.Canceled {
		t.Fatalf("cancelled replay: %v", err)
	}
}
