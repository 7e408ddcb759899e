package peertest

import (
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// mustDeclare are the quantities a canonical metric reads: every importer
// of records states them explicitly.
var mustDeclare = []string{schema.FieldSent, schema.FieldFirstChunk, schema.FieldLastChunk, schema.FieldChunks, schema.FieldOutputTokens, schema.FieldInputTokens}

// declaresWhatItInvents imports the tool's real fixture and checks that
// the manifest's provenance block states, for every record quantity a
// metric reads, what the tool measured (c.Provenance), so that the
// placeholders (LLMPerf's sent_ns = 0, SGLang's requests all at the
// point's start, GuideLLM's and LLMPerf's two-chunk series) stated absent,
// and that it lists c.Windows tool windows.
func declaresWhatItInvents(t *testing.T, c Case) {
	rd := importFixture(t, c.Peer)
	p := rd.Manifest().Provenance
	if p == nil {
		t.Fatal("no provenance block")
	}
	for _, f := range mustDeclare {
		if _, ok := p.Fields[f]; !ok {
			t.Errorf("%s not declared", f)
		}
	}
	for f, st := range c.Provenance {
		if got := p.Field(f).Status; got != st {
			t.Errorf("%s: %s, want %s (%s)", f, got, st, p.Field(f).How)
		}
	}
	if len(p.Windows) != c.Windows {
		t.Errorf("%d tool windows, want %d: %+v", len(p.Windows), c.Windows, p.Windows)
	}
}
