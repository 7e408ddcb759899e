package attest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// ReproductionField is the predicate field that carries a reproduction.
// VSA v1 tells consumers to ignore fields they do not know, so a VSA
// parser that is not benchseal's still reads the rest of the predicate.
const ReproductionField = "benchsealReproduction"

// Verdicts of a reproduced claim, as benchseal reproduce prints them.
const (
	VerdictReproduced    = "REPRODUCED"
	VerdictNotReproduced = "NOT REPRODUCED"
	VerdictInconclusive  = "INCONCLUSIVE"
)

// Reproduction is what a reviewer attests about a re-run of the bundle's
// test (benchseal reproduce): which run, within what margin, and each
// claim's verdict.
type Reproduction struct {
	// RunManifest names the reproduction run: its manifest.json by
	// sha256 digest, and where the reviewer keeps it (optional URI).
	RunManifest Descriptor `json:"runManifest"`
	// Margin is the equivalence margin (0.1: each ratio's interval inside
	// [1/1.1, 1.1]) and Alpha the test's level (intervals at 1 − 2α).
	Margin float64 `json:"margin"`
	Alpha  float64 `json:"alpha"`
	// Claims are the verdicts, one per claimed metric and point.
	Claims []ReproducedClaim `json:"claims"`
}

// ReproducedClaim is the verdict of one claimed metric at one point.
type ReproducedClaim struct {
	Point   string `json:"point"`
	Metric  string `json:"metric"`
	Verdict string `json:"verdict"`
	// Ratio is the Hodges–Lehmann ratio reproduction ÷ original and Lo,
	// Hi its interval; absent for a count compared exactly.
	Ratio *float64 `json:"ratio,omitempty"`
	Lo    *float64 `json:"lo,omitempty"`
	Hi    *float64 `json:"hi,omitempty"`
}

// maxReproducedClaims bounds the claims a predicate may list: a bundle's
// claims are a few per point, and the whole statement is already bounded
// by artifact.MaxSignatureBundleSize.
const maxReproducedClaims = 100000

// NotReproduced lists, one line per claim, the claims of r that are not
// REPRODUCED ("point metric: VERDICT").
func (r *Reproduction) NotReproduced() []string {
	var out []string
	for _, c := range r.Claims {
		if c.Verdict != VerdictReproduced {
			out = append(out, fmt.Sprintf("%s %s: %s", c.Point, c.Metric, c.Verdict))
		}
	}
	return out
}

// checkReproduction is the one rule of LevelReproduced, shared by
// Statement and Parse: the level needs a reproduction, and a reproduction
// with the level needs every claim REPRODUCED; a reproduction present is
// well formed (a sha256 run manifest, a finite margin above 0, α in
// (0, 0.5), at least one claim, known verdicts, finite ratios).
func checkReproduction(r *Reproduction, leveled bool) error {
	if r == nil {
		if leveled {
			return fmt.Errorf("level %s without %s", LevelReproduced, ReproductionField)
		}
		return nil
	}
	switch {
	case len(r.RunManifest.Digest) != 1 || !hex64.MatchString(r.RunManifest.Digest["sha256"]):
		return fmt.Errorf("%s.runManifest: want exactly a sha256 digest of 64 lowercase hex", ReproductionField)
	case !(r.Margin > 0) || math.IsInf(r.Margin, 0):
		return fmt.Errorf("%s.margin %v: want a finite number above 0", ReproductionField, r.Margin)
	case !(r.Alpha > 0 && r.Alpha < 0.5):
		return fmt.Errorf("%s.alpha %v: want 0 < alpha < 0.5", ReproductionField, r.Alpha)
	case len(r.Claims) == 0:
		return fmt.Errorf("%s.claims: none", ReproductionField)
	case len(r.Claims) > maxReproducedClaims:
		return fmt.Errorf("%s.claims: %d, more than %d", ReproductionField, len(r.Claims), maxReproducedClaims)
	}
	for i, c := range r.Claims {
		switch c.Verdict {
		case VerdictReproduced, VerdictNotReproduced, VerdictInconclusive:
		default:
			return fmt.Errorf("%s.claims[%d].verdict %q: want REPRODUCED, NOT REPRODUCED or INCONCLUSIVE", ReproductionField, i, c.Verdict)
		}
		if c.Point == "" || c.Metric == "" {
			return fmt.Errorf("%s.claims[%d]: point and metric are required", ReproductionField, i)
		}
		for _, v := range []*float64{c.Ratio, c.Lo, c.Hi} {
			if v != nil && (!(*v > 0) || math.IsInf(*v, 0)) {
				return fmt.Errorf("%s.claims[%d]: ratio and interval must be finite numbers above 0", ReproductionField, i)
			}
		}
	}
	if leveled {
		if bad := r.NotReproduced(); len(bad) > 0 {
			return fmt.Errorf("level %s, but %d claim(s) not reproduced: %s", LevelReproduced, len(bad), strings.Join(bad, "; "))
		}
	}
	return nil
}

// withReproduction adds r to the compact predicate object as
// ReproductionField. The fields come out in encoding/json's sorted key
// order, so equal summaries still give equal bytes.
func withReproduction(predicate json.RawMessage, r *Reproduction) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(predicate, &fields); err != nil {
		return nil, err
	}
	rb, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("attest: encode %s: %w", ReproductionField, err)
	}
	fields[ReproductionField] = rb
	return json.Marshal(fields)
}

// parseReproduction reads ReproductionField from the predicate: nil when
// absent; otherwise strictly (no unknown field, no trailing data; the
// whole payload was already checked for duplicate keys).
func parseReproduction(predicate json.RawMessage) (*Reproduction, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(predicate, &fields); err != nil {
		return nil, err
	}
	raw, ok := fields[ReproductionField]
	if !ok {
		return nil, nil
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, fmt.Errorf("%s is null", ReproductionField)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var r Reproduction
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w", ReproductionField, err)
	}
	if dec.More() {
		return nil, errors.New(ReproductionField + ": trailing data")
	}
	return &r, nil
}
