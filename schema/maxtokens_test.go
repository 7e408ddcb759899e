package schema

import (
	"strings"
	"testing"
)

// Every record's output_tokens multiplied by 64 above
// decoding.max_tokens 16 was valid, and verify recomputed output tok/s ×64
// and TPOT ÷64. The server's count never exceeds max_tokens.
func TestOutputTokensAboveMaxTokensAreInvalid(t *testing.T) {
	for _, tc := range []struct {
		counts string
		max    int
		out    int64
		want   string
	}{
		{"server-usage", 16, 16, ""},
		{"server-usage", 16, 3, ""}, // stopped early: allowed, even under ignore_eos
		{"server-usage", 16, 17, `field "output_tokens": 17 is more than decoding.max_tokens 16`},
		{"server-usage", 16, 1024, `1024 is more than decoding.max_tokens 16`},
		{"chunk-count-estimate", 16, 17, `17 is more than decoding.max_tokens 16`},
		{"server-usage", 0, 1024, ""}, // no max_tokens stated: no bound
		// A client's own tokenizer may count the text differently.
		{"client-tokenizer", 16, 17, ""},
		{"tool-reported", 16, 17, ""},
	} {
		m := &Manifest{Client: Client{TokenCounts: tc.counts}, Decoding: Decoding{MaxTokens: tc.max, IgnoreEOS: true},
			Load: Load{Mode: ModeConcurrency, Repeats: 1, Points: []Point{{Name: "p", Concurrency: 1}}}}
		c := NewRecordChecker(m)
		ps := c.Check(RecordsFile, 1, &Record{ID: "a", Point: "p", Phase: PhaseMeasure, Status: StatusOK, SentNS: 1, EndNS: 100,
			ChunksNS: []int64{10, 20}, OutputTokens: tc.out})
		got := ""
		for _, p := range ps {
			got += p.String() + "\n"
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s max %d output %d: problems %q, want %q", tc.counts, tc.max, tc.out, got, tc.want)
		}
	}
}

// Under benchseal/v1 a point's output_tokens is the max_tokens capture sent
// for its synthetic prompts (a signed plan pins it, while
// decoding.max_tokens is only the manifest's word): records above it are
// invalid too.
func TestOutputTokensAbovePointOutputTokensAreInvalid(t *testing.T) {
	for _, tc := range []struct {
		gen      string
		pointOut int
		out      int64
		want     string
	}{
		{GeneratorBenchsealV1, 16, 16, ""},
		{GeneratorBenchsealV1, 16, 17, `17 is more than load.points[0].output_tokens 16, the max_tokens load.generator "benchseal/v1" sent`},
		{GeneratorBenchsealV1, 0, 1024, ""}, // prompts from a file
		{"", 16, 17, ""},                    // another client's point setting is not a max_tokens
	} {
		m := &Manifest{Client: Client{TokenCounts: "server-usage"}, Decoding: Decoding{MaxTokens: 4096},
			Load: Load{Mode: ModeConcurrency, Repeats: 1, Generator: tc.gen, Points: []Point{{Name: "p", Concurrency: 1, OutputTokens: tc.pointOut}}}}
		c := NewRecordChecker(m)
		ps := c.Check(RecordsFile, 1, &Record{ID: "p.r0.m0", Point: "p", Phase: PhaseMeasure, Status: StatusOK, SentNS: 1, EndNS: 100,
			ChunksNS: []int64{10, 20}, OutputTokens: tc.out})
		got := ""
		for _, p := range ps {
			got += p.String() + "\n"
		}
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("generator %q point output_tokens %d output %d: problems %q, want %q", tc.gen, tc.pointOut, tc.out, got, tc.want)
		}
	}
}
