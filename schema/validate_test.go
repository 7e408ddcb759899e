package schema_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// update rewrites the golden files: go test ./schema -update
var update = flag.Bool("update", false, "rewrite golden files")

// baseRun writes a small valid run: points c1 and c2, 2 repeats, 1 warmup
// request per point, 2 requests per point×repeat (10 lines: c1 warmup,
// c1 r0 ×2, c1 r1 ×2, c2 warmup, c2 r0 ×2, c2 r1 ×2).
func baseRun(t *testing.T, compress bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := schema.CreateRun(dir, compress)
	if err != nil {
		t.Fatal(err)
	}
	o := synth.DefaultOptions()
	o.Requests, o.Points, o.Repeats, o.Warmup, o.WorkloadItems = 8, []float64{1, 2}, 2, 1, 5
	if _, err := synth.Generate(context.Background(), o, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func editJSON(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err = json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, string(b)+"\n")
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editLines applies regexp replacements to given 1-based record lines.
func editLines(t *testing.T, dir string, edits map[int][2]string) {
	t.Helper()
	p := filepath.Join(dir, schema.RecordsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for n, e := range edits {
		re := regexp.MustCompile(e[0])
		if !re.MatchString(lines[n-1]) {
			t.Fatalf("line %d does not match %s: %s", n, e[0], lines[n-1])
		}
		lines[n-1] = re.ReplaceAllString(lines[n-1], e[1])
	}
	write(t, p, strings.Join(lines, "\n")+"\n")
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

// externalReference turns a run into an imported external-evidence
// reference without records (as an MLPerf import), keeping its load
// points when keepPoints is set.
func externalReference(t *testing.T, dir string, keepPoints bool) {
	t.Helper()
	editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
		m["evidence"] = "imported"
		m["source"] = map[string]any{"tool": "mlperf"}
		m["external"] = []any{map[string]any{"kind": "mlperf-inference", "status": "VALID"}}
		l := obj(m, "load")
		l["warmup"] = map[string]any{}
		if !keepPoints {
			l["points"] = []any{}
		}
	})
	write(t, filepath.Join(dir, schema.RecordsFile), "")
}

// TestValidateRunDocumentsGolden breaks a valid run in one way per case and
// compares the problems reported with testdata/validate/<case>.golden.
func TestValidateRunDocumentsGolden(t *testing.T) {
	tests := []struct {
		name     string
		compress bool
		max      int
		breakRun func(t *testing.T, dir string)
	}{
		{name: "valid", breakRun: func(t *testing.T, dir string) {}},
		{name: "manifest_missing", breakRun: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, schema.ManifestFile))
		}},
		{name: "manifest_duplicate_key", breakRun: func(t *testing.T, dir string) {
			p := filepath.Join(dir, schema.ManifestFile)
			b, _ := os.ReadFile(p)
			write(t, p, strings.Replace(string(b), `"name": "c2",`, `"name": "c2", "name": "c3",`, 1))
		}},
		{name: "manifest_malformed", breakRun: func(t *testing.T, dir string) {
			p := filepath.Join(dir, schema.ManifestFile)
			b, _ := os.ReadFile(p)
			write(t, p, strings.Replace(string(b), `"evidence": "synthetic",`, `"evidence": "synthetic"`, 1))
		}},
		{name: "manifest_schema", breakRun: func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["evidence"] = "trust-me"
				m["colour"] = "red"
				obj(m, "load")["repeats"] = 1.5
				obj(m, "hardware")["accelerator_count"] = "one"
			})
		}},
		{name: "manifest_semantic", breakRun: func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				obj(m, "model")["precision"] = "fp8"
				delete(obj(m, "client"), "version")
				m["unknown"] = []any{"hardware.driver", "hardware.colour", "engine.name"}
				delete(obj(m, "slo"), "one_token")
			})
		}},
		{name: "provenance_schema", breakRun: func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["provenance"] = map[string]any{"fields": map[string]any{
					"sent_ns":      map[string]any{"status": "absent"},
					"colour_ns":    map[string]any{"status": "measured"},
					"chunks_ns":    map[string]any{"status": "guessed", "how": "x"},
					"end_ns":       map[string]any{"status": "derived", "how": ""},
					"input_tokens": map[string]any{"status": "measured", "extra": 1},
				}}
			})
		}},
		{name: "provenance_semantic", breakRun: func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["evidence"], m["source"] = "imported", map[string]any{"tool": "vllm"}
				m["provenance"] = map[string]any{
					"fields": map[string]any{"sent_ns": map[string]any{"status": "absent", "how": "placed at 0"}},
					"windows": []any{
						map[string]any{"point": "c9", "repeat": 0, "window_ns": 5, "how": "duration"},
						map[string]any{"point": "c1", "repeat": 7, "window_ns": 5, "how": "duration"},
						map[string]any{"point": "c1", "repeat": 0, "window_ns": 10e9, "how": "duration"},
						map[string]any{"point": "c1", "repeat": 0, "window_ns": 10e9 + 1, "how": "duration"},
					},
				}
			})
		}},
		{name: "provenance_valid", breakRun: func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["evidence"], m["source"] = "imported", map[string]any{"tool": "vllm"}
				m["provenance"] = map[string]any{
					"fields": map[string]any{
						"sent_ns":   map[string]any{"status": "absent", "how": "placed at 0"},
						"chunks_ns": map[string]any{"status": "derived", "how": "ttft + Σ itl"},
						"end_ns":    map[string]any{"status": "measured"},
					},
					"windows": []any{map[string]any{"point": "c1", "repeat": 0, "window_ns": 10e9, "how": "duration"}},
				}
			})
		}},
		{name: "records_bad_lines", breakRun: func(t *testing.T, dir string) {
			editLines(t, dir, map[int][2]string{
				2:  {`"sent_ns":\d+`, `"sent_ns":NaN`},
				3:  {`"end_ns":\d+`, `"end_ns":"12"`},
				4:  {`"repeat":1`, `"repeat":1,"repeat":0`},
				5:  {`"input_tokens":\d+`, `"input_tokens":99999999999999999999`},
				7:  {`"status":"ok"`, `"status":"fine"`},
				8:  {`"chunks_ns":\[\d+`, `"chunks_ns":[1.5`},
				9:  {`"phase":"measure"`, `"phase":"measure","extra":true`},
				10: {`\}$`, `} {}`},
			})
		}},
		{name: "records_semantic", breakRun: func(t *testing.T, dir string) {
			editLines(t, dir, map[int][2]string{
				2:  {`"sent_ns":\d+`, `"sent_ns":-5`},
				3:  {`"id":"[^"]+"`, `"id":"c1-r0-0000000"`},
				4:  {`"point":"c1"`, `"point":"c7"`},
				5:  {`"repeat":1`, `"repeat":2`},
				7:  {`"chunks_ns":\[(\d+),(\d+)`, `"chunks_ns":[$2,$1`},
				8:  {`"chunk_tokens":\[\d+`, `"chunk_tokens":[100`},
				9:  {`"end_ns":\d+`, `"end_ns":1`},
				10: {`"chunks_ns":\[[^\]]*\],"chunk_tokens":\[[^\]]*\]`, `"chunks_ns":[]`},
			})
		}},
		{name: "coverage_missing", breakRun: func(t *testing.T, dir string) {
			p := filepath.Join(dir, schema.RecordsFile)
			b, _ := os.ReadFile(p)
			lines := strings.SplitAfter(string(b), "\n")
			write(t, p, strings.Join(lines[:8], ""))
		}},
		{name: "workload_mismatch", breakRun: func(t *testing.T, dir string) {
			p := filepath.Join(dir, schema.WorkloadFile)
			b, _ := os.ReadFile(p)
			write(t, p, string(b)+`{"item":5}`+"\n")
		}},
		{name: "claims_bad", breakRun: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, schema.ClaimsFile), `{"schema":"benchseal/claims/v1","definitions":"vllm","tolerance":1e-9,
"points":[{"point":"c9","metrics":[{"metric":"ttft_ns.p99","value":1}]},{"point":"c1","repeat":5,"metrics":[]}]}`)
		}},
		{name: "records_missing", breakRun: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, schema.RecordsFile))
		}},
		{name: "records_both", breakRun: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, schema.RecordsZstdFile), "")
		}},
		{name: "zst_truncated", compress: true, breakRun: func(t *testing.T, dir string) {
			p := filepath.Join(dir, schema.RecordsZstdFile)
			b, _ := os.ReadFile(p)
			write(t, p, string(b[:len(b)/2]))
		}},
		{name: "zst_corrupt", compress: true, breakRun: func(t *testing.T, dir string) {
			p := filepath.Join(dir, schema.RecordsZstdFile)
			b, _ := os.ReadFile(p)
			for i := 20; i < len(b)-8; i += 7 {
				b[i] ^= 0x5a
			}
			write(t, p, string(b))
		}},
		{name: "zst_not_zstd", compress: true, breakRun: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, schema.RecordsZstdFile), "this is not zstd\n")
		}},
		{name: "records_empty", breakRun: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, schema.RecordsFile), "")
		}},
		{name: "external_reference", breakRun: func(t *testing.T, dir string) {
			externalReference(t, dir, false)
		}},
		{name: "external_reference_declared_point", breakRun: func(t *testing.T, dir string) {
			externalReference(t, dir, true)
		}},
		{name: "external_not_imported", breakRun: func(t *testing.T, dir string) {
			externalReference(t, dir, false)
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) { m["evidence"] = "synthetic" })
		}},
		{name: "times_unknown", breakRun: func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["epoch_unix_ns"], m["start_time"], m["finish_time"] = 0, "", ""
				m["unknown"] = append(m["unknown"].([]any), "epoch_unix_ns", "finish_time", "start_time")
			})
		}},
		{name: "times_not_declared_unknown", breakRun: func(t *testing.T, dir string) {
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["epoch_unix_ns"], m["start_time"] = 0, ""
			})
		}},
		{name: "max_problems", max: 3, breakRun: func(t *testing.T, dir string) {
			editLines(t, dir, map[int][2]string{
				2: {`"status":"ok"`, `"status":"x"`}, 3: {`"status":"ok"`, `"status":"x"`},
				4: {`"status":"ok"`, `"status":"x"`}, 5: {`"status":"ok"`, `"status":"x"`},
				7: {`"status":"ok"`, `"status":"x"`},
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := baseRun(t, tt.compress)
			tt.breakRun(t, dir)
			_, err := schema.CheckRunDir(context.Background(), dir, tt.max, nil)
			got := "valid\n"
			if err != nil {
				var ve *schema.ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("CheckRunDir: %v (not a *ValidationError)", err)
				}
				if !errors.Is(err, schema.ErrInvalid) {
					t.Fatal("error does not wrap ErrInvalid")
				}
				got = strings.ReplaceAll(err.Error(), dir, "RUN") + "\n"
			}
			golden := filepath.Join("testdata", "validate", tt.name+".golden")
			if *update {
				write(t, golden, got)
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./schema -update)", err)
			}
			if !bytes.Equal(want, []byte(got)) {
				t.Fatalf("problems differ from %s (rerun with -update if intended)\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

func TestValidateRunDocumentsNotADirectory(t *testing.T) {
	err := schema.ValidateRunDocuments(filepath.Join(t.TempDir(), "nope"), 0)
	var ve *schema.ValidationError
	if err == nil || errors.As(err, &ve) {
		t.Fatalf("ValidateRunDocuments on a missing folder: %v, want a plain error", err)
	}
}

// TestRecordCheckerStandalone shows the checker working on records from
// any source, with problems located by the caller's file and line.
func TestRecordCheckerStandalone(t *testing.T) {
	m := &schema.Manifest{Load: schema.Load{Mode: schema.ModeConcurrency, Repeats: 1,
		Points: []schema.Point{{Name: "p", Concurrency: 2}}}}
	c := schema.NewRecordChecker(m)
	ok := &schema.Record{ID: "a", Point: "p", Phase: schema.PhaseMeasure, SentNS: 10, EndNS: 30,
		ChunksNS: []int64{5, 20}, OutputTokens: 2, Status: schema.StatusOK}
	if ps := c.Check("layer:sha256:ab", 1, ok); len(ps) != 0 {
		t.Fatalf("valid record: %v", ps)
	}
	if ps := c.Check("layer:sha256:ab", 2, ok); len(ps) != 1 || ps[0].Field != "id" || ps[0].Line != 2 {
		t.Fatalf("duplicate id: %v", ps)
	}
	if ps := c.Finish(); len(ps) != 0 {
		t.Fatalf("Finish: %v", ps)
	}
	if s := c.Summary(); s.Records != 2 || s.Measure != 2 || s.Chunks != 4 {
		t.Fatalf("summary %+v", s)
	}
}

func TestIncompleteRunMayLackLaterPoints(t *testing.T) {
	m := &schema.Manifest{Incomplete: true, Load: schema.Load{Mode: schema.ModeConcurrency, Repeats: 2,
		Points: []schema.Point{{Name: "a", Concurrency: 1}, {Name: "b", Concurrency: 2}}}}
	rec := func(point string, repeat int) *schema.Record {
		return &schema.Record{ID: point + string(rune('0'+repeat)), Point: point, Repeat: repeat, Phase: schema.PhaseMeasure,
			SentNS: 1, EndNS: 2 + int64(repeat), ChunksNS: []int64{1}, OutputTokens: 1, Status: schema.StatusOK}
	}
	c := schema.NewRecordChecker(m)
	c.Check("r", 1, rec("a", 0))
	c.Check("r", 2, rec("a", 1))
	if ps := c.Finish(); len(ps) != 0 {
		t.Fatalf("prefix a0 a1: %v", ps)
	}
	c = schema.NewRecordChecker(m)
	c.Check("r", 1, rec("a", 0))
	c.Check("r", 2, rec("b", 1))
	if ps := c.Finish(); len(ps) != 1 {
		t.Fatalf("a0 b1 is no prefix: %v", ps)
	}
	m.Incomplete = false
	c = schema.NewRecordChecker(m)
	c.Check("r", 1, rec("a", 0))
	if ps := c.Finish(); len(ps) != 3 {
		t.Fatalf("complete run missing 3 pairs: %v", ps)
	}
}

// TestCaseVariantKeysAreRejectedEverywhere: validate (and so pack) reject
// keys that differ only in case, in open maps too, as verify does; the
// rule is schema.CheckJSON on both paths.
func TestCaseVariantKeysAreRejectedEverywhere(t *testing.T) {
	for name, c := range map[string]struct{ file, old, new string }{
		"manifest open map":    {schema.ManifestFile, `"hardware": {`, `"hardware": {"details": {"gpu": "a", "GPU": "b"}, `},
		"manifest known field": {schema.ManifestFile, `"hardware": {`, `"hardware": {"Details": {}, "details": {}, `},
		"kelvin sign":          {schema.ManifestFile, `"hardware": {`, `"hardware": {"details": {"k": "a", "\u212a": "b"}, `},
	} {
		t.Run(name, func(t *testing.T) {
			dir := baseRun(t, false)
			p := filepath.Join(dir, c.file)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			nb := bytes.Replace(b, []byte(c.old), []byte(c.new), 1)
			if bytes.Equal(nb, b) {
				t.Fatalf("edit did not apply to %s", b)
			}
			write(t, p, string(nb))
			err = schema.ValidateRunDocuments(dir, 10)
			if err == nil || !strings.Contains(err.Error(), "duplicate key") {
				t.Fatalf("got %v, want a duplicate key rejection", err)
			}
			if schema.CheckJSON(nb) == nil {
				t.Fatal("CheckJSON accepted it")
			}
		})
	}
	// In a record's orig (an open map kept raw).
	dir := baseRun(t, false)
	p := filepath.Join(dir, schema.RecordsFile)
	b, _ := os.ReadFile(p)
	lines := bytes.SplitN(b, []byte("\n"), 2)
	rec := bytes.TrimSuffix(lines[0], []byte("}"))
	rec = append(rec, []byte(`,"orig":{"ttft":1,"TTFT":2}}`)...)
	write(t, p, string(append(append(rec, '\n'), lines[1]...)))
	if err := schema.ValidateRunDocuments(dir, 10); err == nil || !strings.Contains(err.Error(), `duplicate key "TTFT"`) {
		t.Fatalf("orig: got %v, want a duplicate key rejection", err)
	}
}

// TestValidateStopsEarlyOnGarbage: a records file of blank lines is
// rejected after a bounded amount of work, and a zstd stream that inflates
// over MaxCompressionRatio times (1 GiB of newlines compresses to 673 KB)
// is refused as a bomb; a cancelled context stops validation.
func TestValidateStopsEarlyOnGarbage(t *testing.T) {
	t.Run("blank lines", func(t *testing.T) {
		dir := baseRun(t, false)
		write(t, filepath.Join(dir, schema.RecordsFile), strings.Repeat("\n", 3*schema.MaxUndecodedLines))
		err := schema.ValidateRunDocuments(dir, 10)
		var ve *schema.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(err.Error(), "stopped reading") || ve.Omitted > schema.MaxUndecodedLines+10 {
			t.Fatalf("did not stop early: %d listed, %d omitted\n%v", len(ve.Problems), ve.Omitted, err)
		}
	})
	t.Run("newline bomb", func(t *testing.T) {
		dir := baseRun(t, true)
		var buf bytes.Buffer
		zw, _ := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
		nl := append(bytes.Repeat([]byte("a"), 100<<10), '\n')
		for range 2560 {
			zw.Write(nl)
		}
		zw.Close()
		write(t, filepath.Join(dir, schema.RecordsZstdFile), buf.String())
		err := schema.ValidateRunDocuments(dir, 10)
		if err == nil || !strings.Contains(err.Error(), "decompression bomb") {
			t.Fatalf("got %v, want a decompression bomb rejection (%d compressed bytes)", err, buf.Len())
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		dir := baseRun(t, false)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := schema.CheckRunDir(ctx, dir, 10, nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	})
}

// TestStatusMustAgreeWithRequestTimeout: a record that claims ok although
// it took longer than the manifest's request timeout, or timeout although
// it ended before it, is rejected; records at the limit pass.
func TestStatusMustAgreeWithRequestTimeout(t *testing.T) {
	const ms = int64(time.Millisecond)
	m := &schema.Manifest{Load: schema.Load{Mode: schema.ModeConcurrency, Repeats: 1, RequestTimeout: schema.Duration(100 * ms),
		Points: []schema.Point{{Name: "p", Concurrency: 1}}}}
	for _, tc := range []struct {
		name, status string
		d            int64
		bad          bool
	}{
		{"ok within", schema.StatusOK, 99 * ms, false},
		{"ok at the limit", schema.StatusOK, 100 * ms, false},
		{"ok past the limit", schema.StatusOK, 243 * ms, true},
		{"timeout past the limit", schema.StatusTimeout, 101 * ms, false},
		{"timeout before the limit", schema.StatusTimeout, 50 * ms, true},
		{"error past the limit", schema.StatusError, 243 * ms, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &schema.Record{ID: "a", Point: "p", Phase: schema.PhaseMeasure, SentNS: 7, EndNS: 7 + tc.d, Status: tc.status}
			if tc.status == schema.StatusOK {
				rec.ChunksNS, rec.OutputTokens = []int64{tc.d}, 1
			}
			ps := schema.NewRecordChecker(m).Check("r", 3, rec)
			if tc.bad != (len(ps) == 1 && ps[0].Field == "status" && strings.Contains(ps[0].Message, "request_timeout")) || (!tc.bad && len(ps) > 0) {
				t.Fatalf("problems %v, want bad=%v", ps, tc.bad)
			}
		})
	}
}

// TestProblemsPastTheCapAreCountedNotFormatted: once the reporting cap is
// reached, the problems of further records are counted (the same number)
// without formatting their messages.
func TestProblemsPastTheCapAreCountedNotFormatted(t *testing.T) {
	dir := baseRun(t, false)
	p := filepath.Join(dir, schema.RecordsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Every copy after the first repeats every id: one problem per line.
	write(t, p, strings.Repeat(string(b), 300))
	total := func(max int) (int, int) {
		formatted := 0
		defer schema.SetFormatHook(func() { formatted++ })()
		var ve *schema.ValidationError
		if err := schema.ValidateRunDocuments(dir, max); !errors.As(err, &ve) {
			t.Fatalf("got %v", err)
		}
		return len(ve.Problems) + ve.Omitted, formatted
	}
	all, formattedAll := total(1 << 20)
	if all < 299*10 || formattedAll < 299*10 {
		t.Fatalf("%d problems (%d formatted), want at least one per duplicated line", all, formattedAll)
	}
	capped, formatted := total(5)
	if capped != all {
		t.Errorf("with a cap of 5: %d problems counted, without a cap %d", capped, all)
	}
	if formatted > 5+10 {
		t.Errorf("with a cap of 5: %d problem messages formatted", formatted)
	}
}
