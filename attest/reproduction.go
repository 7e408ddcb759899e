package attest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/reproduce/verdict"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/stats"
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
	// Limits are the reviewer's statement of what differed between the
	// original and the reproduction (hardware, engine, model, client
	// location, …: compare's comparability guard over the two runs).
	// REPRODUCED means reproduced on the reviewer's stated setup. Empty:
	// nothing compare checks differed; nil (absent, null): not stated.
	Limits []string `json:"limits"`
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
		return fmt.Errorf("%s.margin %s: want a finite number above 0", ReproductionField, digits.Shortest(r.Margin))
	case !(r.Alpha > 0 && r.Alpha < 0.5):
		return fmt.Errorf("%s.alpha %s: want 0 < alpha < 0.5", ReproductionField, digits.Shortest(r.Alpha))
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
		return r.CheckLevel()
	}
	return nil
}

// CheckLevel is what LevelReproduced requires of the predicate alone
// (Statement, Parse and verify's Attest apply it):
// every claim REPRODUCED, once per point and metric; every stated ratio
// interval inside the margin by reproduce's own rule
// (stats.RatioVerdict), and counts and flags without one (they are
// compared exactly); and, by reproduce's own rule of the overall verdict
// (verdict.Overall), at least one claim verdict.Measured: a latency,
// throughput or energy reproduced with an interval, since counts and
// flags alone are reproduced by any server that answers.
func (r *Reproduction) CheckLevel() error {
	if bad := r.NotReproduced(); len(bad) > 0 {
		return fmt.Errorf("level %s, but %d claim(s) not reproduced: %s", LevelReproduced, len(bad), strings.Join(bad, "; "))
	}
	seen := make(map[[2]string]bool, len(r.Claims))
	measured := false
	for i, c := range r.Claims {
		k := [2]string{c.Point, c.Metric}
		if seen[k] {
			return fmt.Errorf("%s.claims[%d]: %s %s listed twice", ReproductionField, i, c.Point, c.Metric)
		}
		seen[k] = true
		hasInterval := c.Lo != nil && c.Hi != nil
		switch {
		case schema.ExactMetric(c.Metric) && (c.Ratio != nil || c.Lo != nil || c.Hi != nil):
			return fmt.Errorf("%s.claims[%d]: %s %s is a count or flag, compared exactly, but states a ratio", ReproductionField, i, c.Point, c.Metric)
		case schema.ExactMetric(c.Metric):
		case c.Ratio != nil && !hasInterval:
			return fmt.Errorf("%s.claims[%d]: %s %s is REPRODUCED with a ratio but no interval", ReproductionField, i, c.Point, c.Metric)
		case hasInterval:
			if v := stats.RatioVerdict(*c.Lo, *c.Hi, r.Margin); v != stats.EquivalenceReproduced {
				return fmt.Errorf("%s.claims[%d]: %s %s is REPRODUCED, but its interval [%s, %s] is not inside the margin's [%s, %s] (%s by reproduce's rule)",
					ReproductionField, i, c.Point, c.Metric, digits.Sig(*c.Lo, 4), digits.Sig(*c.Hi, 4), digits.Sig(1/(1+r.Margin), 4), digits.Sig(1+r.Margin, 4), v)
			}
		}
		kind := verdict.KindRatio
		if schema.ExactMetric(c.Metric) {
			kind = verdict.KindExact
		}
		measured = measured || verdict.Measured(kind, verdict.Verdict(c.Verdict), hasInterval)
	}
	if !measured {
		return fmt.Errorf("level %s needs a measured claim (latency, throughput, energy) reproduced with an interval: %s", LevelReproduced, verdict.OnlyCountsAndFlags)
	}
	return nil
}

// CheckCovers checks that r judges exactly the claims of the bundle it
// attests (every point × claimed metric of claims.json, none missing and
// none extra), and that a measured claim REPRODUCED without an interval
// (reproduce: 0 in every repeat of both) is one claimed as 0.
func (r *Reproduction) CheckCovers(cl *schema.Claims) error {
	want, vals := cl.ClaimedMetrics()
	listed := make(map[schema.PointMetric]ReproducedClaim, len(r.Claims))
	for _, c := range r.Claims {
		listed[schema.PointMetric{Point: c.Point, Metric: c.Metric}] = c
	}
	var missing []string
	for _, k := range want {
		c, ok := listed[k]
		if !ok {
			missing = append(missing, k.Point+" "+k.Metric)
			continue
		}
		if c.Lo == nil && !schema.ExactMetric(c.Metric) && slices.ContainsFunc(vals[k], func(v float64) bool { return v != 0 }) {
			return fmt.Errorf("%s: %s %s is REPRODUCED without an interval, but the bundle claims a value other than 0 for it", ReproductionField, k.Point, k.Metric)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s judges %d of the bundle's %d claimed metrics: no verdict for %s", ReproductionField, len(want)-len(missing), len(want), strings.Join(missing, "; "))
	}
	for _, c := range r.Claims {
		if _, ok := vals[schema.PointMetric{Point: c.Point, Metric: c.Metric}]; !ok {
			return fmt.Errorf("%s: %s %s is not a claim of the bundle", ReproductionField, c.Point, c.Metric)
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
