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

// ClaimCheck is the outcome of recomputing one claimed number.
type ClaimCheck struct {
	Point  string `json:"point"`
	Repeat *int   `json:"repeat,omitempty"`
	Metric string `json:"metric"`
	// Definitions names the metric definitions used to recompute.
	Definitions string `json:"definitions"`
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
