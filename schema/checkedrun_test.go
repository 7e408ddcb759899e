package schema_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// readAll streams every record of run's next stream, by Next or, when the
// iterator has it, NextInto; it returns the count and the error that ended
// the stream (io.EOF after the last record).
func readAll(t *testing.T, run schema.Run, into bool) (int, error) {
	t.Helper()
	it, err := run.OpenRecords()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	ni, ok := it.(interface{ NextInto(*schema.Record) error })
	if into && !ok {
		t.Fatal("the checked stream has no NextInto (replay decodes into its batches through it)")
	}
	var rec schema.Record
	for n := 0; ; n++ {
		if into {
			err = ni.NextInto(&rec)
		} else {
			_, err = it.Next()
		}
		if err != nil {
			return n, err
		}
	}
}

// TestCheckedRunDirAsValidate: the first record stream of a CheckedRunDir
// ends as ValidateRunDocuments judges the run: io.EOF for a valid run, else
// its *ValidationError with the very problems validate lists (records'
// own, across records, workload's, attachments'), whichever way the
// records are read. Later streams are not checked.
func TestCheckedRunDirAsValidate(t *testing.T) {
	tests := []struct {
		name     string
		breakRun func(t *testing.T, dir string)
	}{
		{"valid", func(t *testing.T, dir string) {}},
		{"end_before_sent", func(t *testing.T, dir string) {
			editLines(t, dir, map[int][2]string{2: {`"end_ns":\d+`, `"end_ns":-5`}})
		}},
		{"several", func(t *testing.T, dir string) {
			editLines(t, dir, map[int][2]string{
				3: {`"status":"ok"`, `"status":"done"`},
				5: {`"id":"[^"]*"`, `"id":"c1-r0-0000000"`},
				8: {`"sent_ns":\d+`, `"sent_ns":"x"`},
			})
			write(t, filepath.Join(dir, schema.AttachmentsDir, "extra.txt"), "x")
		}},
		{"workload_edited", func(t *testing.T, dir string) {
			p := filepath.Join(dir, schema.WorkloadFile)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			write(t, p, string(b)+string(b[:1])) // no longer the manifest's sha256
		}},
	}
	for _, tc := range tests {
		for _, compress := range []bool{false, true} {
			if compress && tc.name != "valid" {
				continue // the edits are of plain lines
			}
			for _, into := range []bool{false, true} {
				dir := baseRun(t, compress)
				if err := os.MkdirAll(filepath.Join(dir, schema.AttachmentsDir), 0o755); err != nil {
					t.Fatal(err)
				}
				tc.breakRun(t, dir)
				want := schema.ValidateRunDocuments(dir, 5)
				if (want == nil) != (tc.name == "valid") {
					t.Fatalf("%s: validate says %v", tc.name, want)
				}
				run, err := schema.OpenCheckedRunDir(dir, 5)
				if err != nil {
					t.Fatal(err)
				}
				n, got := readAll(t, run, into)
				if want == nil {
					if got != io.EOF || n != 10 {
						t.Errorf("%s (compress %v, into %v): %d records, then %v; want 10, then EOF", tc.name, compress, into, n, got)
					}
				} else {
					var wv, gv *schema.ValidationError
					if !errors.As(want, &wv) || !errors.As(got, &gv) || !errors.Is(got, schema.ErrInvalid) {
						t.Fatalf("%s: stream ended with %v; validate says %v", tc.name, got, want)
					}
					if !reflect.DeepEqual(gv, wv) {
						t.Errorf("%s (into %v): stream ended with\n%v\nvalidate says\n%v", tc.name, into, gv, wv)
					}
				}
				// A second stream (replay's exact-percentile pass) reads
				// the records as the run directory does.
				var ve *schema.ValidationError
				if n2, err := readAll(t, run, into); errors.As(err, &ve) || (want == nil && (err != io.EOF || n2 != 10)) {
					t.Errorf("%s: second stream: %d records, then %v", tc.name, n2, err)
				}
			}
		}
	}
}
