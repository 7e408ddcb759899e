package schematest

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/benchseal/benchseal/schema"
)

// Distinct returns n records whose pointer and slice fields (found by
// reflection over schema.Record, so a field added later is covered too)
// are all set, with values that differ between records, and their JSON
// lines (newline-terminated). It fails on a pointer or slice field of a
// type it does not know how to fill, so that a new kind of borrowed field
// cannot go unchecked.
func Distinct(n int) ([]schema.Record, []byte, error) {
	recs := make([]schema.Record, n)
	var lines []byte
	for i := range recs {
		r := &recs[i]
		r.ID = fmt.Sprintf("req-%d", i)
		r.Point = "p"
		r.Phase = schema.PhaseMeasure
		r.SentNS = int64(1000 * i)
		r.EndNS = r.SentNS + 500
		r.InputTokens, r.OutputTokens = 3, 2
		r.Status = schema.StatusOK
		v := reflect.ValueOf(r).Elem()
		for j := range v.NumField() {
			f, sf := v.Field(j), v.Type().Field(j)
			base := int64(7*i + j + 1)
			switch {
			case f.Type() == reflect.TypeOf(json.RawMessage(nil)):
				f.SetBytes([]byte(fmt.Sprintf(`{"k":%d}`, base)))
			case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Int64:
				p := base
				f.Set(reflect.ValueOf(&p))
			case f.Type() == reflect.TypeOf((*schema.ServerReport)(nil)):
				// Every field an int64 pointer of its own (the decoder
				// allocates a report per record: nothing is borrowed).
				sr := reflect.New(f.Type().Elem())
				for k := range sr.Elem().NumField() {
					p := base*10 + int64(k)
					sr.Elem().Field(k).Set(reflect.ValueOf(&p))
				}
				f.Set(sr)
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Int64:
				f.Set(reflect.ValueOf([]int64{base, base + 1}))
			case f.Kind() == reflect.Pointer || f.Kind() == reflect.Slice || f.Kind() == reflect.Map:
				return nil, nil, fmt.Errorf("schematest: field %s of type %s is not filled: teach Distinct (and every NextInto consumer) about it", sf.Name, f.Type())
			}
		}
		var err error
		if lines, err = schema.AppendRecord(lines, r); err != nil {
			return nil, nil, err
		}
		lines = append(lines, '\n')
	}
	return recs, lines, nil
}

// Compare reports the first record of got that differs from want (as
// Distinct wrote them), or a different count.
func Compare(got []*schema.Record, want []schema.Record) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(*got[i], want[i]) {
			return fmt.Errorf("record %d kept as %+v, written %+v", i, *got[i], want[i])
		}
	}
	return nil
}
