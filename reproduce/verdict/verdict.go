// Package verdict holds the outcome of a reproduction (benchseal
// reproduce): the per-claim verdicts and the report, apart from the
// package that computes them, so that report renders them without
// depending on capture or verify.
package verdict

import "github.com/benchseal/benchseal/stats"

// SchemaV1 is the schema identifier of the reproduction report's JSON
// (published as `benchseal schema reproduce`).
const SchemaV1 = "benchseal/reproduce/v1"

// Verdict is the outcome of one claim, and of the whole reproduction.
type Verdict string

// The verdicts. Reproduced: the interval of the ratio lies inside the
// margin (or an exact quantity took the original's value in every
// repeat); NotReproduced: it lies outside; Inconclusive: neither, or no
// interval was possible.
const (
	Reproduced    Verdict = "REPRODUCED"
	NotReproduced Verdict = "NOT REPRODUCED"
	Inconclusive  Verdict = "INCONCLUSIVE"
)

// Test kinds of a claim.
const (
	// KindRatio tests the ratio reproduction/original across repeats
	// (stats.EquivalenceRatio).
	KindRatio = "ratio"
	// KindExact compares a count or flag exactly: the test fixes it.
	KindExact = "exact"
)

// Report is the result of a reproduction: every claimed metric and point
// of the original with its verdict, the overall verdict and what limits
// the comparison.
type Report struct {
	Schema string `json:"schema"`
	// Original names the verified bundle that was reproduced.
	Original OriginalRef `json:"original"`
	// ReproductionDir is the reproduction's run directory.
	ReproductionDir string `json:"reproduction_dir"`
	// ReproductionManifestDigest is "sha256:<hex>" of the reproduction
	// run directory's manifest.json bytes.
	ReproductionManifestDigest string `json:"reproduction_manifest_digest"`
	// Margin is the equivalence margin (0.1: the ratio's interval must
	// lie in [1/1.1, 1.1]); Alpha the test's level (the interval's confidence is
	// at least 1 − 2·Alpha).
	Margin float64 `json:"margin"`
	Alpha  float64 `json:"alpha"`
	// Definitions and DefinitionsVersion are the claims', under which both
	// sides are replayed; Boundary the original's measurement boundary.
	Definitions        string `json:"definitions"`
	DefinitionsVersion string `json:"definitions_version,omitempty"`
	Boundary           string `json:"boundary"`
	// Repeats are the repeats of each side.
	Repeats RepeatCounts `json:"repeats"`
	// Claims holds one verdict per claimed metric and point, in claims
	// order.
	Claims []ClaimVerdict `json:"claims"`
	// Overall is the verdict of the whole reproduction (Overall's rule):
	// NotReproduced when any claim is; Reproduced only when every claim
	// is and nothing is Withheld; else Inconclusive.
	Overall Verdict `json:"overall"`
	// Withheld says why the overall verdict cannot be Reproduced whatever
	// the claims' verdicts (only counts and flags tested, another model,
	// fewer repeats, …); empty when nothing withholds it.
	Withheld []string `json:"withheld"`
	// Counts tallies the claims' verdicts.
	Counts VerdictCounts `json:"counts"`
	// Limits are the differences between the original and the
	// reproduction (hardware, engine, client location, model revision,
	// …) that limit what a verdict shows: compare's comparability guard
	// over the two runs.
	Limits []string `json:"limits"`
	// Notes say where the reproduction's test departed from the
	// original's.
	Notes []string `json:"notes,omitempty"`
}

// OriginalRef names the reproduced bundle.
type OriginalRef struct {
	Bundle string `json:"bundle"`
	// RunManifest is the digest of the bundle's run manifest.
	RunManifest string `json:"run_manifest"`
	RunID       string `json:"run_id,omitempty"`
	// Authenticated is true when a pinned key or identity's signature
	// over the run manifest verified; SignedBy names them.
	Authenticated bool     `json:"authenticated"`
	SignedBy      []string `json:"signed_by,omitempty"`
}

// RepeatCounts are the repeats of the original and of the reproduction.
type RepeatCounts struct {
	Original     int `json:"original"`
	Reproduction int `json:"reproduction"`
}

// VerdictCounts tallies verdicts.
type VerdictCounts struct {
	Reproduced    int `json:"reproduced"`
	NotReproduced int `json:"not_reproduced"`
	Inconclusive  int `json:"inconclusive"`
}

// ClaimVerdict is the verdict of one claimed metric at one point.
type ClaimVerdict struct {
	Point string `json:"point"`
	// Metric is the per-repeat path tested ("ttft_ns.p99"); Paths the
	// claim paths it covers ("ttft_ns.p99" per repeat,
	// "summary.ttft_ns.p99.median").
	Metric string   `json:"metric"`
	Paths  []string `json:"paths"`
	Kind   string   `json:"kind"`
	// Claimed is the claim of the point itself (its summary median, or
	// the claim of a run without repeats); nil when only the repeats
	// carry claims, which ClaimedPerRepeat lists: no value is made up
	// from them.
	Claimed          *float64  `json:"claimed"`
	ClaimedPerRepeat []float64 `json:"claimed_per_repeat,omitempty"`
	// Original and Reproduced are the per-repeat values replayed from
	// the original bundle and from the reproduction run (null repeats
	// left out); OriginalMedian and ReproducedMedian their medians.
	Original         []float64 `json:"original"`
	Reproduced       []float64 `json:"reproduced"`
	OriginalMedian   *float64  `json:"original_median"`
	ReproducedMedian *float64  `json:"reproduced_median"`
	// Ratio is the Hodges–Lehmann ratio reproduction/original, nil when
	// none was computed; Lo and Hi bound its interval at Confidence, nil
	// when the repeats allow no interval.
	Ratio      *float64 `json:"ratio"`
	Lo         *float64 `json:"lo"`
	Hi         *float64 `json:"hi"`
	Confidence *float64 `json:"confidence"`
	Verdict    Verdict  `json:"verdict"`
	// RepeatsNeeded is, for an inconclusive ratio, the reproduction
	// repeats estimated to decide with the original's repeats as they are
	// (above stats.ExactLimit: more than it); 0 otherwise, and when no
	// reproduction repeats can give an interval with the original's.
	RepeatsNeeded int `json:"repeats_needed,omitempty"`
	// Reason says why there is no interval or how an exact quantity
	// differed.
	Reason string `json:"reason,omitempty"`
}

// Of converts the stats package's verdict.
func Of(v stats.EquivalenceVerdict) Verdict {
	switch Verdict(v) {
	case Reproduced, NotReproduced:
		return Verdict(v)
	}
	return Inconclusive
}

// OnlyCountsAndFlags is why a reproduction whose claims test nothing but
// that the server answers is not REPRODUCED overall.
const OnlyCountsAndFlags = "only counts and flags were tested: any server that answers reproduces them"

// Measured reports whether a claim of kind with verdict v tests more than
// that the server answers: a measured claim (a latency, throughput or
// energy: KindRatio), unless it was REPRODUCED without an interval (0 in
// every repeat of both sides). Counts and flags (KindExact) are
// reproduced by any server that answers the test's requests.
func Measured(kind string, v Verdict, interval bool) bool {
	return kind == KindRatio && (v != Reproduced || interval)
}

// Overall is the one rule of a reproduction's outcome, which benchseal
// reproduce prints and attest's level BENCHSEAL_REPRODUCED requires
// (attest.Reproduction.CheckLevel applies it to the predicate): NOT
// REPRODUCED when any claim is; REPRODUCED only when every claim is, at
// least one is Measured, and setup (what makes the reproduction another
// system or another test whatever its numbers) is empty; else
// INCONCLUSIVE. withheld is setup with OnlyCountsAndFlags added when no
// claim is Measured.
func Overall(cs []ClaimVerdict, setup []string) (v Verdict, n VerdictCounts, withheld []string) {
	measured := false
	for _, c := range cs {
		switch c.Verdict {
		case Reproduced:
			n.Reproduced++
		case NotReproduced:
			n.NotReproduced++
		default:
			n.Inconclusive++
		}
		measured = measured || Measured(c.Kind, c.Verdict, c.Lo != nil && c.Hi != nil)
	}
	withheld = append([]string{}, setup...)
	if len(cs) > 0 && !measured {
		withheld = append(withheld, OnlyCountsAndFlags)
	}
	switch {
	case n.NotReproduced > 0:
		return NotReproduced, n, withheld
	case n.Inconclusive > 0 || len(cs) == 0 || len(withheld) > 0:
		return Inconclusive, n, withheld
	}
	return Reproduced, n, withheld
}
