package replay

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// The completed output tokens are a count of what the records measured:
// defined without a window (sent times unmeasured, or every request
// failed: 0), null with the reason only when output_tokens was not
// measured.
func TestOutputTokensNeedOnlyTheTokenCounts(t *testing.T) {
	run := genRun(3, 30)
	var want int64
	for _, r := range run.recs {
		if r.Status == schema.StatusOK && len(r.ChunksNS) > 0 {
			want += r.OutputTokens
		}
	}
	p := mustReplay(t, run, Options{}).Results[0]
	if v := p.OutputTokens.Rat(); v == nil || !v.IsInt() || v.Num().Int64() != want {
		t.Errorf("output tokens %v, want %d", p.OutputTokens, want)
	}

	prov := &schema.Provenance{}
	prov.Set(schema.FieldSent, schema.FieldAbsent, "placeholder send times")
	run.m.Provenance = prov
	p = mustReplay(t, run, Options{}).Results[0]
	if !p.Scalars["window_ns"].IsNull() {
		t.Fatalf("window %v, want null", p.Scalars["window_ns"])
	}
	if v := p.OutputTokens.Rat(); v == nil || v.Num().Int64() != want {
		t.Errorf("no window: output tokens %v, want %d", p.OutputTokens, want)
	}

	prov.Set(schema.FieldOutputTokens, schema.FieldAbsent, "the number of responses")
	p = mustReplay(t, run, Options{}).Results[0]
	if !p.OutputTokens.IsNull() || !strings.Contains(p.OutputTokensNullReason, "output_tokens not measured by the source (the number of responses)") {
		t.Errorf("tokens unmeasured: %v %q", p.OutputTokens, p.OutputTokensNullReason)
	}

	run.m.Provenance = nil
	for _, r := range run.recs {
		r.Status, r.ChunksNS = schema.StatusError, nil
	}
	p = mustReplay(t, run, Options{}).Results[0]
	if v := p.OutputTokens.Rat(); v == nil || v.Sign() != 0 {
		t.Errorf("every request failed: output tokens %v, want 0", p.OutputTokens)
	}
}
