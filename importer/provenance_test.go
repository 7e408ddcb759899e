package importer

import (
	"slices"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestEveryImporterDeclaresWhatItInvents imports each tool's real fixture
// and checks that the manifest's provenance block states, for every
// record quantity a metric reads, what the tool measured, and that the
// placeholders (LLMPerf's sent_ns = 0, SGLang's requests all at the
// point's start, GuideLLM's and LLMPerf's two-chunk series) are absent.
// provenanceCase is one tool's row: want maps a quantity to its status;
// windows is the number of tool windows expected.
type provenanceCase struct {
	tool    string
	want    map[string]string
	windows int
}

func TestEveryImporterDeclaresWhatItInvents(t *testing.T) {
	tests := []provenanceCase{
		{"llmperf", map[string]string{schema.FieldSent: schema.FieldAbsent, schema.FieldChunks: schema.FieldAbsent, schema.FieldFirstChunk: schema.FieldMeasured, schema.FieldLastChunk: schema.FieldDerived, schema.FieldOutputTokens: schema.FieldDerived}, 1},
		{"sglang", map[string]string{schema.FieldSent: schema.FieldAbsent, schema.FieldChunks: schema.FieldDerived, schema.FieldFirstChunk: schema.FieldMeasured, schema.FieldOutputTokens: schema.FieldMeasured}, 2},
		{"vllm", map[string]string{schema.FieldSent: schema.FieldAbsent, schema.FieldChunks: schema.FieldDerived, schema.FieldFirstChunk: schema.FieldMeasured}, 1},
		{"guidellm", map[string]string{schema.FieldSent: schema.FieldMeasured, schema.FieldChunks: schema.FieldAbsent, schema.FieldFirstChunk: schema.FieldMeasured, schema.FieldLastChunk: schema.FieldMeasured}, 0},
		{"genai-perf", map[string]string{schema.FieldSent: schema.FieldMeasured, schema.FieldChunks: schema.FieldMeasured, schema.FieldOutputTokens: schema.FieldAbsent}, 0},
		{"aiperf", map[string]string{schema.FieldSent: schema.FieldMeasured, schema.FieldFirstChunk: schema.FieldMeasured, schema.FieldOutputTokens: schema.FieldMeasured}, 0},
		{"inference-perf", map[string]string{schema.FieldSent: schema.FieldMeasured, schema.FieldChunks: schema.FieldMeasured, schema.FieldOutputTokens: schema.FieldMeasured}, 0},
	}
	// The quantities a canonical metric reads: every importer of records
	// must state them explicitly.
	must := []string{schema.FieldSent, schema.FieldFirstChunk, schema.FieldLastChunk, schema.FieldChunks, schema.FieldOutputTokens, schema.FieldInputTokens}
	for _, pt := range schema.PeerTools {
		if pt.Records && !slices.ContainsFunc(tests, func(tt provenanceCase) bool { return tt.tool == pt.Name }) {
			t.Errorf("%s: no row in this test's table", pt.Name)
		}
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			rd := importFixture(t, tt.tool)
			p := rd.Manifest().Provenance
			if p == nil {
				t.Fatal("no provenance block")
			}
			for _, f := range must {
				if _, ok := p.Fields[f]; !ok {
					t.Errorf("%s not declared", f)
				}
			}
			for f, st := range tt.want {
				if got := p.Field(f).Status; got != st {
					t.Errorf("%s: %s, want %s (%s)", f, got, st, p.Field(f).How)
				}
			}
			if len(p.Windows) != tt.windows {
				t.Errorf("%d tool windows, want %d: %+v", len(p.Windows), tt.windows, p.Windows)
			}
		})
	}
}

// importFixture imports the real fixture of tool (fixtures) into a
// temporary run directory and opens it.
func importFixture(t *testing.T, tool string) *schema.RunDir {
	t.Helper()
	rd, err := schema.OpenRunDir(importWith(t, tool, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	return rd
}
