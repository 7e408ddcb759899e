package rerun

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/benchseal/benchseal/schema"
)

// MaxItems bounds the workload items CheckForcedLength reads: capture
// writes at most capture.MaxWorkloadItems (a test in reproduce keeps the
// two equal), and a longer workload is no capture's.
const MaxItems = 1 << 20

// Forced reports whether a manifest states a test that forces the output
// length (capture --force-length: decoding.ignore_eos, and
// decoding.min_tokens when every item asks for one length), as
// reproduce's BuildTest reads it.
func Forced(m *schema.Manifest) bool { return m.Decoding.IgnoreEOS || m.Decoding.MinTokens > 0 }

// CheckForcedLength refuses a run whose test forces the output length
// but whose ok records end shorter than forced: such a run did not run
// that test (its server ignored ignore_eos and min_tokens, or its records
// were made otherwise and its manifest edited to state forced length).
// A request's forced length is what capture sent as max_tokens,
// min_tokens and ignore_eos: its workload item's output length
// (workload, the run's workload.jsonl, read as capture.ReadPrompts reads
// it: the largest of output_tokens, max_tokens and output_len; nil when
// the run ships none), else the manifest's decoding.min_tokens; a record
// with neither is not judged. The message names the first record that
// falls short, its output tokens and forced length, and how many of the
// ok records fall short. The records are streamed; the lengths take 4
// bytes per workload item. A run whose test does not force the length
// passes: an honest capture against a server that ignores ignore_eos is
// a valid run, only not a run of a forced-length test.
func CheckForcedLength(run schema.Run, workload io.Reader) error {
	m := run.Manifest()
	if !Forced(m) {
		return nil
	}
	var lengths []int32
	if workload != nil {
		var err error
		if lengths, err = forcedLengths(workload); err != nil {
			return fmt.Errorf("read the forced lengths of %s: %w", schema.WorkloadFile, err)
		}
	}
	it, err := run.OpenRecords()
	if err != nil {
		return err
	}
	defer it.Close()
	var short, ok int
	var first string
	for {
		rec, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read the records: %w", err)
		}
		if rec.Status != schema.StatusOK {
			continue
		}
		ok++
		want, err := forcedOf(rec, lengths, m.Decoding.MinTokens)
		if err != nil {
			return err
		}
		if want > 0 && rec.OutputTokens < want {
			if short == 0 {
				first = fmt.Sprintf("record %q has %d output tokens, its forced length is %d", rec.ID, rec.OutputTokens, want)
			}
			short++
		}
	}
	if short > 0 {
		return fmt.Errorf("the test forces the output length (decoding.ignore_eos/min_tokens), but %s; %d of %d ok records are shorter than forced: the server did not force the length, so this is not a run of the test", first, short, ok)
	}
	return nil
}

// forcedOf is the forced length of an ok record: its item's output
// length, else minTokens (0: not known).
func forcedOf(rec *schema.Record, lengths []int32, minTokens int) (int64, error) {
	if rec.Item == nil || lengths == nil {
		return int64(minTokens), nil
	}
	i := *rec.Item
	if i < 0 || i >= int64(len(lengths)) {
		return 0, fmt.Errorf("record %q: item %d is not one of the %d items of %s", rec.ID, i, len(lengths), schema.WorkloadFile)
	}
	if l := lengths[i]; l > 0 {
		return int64(l), nil
	}
	return int64(minTokens), nil
}

// forcedLengths reads each workload item's output length (0: it states
// none); blank lines are no items, as capture.ReadPrompts skips them.
func forcedLengths(r io.Reader) ([]int32, error) {
	var out []int32
	err := schema.EachJSONLine(r, schema.MaxWorkloadLine, func(line int, b []byte) error {
		var in struct {
			OutputTokens int64 `json:"output_tokens"`
			MaxTokens    int64 `json:"max_tokens"`
			OutputLen    int64 `json:"output_len"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if len(out) == MaxItems {
			return fmt.Errorf("more than %d items", MaxItems)
		}
		out = append(out, int32(min(max(in.OutputTokens, in.MaxTokens, in.OutputLen, 0), math.MaxInt32)))
		return nil
	}, func(line int, err error) error { return fmt.Errorf("line %d: %w", line, err) })
	if err != nil {
		return nil, err
	}
	return out, nil
}
