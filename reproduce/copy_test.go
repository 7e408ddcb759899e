package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/reproduce/rerun"
	"github.com/benchseal/benchseal/schema"
)

// editRecords rewrites dir's records.jsonl by edit, which gets the
// records (as JSON objects) in file order and returns the ones to write.
func editRecords(t *testing.T, dir string, edit func([]map[string]any) []map[string]any) {
	t.Helper()
	p := filepath.Join(dir, schema.RecordsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		var r map[string]any
		if err := d.Decode(&r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	var out strings.Builder
	for _, r := range edit(recs) {
		l, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(l, '\n'))
	}
	if err := os.WriteFile(p, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckNotACopy: the original's records, re-ordered (repeat-major, as
// capture writes them, where the bundle streams them point-major), with
// 1–3 ns added to every end_ns, or both, under a new run id and start
// time, are refused as a copy, naming how many records repeat the
// original's timings; so are the original's records with every duration
// 1 % longer, or every time scaled by 0.9, 0.98 or 1.08 (with ±20 µs on
// every chunk), which keep the shape of its chunk gaps; another run of the
// test (every repeat 0.8–4 % slower, its gaps its own) passes.
func TestCheckNotACopy(t *testing.T) {
	dir := t.TempDir()
	origDir := filepath.Join(dir, "orig")
	orig := synthRun(t, origDir, 3, 3, true, "")
	repeatMajor := func(recs []map[string]any) []map[string]any {
		slices.SortStableFunc(recs, func(a, b map[string]any) int {
			return strings.Compare(string(a["repeat"].(json.Number)), string(b["repeat"].(json.Number)))
		})
		return recs
	}
	jitter := func(recs []map[string]any) []map[string]any {
		for i, r := range recs {
			e, _ := r["end_ns"].(json.Number).Int64()
			r["end_ns"] = e + 1 + int64(i%3)
		}
		return recs
	}
	stretch := func(recs []map[string]any) []map[string]any {
		for _, r := range recs {
			s, _ := r["sent_ns"].(json.Number).Int64()
			e, _ := r["end_ns"].(json.Number).Int64()
			r["end_ns"] = s + (e-s)*101/100
		}
		return recs
	}
	// retime scales every record's offsets from its send by f and its send
	// by f from the first send, plus shift ns on every chunk (each record's
	// own sign), as a copy moved to another run's send times would be.
	retime := func(f float64, shift int64) func([]map[string]any) []map[string]any {
		return func(recs []map[string]any) []map[string]any {
			for i, r := range recs {
				s, _ := r["sent_ns"].(json.Number).Int64()
				e, _ := r["end_ns"].(json.Number).Int64()
				ns := int64(float64(s) * f)
				d := shift * int64(1-2*(i%2))
				var cs []int64
				for _, c := range r["chunks_ns"].([]any) {
					v, _ := c.(json.Number).Int64()
					cs = append(cs, max(int64(float64(v)*f)+d, 1))
				}
				end := ns + int64(float64(e-s)*f)
				if len(cs) > 0 {
					end = max(end, ns+cs[len(cs)-1])
				}
				r["sent_ns"], r["end_ns"], r["chunks_ns"] = ns, end, cs
			}
			return recs
		}
	}
	const shapeWords = "repeat the shape of the original's timings"
	hinted := map[string]int{} // copies Evaluate refused as such, by evidence
	for _, c := range []struct {
		name  string
		edit  func([]map[string]any) []map[string]any
		words string
	}{
		{"re-ordered copy", repeatMajor, "ok records repeat the original's timings to 10 µs"},
		{"copy +1-3 ns", jitter, "ok records repeat the original's timings to 10 µs"},
		{"re-ordered copy +1-3 ns", func(r []map[string]any) []map[string]any { return jitter(repeatMajor(r)) }, "ok records repeat the original's timings to 10 µs"},
		{"durations 1 % longer", stretch, shapeWords},
		{"copy x0.98", retime(0.98, 0), shapeWords},
		{"copy x1.08 +-20 us", retime(1.08, 20_000), shapeWords},
		{"copy x0.9", retime(0.9, 0), shapeWords},
		{"another run", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			anotherRun(t, origDir, d, 0.04, origDigest)
			if c.edit != nil {
				copyFile(t, filepath.Join(origDir, schema.RecordsFile), filepath.Join(d, schema.RecordsFile))
				editRecords(t, d, c.edit)
			}
			rd, err := schema.OpenRunDir(d)
			if err != nil {
				t.Fatal(err)
			}
			err = rerun.CheckNotACopy(orig, rd)
			if c.words == "" {
				if err != nil {
					t.Fatalf("another run refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("error %v, want %q", err, c.words)
			}
			m := rd.Manifest()
			if m.RunID == orig.Manifest().RunID || m.StartTime == orig.Manifest().StartTime {
				t.Fatal("the copy kept the original's run id or start")
			}
			if !errors.Is(err, rerun.ErrRepeatsTimings) {
				t.Errorf("CheckNotACopy: %v is not ErrRepeatsTimings", err)
			}
			// A synthetic reproduction is told how to give benchseal's
			// simulator timings of its own; a measured one is not.
			for _, ev := range []string{schema.EvidenceSynthetic, schema.EvidenceIndependent} {
				m.Evidence = ev
				b, err := schema.MarshalDocument(m)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, schema.ManifestFile), b, 0o644); err != nil {
					t.Fatal(err)
				}
				_, err = Evaluate(context.Background(), Original{Name: "orig", Bundle: orig, Verification: verified()}, d, Options{Margin: 0.5})
				if !errors.Is(err, ErrNotAReproduction) {
					t.Fatalf("Evaluate (evidence %s): %v, want ErrNotAReproduction", ev, err)
				}
				if !errors.Is(err, rerun.ErrRepeatsTimings) {
					continue // refused before the copy check (an edit the run's checks reject)
				}
				hinted[ev]++
				if hint := strings.Contains(err.Error(), "--step-jitter"); hint != (ev == schema.EvidenceSynthetic) {
					t.Errorf("Evaluate (evidence %s): %v: hint %v", ev, err, hint)
				}
			}
		})
	}
	if hinted[schema.EvidenceSynthetic] == 0 || hinted[schema.EvidenceIndependent] == 0 {
		t.Errorf("Evaluate refused %v copies for their timings, by evidence: want some of each", hinted)
	}
}
