package schema

// RecordIterator streams records. Next returns io.EOF after the last one.
type RecordIterator interface {
	Next() (*Record, error)
	Close() error
}

// Run is a run whose records can be streamed any number of times: a run
// directory, or a bundle being verified. replay and verify work on Run.
type Run interface {
	// Manifest returns the run's manifest.
	Manifest() *Manifest
	// Claims returns the run's claims, or nil when it has none.
	Claims() *Claims
	// OpenRecords starts a new stream over all records, in file order.
	OpenRecords() (RecordIterator, error)
}

var _ Run = (*RunDir)(nil)

// Outcomes of checking one claim against recomputed values.
const (
	ClaimMatched         = "matched"
	ClaimMismatched      = "mismatched"
	ClaimNotRecomputable = "not-recomputable"
)

// PointFlags names what replay found about one point × repeat of a run
// ("overloaded", "generator-limited", …): verify lists every flagged
// point, claimed or not.
type PointFlags struct {
	Point  string   `json:"point"`
	Repeat int      `json:"repeat"`
	Flags  []string `json:"flags"`
	// Why says, per flag in Flags order, what set it.
	Why []string `json:"why,omitempty"`
}

// ClaimCheck is the outcome of recomputing one claimed number.
type ClaimCheck struct {
	Point  string `json:"point"`
	Repeat *int   `json:"repeat,omitempty"`
	Metric string `json:"metric"`
	// Definitions names the metric definitions used to recompute.
	Definitions string `json:"definitions"`
	// DefinitionsVersion names the version of those definitions the
	// claim was recomputed under: the one its claims name, or the one
	// inferred when they name none (docs/format.md "Versions").
	DefinitionsVersion string `json:"definitions_version,omitempty"`
	// VersionInferred is set when the claims name no version (made
	// before versions were named): DefinitionsVersion is the newest of
	// the versions then current under which none of them mismatches.
	VersionInferred bool `json:"version_inferred,omitempty"`
	// KnownDefect is the known defect of DefinitionsVersion's rules, a
	// fixed sentence, printed beside the outcome ("" when none).
	KnownDefect string `json:"known_defect,omitempty"`
	// Current is set when the current version of the definitions gives a
	// value other than the one recomputed under DefinitionsVersion.
	Current *ClaimUnderVersion `json:"current,omitempty"`
	// SLONote is set when the claims state an SLO of their own that
	// differs from the one the manifest declared before the run; it names
	// both, so a reader sees which objective the goodput claims use.
	SLONote    string   `json:"slo_note,omitempty"`
	Claimed    float64  `json:"claimed"`
	Recomputed *float64 `json:"recomputed,omitempty"`
	// RelError is |recomputed − claimed| / max(|claimed|, tiny).
	RelError  *float64 `json:"rel_error,omitempty"`
	Tolerance float64  `json:"tolerance"`
	Outcome   string   `json:"outcome"` // matched | mismatched | not-recomputable
	Reason    string   `json:"reason,omitempty"`
	// Flags names what replay found about the claimed point × repeat
	// (or, for a summary claim, any repeat of the point): "overloaded",
	// "generator-limited". A number claimed for a flagged point is shown
	// with its flag, whatever the outcome.
	Flags []string `json:"flags,omitempty"`
}

// ClaimUnderVersion is what another definitions version gives for a
// claim: its value, or why it has none, and what changed on the way.
type ClaimUnderVersion struct {
	Version string `json:"version"`
	// Value is nil when the version gives no number (Reason says why).
	Value  *float64 `json:"value,omitempty"`
	Reason string   `json:"reason,omitempty"`
	// Changed lists what changed in each version after the one the claim
	// was recomputed under ("VERSION: change").
	Changed []string `json:"changed"`
}
