package schema_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// mustBeInvalid validates dir and fails unless it is invalid with every
// wanted text in the problems.
func mustBeInvalid(t *testing.T, dir string, want ...string) {
	t.Helper()
	err := schema.ValidateRunDocuments(dir, 0)
	if !errors.Is(err, schema.ErrInvalid) {
		t.Fatalf("want invalid, got %v", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("problems do not say %q:\n%v", w, err)
		}
	}
}

// A non-streaming run relabelled client-streaming (with
// decoding.streaming false left in place) made TTFT = E2E and TPOT 0.
func TestBoundaryContradictingStreamingIsInvalid(t *testing.T) {
	dir := baseRun(t, false)
	editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
		obj(m, "decoding")["streaming"] = false
	})
	mustBeInvalid(t, dir, `field "client.boundary"`, "decoding.streaming is false")

	dir = baseRun(t, false)
	editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
		obj(m, "client")["boundary"] = "non-streaming"
	})
	mustBeInvalid(t, dir, `field "client.boundary"`, "decoding.streaming is true")
}

// A run benchseal measured itself may not declare a
// field it stores "absent" (hiding send lag and the other schedule-based
// metrics), nor store a tool's window.
func TestProvenanceCannotHideWhatARunMeasured(t *testing.T) {
	dir := baseRun(t, false)
	editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
		m["provenance"] = map[string]any{"fields": map[string]any{
			"scheduled_ns": map[string]any{"status": "absent", "how": "not stored"},
			"end_ns":       map[string]any{"status": "derived", "how": "x"},
		}}
	})
	mustBeInvalid(t, dir, `field "provenance.fields.scheduled_ns.status"`, `field "provenance.fields.end_ns.status"`)
}

// An ok answer in six content chunks declared a
// one-token answer passed any TPOT limit.
func TestMultiChunkAnswerIsNeverOneToken(t *testing.T) {
	dir := baseRun(t, false)
	editLines(t, dir, map[int][2]string{
		2: {`"output_tokens":\d+`, `"output_tokens":1`},
	})
	dropChunkTokens(t, dir, 2)
	mustBeInvalid(t, dir, `field "output_tokens": is 1, but the answer arrived in`)

	dir = baseRun(t, false)
	editLines(t, dir, map[int][2]string{
		2: {`"output_tokens":\d+`, `"output_tokens":2`},
	})
	dropChunkTokens(t, dir, 2)
	mustBeInvalid(t, dir, `field "output_tokens": is 2, fewer than the`)
}

// A field provenance declares absent must be absent from every record.
func TestFieldDeclaredAbsentMustBeAbsent(t *testing.T) {
	seed := int64(1)
	m := &schema.Manifest{Evidence: schema.EvidenceImported, Client: schema.Client{Seed: &seed},
		Load:       schema.Load{Mode: schema.ModeRate, Repeats: 1, Points: []schema.Point{{Name: "p", Rate: 10, Arrival: schema.ArrivalConstant}}},
		Provenance: &schema.Provenance{Fields: map[string]schema.FieldOrigin{"scheduled_ns": {Status: "absent", How: "x"}, "chunk_tokens": {Status: "absent", How: "x"}}}}
	c := schema.NewRecordChecker(m)
	s := int64(0)
	ps := c.Check(schema.RecordsFile, 1, &schema.Record{ID: "a", Point: "p", Phase: schema.PhaseMeasure, Status: schema.StatusOK,
		ScheduledNS: &s, SentNS: 1, EndNS: 10, ChunksNS: []int64{5}, ChunkTokens: []int64{1}, OutputTokens: 1})
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	for _, w := range []string{`field "scheduled_ns": is set, but manifest.provenance declares scheduled_ns absent`, `field "chunk_tokens": is set`} {
		if !strings.Contains(all, w) {
			t.Errorf("problems do not say %q:\n%s", w, all)
		}
	}
}

// dropChunkTokens deletes chunk_tokens from a record line.
func dropChunkTokens(t *testing.T, dir string, line int) {
	t.Helper()
	editLines(t, dir, map[int][2]string{line: {`,"chunk_tokens":\[[0-9,]*\]`, ``}})
}
