package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func readManifest(t testing.TB) *Manifest {
	t.Helper()
	b, err := os.ReadFile("testdata/manifest/full.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeManifest(bytes.NewReader(b), "manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFullManifestAndClaimsAreValid(t *testing.T) {
	m := readManifest(t)
	if ps := ValidateManifest(m, "manifest.json"); len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	b, err := os.ReadFile("testdata/claims/full.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeClaims(bytes.NewReader(b), "claims.json")
	if err != nil {
		t.Fatal(err)
	}
	if ps := ValidateClaims(c, m, "claims.json"); len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	// Round trip through the canonical encoding.
	for _, v := range []any{m, c} {
		out, err := MarshalDocument(v)
		if err != nil {
			t.Fatal(err)
		}
		back := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if err := decodeDocument(bytes.NewReader(out), MaxManifestFileSize, "x", map[bool]string{true: SchemaManifest, false: SchemaClaims}[v == any(m)], back); err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, v) {
			t.Fatalf("round trip changed the document:\n%s", out)
		}
	}
}

func TestEmptyManifestMarshalsSchemaShape(t *testing.T) {
	b, err := MarshalDocument(&Manifest{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"unknown": []`)) || !bytes.Contains(b, []byte(`"points": []`)) {
		t.Fatalf("empty slices not written as []:\n%s", b)
	}
}

func TestDecodeManifestErrors(t *testing.T) {
	full, err := os.ReadFile("testdata/manifest/full.json")
	if err != nil {
		t.Fatal(err)
	}
	repl := func(old, new string) string {
		if !bytes.Contains(full, []byte(old)) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(string(full), old, new, 1)
	}
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"duplicate top-level key", repl(`"title":`, `"run_id": "again", "title":`), []string{`manifest.json:4: field "run_id": duplicate key`}},
		{"duplicate nested key", repl(`{"name": "c8", "concurrency": 8,`, `{"name": "c8", "concurrency": 8, "name": "c9",`), []string{`field "load.points[1].name": duplicate key`}},
		{"syntax error", repl(`"evidence": "imported",`, `"evidence": "imported"`), []string{`manifest.json:9: invalid JSON at column 3: unexpected '"', expected ',' or '}'`}},
		{"truncated", string(full[:200]), []string{`manifest.json:6: invalid JSON: unterminated string`}},
		{"NaN", repl(`"energy_joules": 8.1e7`, `"energy_joules": NaN`), []string{`field "cost.energy_joules": invalid JSON`}},
		{"trailing data", string(full) + "{}", []string{`trailing data after the document`}},
		{"unknown field", repl(`"title":`, `"colour": "red", "title":`), []string{`manifest.json: additional properties 'colour' not allowed`}},
		{"wrong enum", repl(`"imported"`, `"trust-me"`), []string{`field "evidence": value must be one of`}},
		{"wrong type", repl(`"accelerator_count": 4`, `"accelerator_count": "4"`), []string{`field "hardware.accelerator_count": got string, want integer`}},
		{"out of range", repl(`"epoch_unix_ns": 1772445600000000000`, `"epoch_unix_ns": 1e30`), []string{`field "epoch_unix_ns": maximum: got 1×10³⁰`}},
		{"non-integer", repl(`"accelerator_count": 4`, `"accelerator_count": 4.5`), []string{`field "hardware.accelerator_count": got number, want integer`}},
		{"bad digest", repl(`@sha256:0123`, `@sha256:XYZ`), []string{`field "engine.image": 'docker.io/vllm/vllm-openai@sha256:XYZ`}},
		{"bad duration", repl(`"request_timeout": "2m"`, `"request_timeout": "two minutes"`), []string{`field "load.request_timeout"`}},
		{"not an object", `[]`, []string{`manifest.json: got array, want object`}},
		{"empty", ``, []string{`manifest.json: empty document`}},
		{"invalid utf8", repl(`"Llama 3.1`, "\"\xffLlama 3.1"), []string{`field "title": invalid UTF-8`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeManifest(strings.NewReader(tt.doc), "manifest.json")
			if err == nil {
				t.Fatal("DecodeManifest accepted the document")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

func TestValidateManifestRules(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(m *Manifest)
		field  string
	}{
		{"quantized without gate", func(m *Manifest) { m.QualityGate = nil }, "quality_gate"},
		{"must-state missing", func(m *Manifest) { m.Client.Version = "" }, "client.version"},
		{"unknown field path", func(m *Manifest) { m.Unknown = append(m.Unknown, "hardware.colour") }, "unknown[1]"},
		{"unknown but set", func(m *Manifest) { m.Unknown = append(m.Unknown, "engine.name") }, "unknown[1]"},
		{"unknown listed twice", func(m *Manifest) { m.Unknown = append(m.Unknown, "hardware.host") }, "unknown[1]"},
		{"bad image digest", func(m *Manifest) { m.Engine.Image = "vllm/vllm-openai:latest" }, "engine.image"},
		{"duplicate point", func(m *Manifest) { m.Load.Points[1].Name = "c1" }, "load.points[1].name"},
		{"concurrency missing", func(m *Manifest) { m.Load.Points[0].Concurrency = 0 }, "load.points[0].concurrency"},
		{"rate without arrival", func(m *Manifest) { m.Load.Mode = ModeRate; m.Load.Points[0].Rate = 2 }, "load.points[0].arrival"},
		{"no repeats", func(m *Manifest) { m.Load.Repeats = 0 }, "load.repeats"},
		{"tpot without one_token", func(m *Manifest) { m.SLO.OneToken = "" }, "slo.one_token"},
		{"finish before start", func(m *Manifest) { m.FinishTime = "2026-03-01T00:00:00Z" }, "finish_time"},
		{"bad evidence", func(m *Manifest) { m.Evidence = "hearsay" }, "evidence"},
		{"imported without source", func(m *Manifest) { m.Evidence, m.Source = EvidenceImported, nil }, "source"},
		{"simulated but self-run", func(m *Manifest) {
			m.Evidence, m.Client.Name = EvidenceSelfRun, CaptureClientName
			m.Client.CommandLine = []string{"benchseal", "capture", "--simulate=true", "--no-probe=true"}
		}, "evidence"},
		{"simulated (bare flag) but independent", func(m *Manifest) {
			m.Evidence, m.Client.Name = EvidenceIndependent, CaptureClientName
			m.Client.CommandLine = []string{"benchseal", "capture", "--simulate"}
		}, "evidence"},
		{"workload hash", func(m *Manifest) { m.Workload.SHA256 = "abc" }, "workload.sha256"},
		{"provenance of an unknown field", func(m *Manifest) { m.Provenance.Set("colour_ns", FieldAbsent, "x") }, "provenance.fields.colour_ns"},
		{"provenance status", func(m *Manifest) { m.Provenance.Set(FieldSent, "guessed", "x") }, "provenance.fields.sent_ns.status"},
		{"provenance absent without how", func(m *Manifest) { m.Provenance.Set(FieldSent, FieldAbsent, "") }, "provenance.fields.sent_ns.how"},
		{"provenance window of no point", func(m *Manifest) { m.Provenance.Windows[0].Point = "c9" }, "provenance.windows[0].point"},
		{"provenance window not positive", func(m *Manifest) { m.Provenance.Windows[0].WindowNS = 0 }, "provenance.windows[0].window_ns"},
		{"slo declared unknown is fine only when unset", func(m *Manifest) { m.SLO = SLO{}; m.Unknown = append(m.Unknown, "slo.ttft") }, "slo.e2e"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := readManifest(t)
			tt.mutate(m)
			ps := ValidateManifest(m, "manifest.json")
			for _, p := range ps {
				if p.Field == tt.field {
					return
				}
			}
			t.Fatalf("no problem on %s; got %v", tt.field, ps)
		})
	}
}

// TestSimulateOnTheCommandLineMeansSynthetic: a capture command line with
// --simulate makes any evidence but synthetic invalid; --simulate=false, a synthetic run, another client's command line
// and words after "--" do not.
func TestSimulateOnTheCommandLineMeansSynthetic(t *testing.T) {
	cases := []struct {
		name, client, evidence string
		args                   []string
		bad                    bool
	}{
		{"simulate, self-run", CaptureClientName, EvidenceSelfRun, []string{"benchseal", "capture", "--simulate=true"}, true},
		{"simulate=1, vendor-run", CaptureClientName, EvidenceVendorRun, []string{"benchseal", "capture", "--simulate=1"}, true},
		{"simulate, synthetic", CaptureClientName, EvidenceSynthetic, []string{"benchseal", "capture", "--simulate=true"}, false},
		{"simulate=false", CaptureClientName, EvidenceSelfRun, []string{"benchseal", "capture", "--simulate=false"}, false},
		{"another client", "some-tool", EvidenceSelfRun, []string{"some-tool", "--simulate"}, false},
		{"after --", CaptureClientName, EvidenceSelfRun, []string{"benchseal", "capture", "--", "--simulate"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := readManifest(t)
			m.Client.Name, m.Evidence, m.Client.CommandLine = c.client, c.evidence, c.args
			var got []Problem
			for _, p := range ValidateManifest(m, "manifest.json") {
				if p.Field == "evidence" {
					got = append(got, p)
				}
			}
			if c.bad != (len(got) == 1) {
				t.Fatalf("evidence problems %v, want bad=%v", got, c.bad)
			}
			if c.bad && !strings.Contains(got[0].String(), "client.command_line") {
				t.Errorf("the problem does not name client.command_line: %s", got[0])
			}
		})
	}
}

func TestMissingMustStateFillsUnknown(t *testing.T) {
	m := &Manifest{}
	if got := MissingMustState(m); !reflect.DeepEqual(got, MustState) {
		t.Fatalf("MissingMustState(empty) = %v", got)
	}
	for _, p := range MustState {
		if !strings.Contains(strings.Join(KnownManifestFields(), " "), p) {
			t.Errorf("must-state %q is not a manifest field", p)
		}
	}
	m.Unknown = MissingMustState(m)
	if got := MissingMustState(m); len(got) != 0 {
		t.Fatalf("after declaring unknown: %v", got)
	}
}

func TestIsQuantized(t *testing.T) {
	for p, want := range map[string]bool{
		"bf16": false, "fp16": false, "fp32": false, "BF16": false, "bfloat16": false, "float16": false, "float32": false, "half": false, "": false,
		"FP8": true, "int4-awq": true, "nvfp4": true, "w8a8": true, "gptq": true,
		// Named by format, not by bits: each escaped a list of quantized markers.
		"compressed-tensors": true, "float8_e4m3fn": true, "bitsandbytes": true, "auto": true, "fp16-awq": true, "bf16 (gguf q4_k_m)": true,
	} {
		if got := IsQuantized(p); got != want {
			t.Errorf("IsQuantized(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestValidateClaimsRules(t *testing.T) {
	m := readManifest(t)
	r := 3
	c := &Claims{Schema: ClaimsSchemaV1, Definitions: "vllm", Tolerance: 0.5, Points: []PointClaim{
		{Point: "c99", Metrics: []Claim{{Metric: "ttft_ns.p50", Value: 1}}},
		{Point: "c1", Repeat: &r, Metrics: []Claim{{Metric: "a", Value: 1}, {Metric: "a", Value: 2}}},
	}}
	got := map[string]bool{}
	for _, p := range ValidateClaims(c, m, "claims.json") {
		got[p.Field] = true
	}
	// A tolerance of 50 % would let any number through.
	for _, f := range []string{"tolerance", "points[0].point", "points[1].repeat", "points[1].metrics[1].metric"} {
		if !got[f] {
			t.Errorf("no problem on %s; got %v", f, got)
		}
	}
}

func TestJSONSchemasCompileAndPrint(t *testing.T) {
	for _, name := range SchemaNames {
		b, err := JSONSchema(name)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema = %v", name, v["$schema"])
		}
	}
	if _, err := compiled(); err != nil {
		t.Fatal(err)
	}
	if _, err := JSONSchema("bundle"); err == nil {
		t.Fatal("JSONSchema accepted an unknown name")
	}
}

// TestRecordSchemaAgreesWithParser checks the published record schema
// against the hand-written parser on valid and invalid lines.
func TestRecordSchemaAgreesWithParser(t *testing.T) {
	schemas, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{goodLine}
	b, _ := os.ReadFile("testdata/records/synth.jsonl")
	for l := range strings.Lines(string(b)) {
		lines = append(lines, strings.TrimSuffix(l, "\n"))
	}
	for _, tt := range []struct{ old, new string }{
		{`"sent_ns":1`, `"sent_ns":"1"`}, {`"sent_ns":1`, `"sent_ns":1.5`}, {`"repeat":0,`, ``},
		{`"repeat":0`, `"repeat":0,"x":1`}, {`"status":"ok"`, `"status":"ok","orig":[]`}, {`"id":"a"`, `"id":null`},
	} {
		lines = append(lines, strings.Replace(goodLine, tt.old, tt.new, 1))
	}
	for _, l := range lines {
		_, perr := DecodeRecord([]byte(l))
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(l))
		if err != nil {
			t.Fatal(err)
		}
		serr := schemas[SchemaRecord].Validate(inst)
		if (perr == nil) != (serr == nil) {
			t.Errorf("%s: parser err=%v, schema err=%v", l, perr, serr)
		}
	}
}

func fuzzSeeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`{`))
}

// FuzzDecodeManifest checks that the manifest decoder never panics, that
// every error wraps ErrInvalid, and that an accepted manifest survives the
// canonical encoding.
func FuzzDecodeManifest(f *testing.F) {
	fuzzSeeds(f, "manifest")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeManifest(bytes.NewReader(b), "manifest.json")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		ValidateManifest(m, "manifest.json")
		out, err := MarshalDocument(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := DecodeManifest(bytes.NewReader(out), "manifest.json")
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the manifest:\n%s", out)
		}
	})
}

// FuzzDecodeClaims is FuzzDecodeManifest for claims.
func FuzzDecodeClaims(f *testing.F) {
	fuzzSeeds(f, "claims")
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeClaims(bytes.NewReader(b), "claims.json")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		ValidateClaims(c, nil, "claims.json")
		out, err := MarshalDocument(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := DecodeClaims(bytes.NewReader(out), "claims.json")
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip changed the claims:\n%s", out)
		}
	})
}
