package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// TestShowClaimsHelpSaysWhatItShows: verify's text output lists, by
// default, every claim but a plain match, and with --show-claims every
// claim; the flag's help says so (it had said "every recomputed claim, not
// only those that did not match", which left out the unverified ones shown
// either way and that the flag changes the text output only).
func TestShowClaimsHelpSaysWhatItShows(t *testing.T) {
	one := 1.0
	r := &verify.Result{Claims: []schema.ClaimCheck{
		{Point: "c1", Metric: "goodput", Claimed: 1, Recomputed: &one, Outcome: schema.ClaimMatched},
		{Point: "c2", Metric: "goodput", Claimed: 2, Recomputed: &one, Outcome: schema.ClaimMismatched},
		{Point: "c3", Metric: "goodput", Claimed: 3, Outcome: schema.ClaimNotRecomputable, Reason: "no records"},
		{Point: "c4", Metric: "goodput", Claimed: 1, Recomputed: &one, Outcome: schema.ClaimMatched, Flags: []string{"overloaded"}},
	}}
	shown := func(all bool) string {
		var b bytes.Buffer
		if err := report.WriteVerifyText(&b, r, report.VerifyTextOptions{ShowClaims: all}); err != nil {
			t.Fatal(err)
		}
		var pts []string
		for _, p := range []string{"c1", "c2", "c3", "c4"} {
			if strings.Contains(b.String(), " "+p+" goodput:") {
				pts = append(pts, p)
			}
		}
		return strings.Join(pts, ",")
	}
	if got := shown(false); got != "c2,c3,c4" {
		t.Errorf("by default the text lists the claims of %s, want c2,c3,c4 (all but the plain match)", got)
	}
	if got := shown(true); got != "c1,c2,c3,c4" {
		t.Errorf("with --show-claims the text lists the claims of %s, want every one", got)
	}
	f := newVerifyCmd(&IO{}, &Deps{}).Flags().Lookup("show-claims")
	for _, want := range []string{"text output", "every claim", "matched ones too", "unverified", "flagged point", "json lists every claim"} {
		if !strings.Contains(f.Usage, want) {
			t.Errorf("--show-claims help %q does not say %q", f.Usage, want)
		}
	}
}
