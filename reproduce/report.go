package reproduce

import "github.com/benchseal/benchseal/reproduce/verdict"

// The report types live in reproduce/verdict (so report renders
// them); these aliases are the names callers of Evaluate use.
type (
	// Report is the result of a reproduction (verdict.Report).
	Report = verdict.Report
	// ClaimVerdict is one claimed metric at one point (verdict.ClaimVerdict).
	ClaimVerdict = verdict.ClaimVerdict
	// Verdict is REPRODUCED, NOT REPRODUCED or INCONCLUSIVE.
	Verdict = verdict.Verdict
)

// The verdicts (verdict.Reproduced, …).
const (
	Reproduced    = verdict.Reproduced
	NotReproduced = verdict.NotReproduced
	Inconclusive  = verdict.Inconclusive
)

// The test kinds of a claim (verdict.KindRatio, verdict.KindExact).
const (
	KindRatio = verdict.KindRatio
	KindExact = verdict.KindExact
)

// SchemaV1 is the schema identifier of the report's JSON.
const SchemaV1 = verdict.SchemaV1
