package llmperf

import (
	"errors"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
)

// TestNoConcurrencyFromPlaceholderSendTimes: without the summary the
// files do not state the concurrency, and every send time is the
// placeholder 0, so the peak in flight (150, all requests) is not the
// offered load: the import is refused until the publisher states it, and
// then keeps the stated value.
func TestNoConcurrencyFromPlaceholderSendTimes(t *testing.T) {
	files := importtest.Load(t, Tool, fixture[0])
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	err = ingest.Finish(res, Tool, files, ingest.WriteOptions{Set: []string{"model.name=m"}})
	if err == nil || !errors.Is(err, ingest.ErrBadInput) || !strings.Contains(err.Error(), "load.points[0].concurrency") || !strings.Contains(err.Error(), "sent_ns not measured") {
		t.Fatalf("import without a stated concurrency: %v, want refused naming load.points[0].concurrency and sent_ns", err)
	}
	res, err = Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	err = ingest.Finish(res, Tool, files, ingest.WriteOptions{Set: []string{"model.name=m", `load.points=[{"name":"llmperf","concurrency":5,"requests":150}]`}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Manifest.Load.Points[0].Concurrency; c != 5 {
		t.Fatalf("concurrency %d, want the stated 5", c)
	}
}
