package artifact

import (
	"bytes"
	"io"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/schema/schematest"
)

// TestBatchStoreKeepsEveryBorrowedField: records decoded with NextInto and
// kept by batchStore.keep must not change when the reader decodes the
// next ones. Every pointer and slice field of schema.Record is set (found
// by reflection, so a field added later is covered); record.shard was
// once left aliased, so every record of a layer read the last one's shard.
func TestBatchStoreKeepsEveryBorrowedField(t *testing.T) {
	want, lines, err := schematest.Distinct(5)
	if err != nil {
		t.Fatal(err)
	}
	rr := schema.NewRecordReader(bytes.NewReader(lines), "records")
	var st batchStore
	var got []*schema.Record
	for {
		rec := st.next()
		err := rr.NextInto(rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, st.keep(rec))
	}
	if err := schematest.Compare(got, want); err != nil {
		t.Error(err)
	}
}
