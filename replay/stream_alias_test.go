package replay

import (
	"bytes"
	"io"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/schema/schematest"
)

// TestBatchFillKeepsEveryBorrowedField: records a batch decodes with
// NextInto must not change when the reader decodes the next ones. Every
// pointer and slice field of schema.Record is set (found by reflection,
// so a field added later is covered); record.shard was once left aliased.
func TestBatchFillKeepsEveryBorrowedField(t *testing.T) {
	want, lines, err := schematest.Distinct(5)
	if err != nil {
		t.Fatal(err)
	}
	rr := schema.NewRecordReader(bytes.NewReader(lines), "records")
	var b recordBatch
	b.fill(nil, rr)
	if b.err != io.EOF {
		t.Fatalf("batch ended with %v, want EOF", b.err)
	}
	if err := schematest.Compare(b.recs, want); err != nil {
		t.Error(err)
	}
}
