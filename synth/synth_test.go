package synth_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

func generate(t *testing.T, o synth.Options, compress bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := schema.CreateRun(dir, compress)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Generate(context.Background(), o, w); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateSameSeedSameBytes(t *testing.T) {
	for _, compress := range []bool{false, true} {
		o := synth.DefaultOptions()
		a := readTree(t, generate(t, o, compress))
		b := readTree(t, generate(t, o, compress))
		if len(a) != 3 {
			t.Fatalf("run has files %v, want manifest, records, workload", len(a))
		}
		for name := range a {
			if !bytes.Equal(a[name], b[name]) {
				t.Fatalf("compress=%v: %s differs between two runs with the same seed", compress, name)
			}
		}
		o.Seed = 2
		c := readTree(t, generate(t, o, compress))
		rec := schema.RecordsFile
		if compress {
			rec = schema.RecordsZstdFile
		}
		if bytes.Equal(a[rec], c[rec]) {
			t.Fatal("seeds 1 and 2 gave the same records")
		}
	}
}

func TestGenerateIsValidAndRich(t *testing.T) {
	for _, mode := range []string{schema.ModeConcurrency, schema.ModeRate} {
		t.Run(mode, func(t *testing.T) {
			o := synth.DefaultOptions()
			o.Mode = mode
			if mode == schema.ModeRate {
				o.Points = synth.DefaultRatePoints
			}
			o.Requests = 6000
			dir := generate(t, o, false)
			sum, err := schema.CheckRunDir(context.Background(), dir, 20, nil)
			if err != nil {
				t.Fatalf("synthetic run is invalid: %v", err)
			}
			for _, st := range []string{schema.StatusOK, schema.StatusError, schema.StatusTimeout, schema.StatusCancelled, schema.StatusRejected} {
				if sum.Status[st] == 0 {
					t.Errorf("no %s records in %+v", st, sum.Status)
				}
			}
			if sum.Warmup != int64(o.Warmup*len(o.Points)) {
				t.Errorf("warmup records = %d, want %d", sum.Warmup, o.Warmup*len(o.Points))
			}
			if sum.Measure != int64(o.Requests) {
				t.Errorf("measured records = %d, want %d", sum.Measure, o.Requests)
			}
			checkLoadRaisesLatency(t, dir)
		})
	}
}

// checkLoadRaisesLatency checks that median e2e latency of ok records grows
// from the first point to the last.
func checkLoadRaisesLatency(t *testing.T, dir string) {
	t.Helper()
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := rd.OpenRecordReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	lat := map[string][]int64{}
	var rec schema.Record
	for rr.NextInto(&rec) == nil {
		if rec.Status == schema.StatusOK && rec.Phase == schema.PhaseMeasure {
			lat[rec.Point] = append(lat[rec.Point], rec.EndNS-rec.SentNS)
		}
	}
	pts := rd.Manifest().Load.Points
	first, last := median(lat[pts[0].Name]), median(lat[pts[len(pts)-1].Name])
	if last < first*3/2 {
		t.Fatalf("median e2e at %s = %d ns, at %s = %d ns: latency does not grow with load", pts[0].Name, first, pts[len(pts)-1].Name, last)
	}
}

func median(v []int64) int64 {
	s := append([]int64(nil), v...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

func TestOptionsValidate(t *testing.T) {
	bad := []func(*synth.Options){
		func(o *synth.Options) { o.Requests = 0 },
		func(o *synth.Options) { o.Mode = "burst" },
		func(o *synth.Options) { o.Points = nil },
		func(o *synth.Options) { o.Points = []float64{2.5} },
		func(o *synth.Options) { o.Points = []float64{4, 4} },
		func(o *synth.Options) { o.Repeats = 0 },
		func(o *synth.Options) { o.Warmup = -1 },
	}
	for i, f := range bad {
		o := synth.DefaultOptions()
		f(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("case %d: Validate accepted %+v", i, o)
		}
	}
}

func TestGenerateStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w, err := schema.CreateRun(filepath.Join(t.TempDir(), "run"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := synth.Generate(ctx, synth.DefaultOptions(), w); err == nil {
		t.Fatal("Generate ignored a cancelled context")
	}
}

func BenchmarkGenerate(b *testing.B) {
	o := synth.DefaultOptions()
	for b.Loop() {
		w, err := schema.CreateRun(filepath.Join(b.TempDir(), "run"), false)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := synth.Generate(context.Background(), o, w); err != nil {
			b.Fatal(err)
		}
		w.Abort()
	}
}

func TestWriteRunFailureLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	o := synth.DefaultOptions()
	o.Requests = 0 // invalid
	if _, _, err := synth.WriteRun(context.Background(), dir, o, false); err == nil {
		t.Fatal("want an error for 0 requests")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("something was left at %s: %v", dir, err)
	}
	o = synth.DefaultOptions()
	o.Requests, o.Points, o.Repeats = 20, []float64{2}, 1
	m, n, err := synth.WriteRun(context.Background(), dir, o, false)
	if err != nil || n != 20+8 || m.RunID == "" { // 20 measured, 8 warmup
		t.Fatalf("WriteRun = %v records, %v", n, err)
	}
	if err := schema.ValidateRunDocuments(dir, 0); err != nil {
		t.Fatal(err)
	}
}

// TestSplitSpreadsTheRemainder: a total that is not a multiple of points ×
// repeats is spread one request per repeat over the first points; what is
// left under one per repeat is left out and said.
func TestSplitSpreadsTheRemainder(t *testing.T) {
	for _, c := range []struct {
		requests, repeats int
		per               []int
		total             int
		note              string
	}{
		{1800, 2, []int{300, 300, 300}, 1800, ""},
		{4000, 2, []int{667, 667, 666}, 4000, "first 2 point(s) gets 667, of the others 666"},
		{4001, 2, []int{667, 667, 666}, 4000, "1 request(s) fewer than one per repeat are left out"},
		{7, 2, []int{1, 1, 1}, 6, "each repeat of every point gets 1; 1 request(s)"},
	} {
		o := synth.DefaultOptions()
		o.Points, o.Requests, o.Repeats = []float64{1, 4, 16}, c.requests, c.repeats
		per, total, note := o.Split()
		if fmt.Sprint(per) != fmt.Sprint(c.per) || total != c.total || !strings.Contains(note, c.note) || (c.note == "") != (note == "") {
			t.Errorf("%d over 3 × %d: %v %d %q, want %v %d %q", c.requests, c.repeats, per, total, note, c.per, c.total, c.note)
		}
	}
}
