package aiperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

// exportLines returns the lines of the run1 profile_export.jsonl and the
// 0-based numbers of two ok records, a before b in the file.
func exportLines(t *testing.T) (files []ingest.File, lines [][]byte, a, b int) {
	t.Helper()
	files = importtest.Load(t, Tool, fixture...)
	lines = bytes.SplitAfter(files[0].Data, []byte("\n"))
	a, b = -1, -1
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"request_latency":`)) {
			if a < 0 {
				a = i
			} else if i > a+10 {
				b = i
				break
			}
		}
	}
	if a < 0 || b < 0 {
		t.Fatal("fixture has too few ok records")
	}
	return files, lines, a, b
}

var timestampRE = regexp.MustCompile(`"timestamp_ns":[0-9]+`)

// Records are emitted in order of start, but when several lines are bad
// the one reported is the first bad line of the file, whatever the kind
// of fault and whenever the line started.
func TestFirstBadLineInFileOrderIsReported(t *testing.T) {
	cases := []struct {
		name string
		// breakA and breakB break the earlier and the later line.
		breakA, breakB func([]byte) []byte
		// wantLater: the later line is reported (a line that does not
		// decode, or is not a record, is found before any record is built).
		wantLater bool
		want      string
	}{
		{
			name:   "both records incomplete, the later one started first",
			breakA: replaceIn(`"request_latency":`, `"x_request_latency":`),
			breakB: replaceIn(`"output_sequence_length":`, `"x_output_sequence_length":`),
			want:   "metrics.request_latency: missing",
		},
		{
			name:      "an incomplete record before a line without start",
			breakA:    replaceIn(`"request_latency":`, `"x_request_latency":`),
			breakB:    func(l []byte) []byte { return timestampRE.ReplaceAll(l, []byte(`"x_timestamp_ns":1`)) },
			wantLater: true,
			want:      "request_start_ns",
		},
		{
			name:      "a negative latency before a wrongly typed metric",
			breakA:    replaceIn(`"request_latency":{"value":`, `"request_latency":{"value":-`),
			breakB:    replaceIn(`"request_latency":{`, `"request_latency":"ms","x":{`),
			wantLater: true,
			want:      "wrong type",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files, lines, a, b := exportLines(t)
			first := timestampRE.Find(lines[0])
			// The later line starts before every other one.
			lines[b] = timestampRE.ReplaceAll(lines[b], []byte(fmt.Sprintf(`"timestamp_ns":%d`, mustInt(t, first)-1)))
			lines[a], lines[b] = tc.breakA(lines[a]), tc.breakB(lines[b])
			files[0].Data = bytes.Join(lines, nil)
			_, err := Parse(files)
			want := a + 1
			if tc.wantLater {
				want = b + 1
			}
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("run1_profile_export.jsonl:%d:", want)) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want line %d and %q", err, want, tc.want)
			}
		})
	}
}

func replaceIn(old, new string) func([]byte) []byte {
	return func(l []byte) []byte { return bytes.Replace(l, []byte(old), []byte(new), 1) }
}

func mustInt(t *testing.T, field []byte) int64 {
	t.Helper()
	var v struct {
		N int64 `json:"timestamp_ns"`
	}
	if err := json.Unmarshal(append(append([]byte("{"), field...), '}'), &v); err != nil {
		t.Fatal(err)
	}
	return v.N
}

// Every line of the raw export is checked, also one that no line of
// profile_export.jsonl refers to.
func TestUnreferencedBadRawLineFails(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	raw := `{"metadata":{"x_request_id":"nobody","timestamp_ns":1},"start_perf_ns":5,"responses":[]}` + "\n" +
		`{"metadata":{"x_request_id":"nobody-either","timestamp_ns":1},"start_perf_ns":5,"responses":{"perf_ns":6}}` + "\n"
	files = append(files, ingest.File{Name: "profile_export_raw.jsonl", Data: []byte(raw)})
	_, err := Parse(files)
	if err == nil || !strings.Contains(err.Error(), "profile_export_raw.jsonl:2:") || !strings.Contains(err.Error(), "responses") {
		t.Fatalf("error %v, want line 2 of the raw export and field responses", err)
	}
}

// The one-pass import (Stream) and the check that decodes every line
// whole and builds the records in file order agree on every input: the
// same error, or the same manifest and claims.
func FuzzStreamMatchesFileOrderCheck(f *testing.F) {
	seed := importtest.Load(f, Tool, fixture...)
	// Small seeds (a few lines, some out of order) keep each run short.
	lines := bytes.SplitAfter(seed[0].Data, []byte("\n"))
	f.Add(bytes.Join(lines[:4], nil))
	f.Add(bytes.Join([][]byte{lines[40], lines[3], []byte("\n"), lines[20]}, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		files := append([]ingest.File(nil), seed...)
		files[0] = ingest.File{Name: seed[0].Name, Data: data}
		res, err := Parse(files)
		want, wantErr := stream(files, nil)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("Stream: %v; file-order check: %v", err, wantErr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(res.Manifest, want.Manifest) || !reflect.DeepEqual(res.Claims, want.Claims) {
			t.Fatal("Stream and the file-order check give different manifests or claims")
		}
	})
}

// An error of emit (a full disk, a cancelled import) ends the import at
// once and is returned as is, even when a later line is bad too.
func TestEmitErrorIsReturnedAsIs(t *testing.T) {
	files, lines, _, b := exportLines(t)
	lines[b] = bytes.Replace(lines[b], []byte(`"request_latency":`), []byte(`"x_request_latency":`), 1)
	files[0].Data = bytes.Join(lines, nil)
	full := errors.New("disk full")
	calls := 0
	_, err := Stream(files, func(*schema.Record) error {
		calls++
		return full
	})
	if err != full || calls != 1 {
		t.Fatalf("error %v after %d calls, want %v after 1", err, calls, full)
	}
}
