package importtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// Root returns the repository root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// FixtureDir returns testdata/fixtures/<tool>.
func FixtureDir(tool string) string {
	return filepath.Join(Root(), "testdata", "fixtures", tool)
}

// Load reads fixture files of tool.
func Load(t testing.TB, tool string, names ...string) []ingest.File {
	t.Helper()
	var out []ingest.File
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(FixtureDir(tool), n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ingest.File{Name: n, Data: b})
	}
	return out
}

// Write writes res as a run directory in a temporary folder and returns
// its path. With KEEP=dir in the environment the run is also copied there
// for inspection.
func Write(t testing.TB, tool string, files []ingest.File, res *ingest.Result) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := ingest.Write(dir, tool, files, res, ingest.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("KEEP"); keep != "" {
		os.RemoveAll(keep)
		if err := os.CopyFS(keep, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ParseFunc parses the files of one import.
type ParseFunc func([]ingest.File) (*ingest.Result, error)

// BadInput is one malformed input and what its error must say.
type BadInput struct {
	Name  string
	Files []ingest.File
	// Want are substrings the error must contain.
	Want []string
}

// CheckBad runs parse on each bad input and checks it fails with an
// ingest.ErrBadInput (or ErrNoFiles) error that names the file, without
// panicking.
func CheckBad(t *testing.T, parse ParseFunc, cases []BadInput) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			res, err := parse(c.Files)
			if err == nil {
				t.Fatalf("parse succeeded with %d records, want an error", len(res.Records))
			}
			if !errors.Is(err, ingest.ErrBadInput) && !errors.Is(err, ingest.ErrNoFiles) {
				t.Errorf("error %q does not wrap ingest.ErrBadInput", err)
			}
			for _, w := range c.Want {
				if !contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// ExternalCheck imports files with parse into a temporary run directory,
// validates it, and recomputes every claim under the claims' definitions
// with replay's ClaimChecker. It fails the test on a mismatch unless the
// claim's metric is listed in knownMismatch (a replay gap reported to the
// lead), and on a claim marked not recomputable being counted as matched.
// It logs every outcome and returns the checks.
func ExternalCheck(t *testing.T, tool string, files []ingest.File, parse ParseFunc, knownMismatch map[string]string) []schema.ClaimCheck {
	t.Helper()
	res, err := parse(files)
	if err != nil {
		t.Fatal(err)
	}
	dir := Write(t, tool, files, res)
	if err := schema.ValidateRunDocuments(dir, 0); err != nil {
		t.Fatalf("imported run does not validate: %v", err)
	}
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	checks, err := replay.ClaimChecker{}.CheckClaims(context.Background(), rd)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) == 0 {
		t.Fatal("no claims were checked")
	}
	claimed := map[string]schema.Claim{}
	for _, p := range rd.Claims().Points {
		for _, c := range p.Metrics {
			claimed[p.Point+" "+c.Metric] = c
		}
	}
	counts := map[string]int{}
	for _, c := range checks {
		counts[c.Outcome]++
		cl := claimed[c.Point+" "+c.Metric]
		switch c.Outcome {
		case schema.ClaimMatched:
			if cl.NotRecomputable != "" {
				t.Errorf("%s %s: marked not recomputable but matched", c.Point, c.Metric)
			}
			t.Logf("matched          %-28s %-22s (%s) rel %s", c.Metric, digits.Sig(c.Claimed, 17), cl.Source, digits.Sci(deref(c.RelError), 1))
		case schema.ClaimMismatched:
			if why, ok := knownMismatch[c.Metric]; ok {
				t.Logf("KNOWN MISMATCH   %-28s claimed %s recomputed %s (%s): %s", c.Metric, digits.Sig(c.Claimed, 17), digits.Sig(deref(c.Recomputed), 17), cl.Source, why)
			} else {
				t.Errorf("mismatch %s %s: claimed %s (%s), recomputed %s, rel %s", c.Point, c.Metric, digits.Sig(c.Claimed, 17), cl.Source, digits.Sig(deref(c.Recomputed), 17), digits.Sig(deref(c.RelError), 3))
			}
		default:
			t.Logf("not recomputable %-28s %-22s (%s): %s", c.Metric, digits.Sig(c.Claimed, 17), cl.Source, c.Reason)
		}
	}
	t.Logf("%s: %d matched, %d mismatched, %d not recomputable", tool, counts[schema.ClaimMatched], counts[schema.ClaimMismatched], counts[schema.ClaimNotRecomputable])
	return checks
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Replace returns a copy of files with the first occurrence of old in
// file i replaced by new; it fails the test when old is not there.
func Replace(t testing.TB, files []ingest.File, i int, old, new string) []ingest.File {
	t.Helper()
	out := append([]ingest.File(nil), files...)
	s := string(out[i].Data)
	j := strings.Index(s, old)
	if j < 0 {
		t.Fatalf("%s does not contain %q", out[i].Name, old)
	}
	out[i] = ingest.File{Name: out[i].Name, Data: []byte(s[:j] + new + s[j+len(old):])}
	return out
}

// Truncate returns a copy of files with file i cut to half its length.
func Truncate(files []ingest.File, i int) []ingest.File {
	out := append([]ingest.File(nil), files...)
	out[i] = ingest.File{Name: out[i].Name, Data: out[i].Data[:len(out[i].Data)/2]}
	return out
}

// WrongTool returns a file of another tool (the LLMPerf summary, or the
// vLLM result when tool is llmperf).
func WrongTool(t testing.TB, tool string) []ingest.File {
	if tool == "llmperf" {
		return Load(t, "vllm", "lambdalabs_llama3_8b_h100_prompt10.json")
	}
	return Load(t, "llmperf", "groq_70b_summary.json")
}

// CommonBad returns the bad inputs every importer must reject: a file of
// another tool, the first file truncated, and an empty file.
func CommonBad(t testing.TB, tool string, good []ingest.File) []BadInput {
	wrong := WrongTool(t, tool)
	return []BadInput{
		{Name: "wrong tool", Files: wrong, Want: []string{wrong[0].Name}},
		{Name: "truncated", Files: Truncate(good, 0), Want: []string{good[0].Name}},
		{Name: "empty", Files: []ingest.File{{Name: "empty.json"}}, Want: []string{"empty.json"}},
	}
}

// FuzzParse checks that parse never panics on data as file i of seed,
// and that whatever it accepts becomes a valid run (ingest.Finish).
func FuzzParse(f *testing.F, tool string, seed []ingest.File, i int, parse ParseFunc) {
	f.Add(seed[i].Data)
	// A small seed too: the first lines (or bytes) of the file, so that
	// the fuzzer mutates something it can run quickly.
	small := seed[i].Data
	if n := 0; len(small) > 2048 {
		for j, b := range small {
			if b == '\n' {
				if n++; n == 3 {
					small = small[:j+1]
					break
				}
			}
		}
		if len(small) > 4096 {
			small = small[:2048]
		}
		f.Add(small)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		files := append([]ingest.File(nil), seed...)
		files[i] = ingest.File{Name: seed[i].Name, Data: data}
		res, err := parse(files)
		if err != nil {
			return
		}
		_ = ingest.Finish(res, tool, files, ingest.WriteOptions{})
	})
}

// Outcomes are the expected outcome of an external check.
type Outcomes struct {
	Matched, Mismatched, NotRecomputable int
	// NotRecomputableMetrics lists the metrics reported not recomputable,
	// sorted, each once (whatever the point).
	NotRecomputableMetrics []string
}

// WantOutcomes fails the test when the checks of an external check differ
// from want.
func WantOutcomes(t *testing.T, checks []schema.ClaimCheck, want Outcomes) {
	t.Helper()
	var got Outcomes
	seen := map[string]bool{}
	for _, c := range checks {
		switch c.Outcome {
		case schema.ClaimMatched:
			got.Matched++
		case schema.ClaimMismatched:
			got.Mismatched++
		default:
			got.NotRecomputable++
			if !seen[c.Metric] {
				seen[c.Metric] = true
				got.NotRecomputableMetrics = append(got.NotRecomputableMetrics, c.Metric)
			}
		}
	}
	slices.Sort(got.NotRecomputableMetrics)
	if got.Matched != want.Matched || got.Mismatched != want.Mismatched || got.NotRecomputable != want.NotRecomputable {
		t.Errorf("external check: %d matched, %d mismatched, %d not recomputable; want %d, %d, %d",
			got.Matched, got.Mismatched, got.NotRecomputable, want.Matched, want.Mismatched, want.NotRecomputable)
	}
	if !slices.Equal(got.NotRecomputableMetrics, want.NotRecomputableMetrics) {
		t.Errorf("not recomputable metrics = %q, want %q", got.NotRecomputableMetrics, want.NotRecomputableMetrics)
	}
}

// errStop is what FuzzStream's emit returns to stop a stream.
var errStop = errors.New("stop")

// FuzzStream checks a streaming importer on data as file i of seed: it
// never panics; it emits records in order of sent_ns (the importers
// sort by start); and when emit fails at some record, the stream stops
// there and returns emit's error.
func FuzzStream(f *testing.F, seed []ingest.File, i int, stream ingest.StreamFunc) {
	f.Add(seed[i].Data, uint16(0))
	f.Add(seed[i].Data, uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, stopAt uint16) {
		files := append([]ingest.File(nil), seed...)
		files[i] = ingest.File{Name: seed[i].Name, Data: data}
		n, last := 0, int64(math.MinInt64)
		_, err := stream(files, func(rec *schema.Record) error {
			if rec.SentNS < last {
				t.Fatalf("record %d (%s) sent at %d, before the previous one (%d)", n, rec.ID, rec.SentNS, last)
			}
			last = rec.SentNS
			if n++; n == int(stopAt) {
				return errStop
			}
			return nil
		})
		if stopAt > 0 && n >= int(stopAt) {
			if n > int(stopAt) {
				t.Fatalf("%d records emitted after emit failed at record %d", n-int(stopAt), stopAt)
			}
			if !errors.Is(err, errStop) {
				t.Fatalf("emit failed, the stream returned %v", err)
			}
		}
	})
}

// DecodeNumbers decodes b into v keeping numbers exact (json.Number).
func DecodeNumbers(tb testing.TB, b []byte, v any) {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		tb.Fatal(err)
	}
}

// MustJSON encodes v as indented JSON (an edited fixture's bytes).
func MustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
