package rerun

import (
	"io"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// memRun is a run held in memory.
type memRun struct {
	m    *schema.Manifest
	recs []*schema.Record
}

func (r *memRun) Manifest() *schema.Manifest { return r.m }
func (r *memRun) Claims() *schema.Claims     { return nil }
func (r *memRun) OpenRecords() (schema.RecordIterator, error) {
	return &memIter{recs: r.recs}, nil
}

type memIter struct{ recs []*schema.Record }

func (it *memIter) Next() (*schema.Record, error) {
	if len(it.recs) == 0 {
		return nil, io.EOF
	}
	r := it.recs[0]
	it.recs = it.recs[1:]
	return r, nil
}
func (it *memIter) Close() error { return nil }

// forcedRun is a run of items whose output lengths are lengths, one ok
// record per item with out[i] output tokens, and one error record of 0.
func forcedRun(d schema.Decoding, out []int64) *memRun {
	r := &memRun{m: &schema.Manifest{Decoding: d}}
	for i, o := range out {
		item := int64(i)
		r.recs = append(r.recs, &schema.Record{ID: "r" + string(rune('0'+i)), Item: &item, OutputTokens: o, Status: schema.StatusOK})
	}
	item := int64(0)
	r.recs = append(r.recs, &schema.Record{ID: "err", Item: &item, Status: schema.StatusError})
	return r
}

// TestCheckForcedLength: a forced-length run whose ok records all reach
// their item's output length passes, as does any run of a test that does
// not force it; one whose ok records fall short is refused, naming the
// first record, its output tokens and forced length and how many fall
// short; without workload items, decoding.min_tokens is the forced
// length; a record naming an item the workload lacks is an error.
func TestCheckForcedLength(t *testing.T) {
	const workload = `{"prompt":"a","output_tokens":8}` + "\n\n" + `{"prompt":"b","max_tokens":16}` + "\n" + `{"prompt":"c","output_len":4}` + "\n"
	eos := schema.Decoding{IgnoreEOS: true}
	for _, c := range []struct {
		name     string
		run      *memRun
		workload string
		words    string
	}{
		{"forced, every length reached", forcedRun(eos, []int64{8, 16, 4}), workload, ""},
		{"not forced, short", forcedRun(schema.Decoding{}, []int64{3, 5, 1}), workload, ""},
		{"forced, short", forcedRun(eos, []int64{8, 15, 1}), workload, `record "r1" has 15 output tokens, its forced length is 16; 2 of 3 ok records are shorter than forced`},
		{"min_tokens, no workload", forcedRun(schema.Decoding{MinTokens: 8}, []int64{8, 7, 9}), "", `record "r1" has 7 output tokens, its forced length is 8; 1 of 3 ok records`},
		{"item out of range", forcedRun(eos, []int64{8, 16, 4, 4}), workload, `record "r3": item 3 is not one of the 3 items`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var wl io.Reader
			if c.workload != "" {
				wl = strings.NewReader(c.workload)
			}
			err := CheckForcedLength(c.run, wl)
			switch {
			case c.words == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.words != "" && (err == nil || !strings.Contains(err.Error(), c.words)):
				t.Fatalf("error %v, want %q", err, c.words)
			}
		})
	}
}
