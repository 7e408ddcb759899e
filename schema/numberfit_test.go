package schema

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeClaimsNamesEveryNumberItCannotHold: a claims file with two
// numbers no Go field holds (a repeat beyond int, a value beyond float64),
// which its JSON Schema admits, gets a problem for each, naming the file
// and the field with its index; encoding/json stopped at the first and
// named it "points.repeat".
func TestDecodeClaimsNamesEveryNumberItCannotHold(t *testing.T) {
	doc := `{"schema": "benchseal/claims/v1", "definitions": "benchseal", "tolerance": 0, "points": [
  {"point": "c1", "repeat": 0, "metrics": [{"metric": "goodput", "value": 1}]},
  {"point": "c4", "repeat": 100000000000000000000000, "metrics": [{"metric": "goodput", "value": 1}, {"metric": "ttft_ns.p50", "value": 1e400}]}]}`
	_, err := DecodeClaims(strings.NewReader(doc), "run/claims.json")
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("DecodeClaims: %v, want a *ValidationError", err)
	}
	var got []string
	for _, p := range ve.Problems {
		got = append(got, p.String())
	}
	want := []string{
		`run/claims.json: field "points[1].metrics[1].value": cannot hold number 1e400 (want float64)`,
		`run/claims.json: field "points[1].repeat": cannot hold number 100000000000000000000000 (want int)`,
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("problems:\n%s\nwant:\n%s", g, w)
	}
}
