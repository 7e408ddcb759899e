package schema

import "encoding/json"

// Claims are the numbers a publisher claims for a run (claims.json,
// schema "benchseal/claims/v1").
type Claims struct {
	Schema string `json:"schema"`
	// Definitions names the metric definitions the values follow:
	// "benchseal" or a peer tool's name (ClaimDefinitions).
	Definitions string `json:"definitions"`
	// DefinitionsVersion names the version of those definitions the
	// values were computed under, e.g. "benchseal/2026.12" (docs/format.md
	// "Versions"): one of the kept versions. Claims files made before
	// versions were named (2026.12) have none.
	DefinitionsVersion string `json:"definitions_version,omitempty"`
	// Tolerance is the relative error allowed when a verifier recomputes
	// a value (e.g. 1e-9).
	Tolerance float64 `json:"tolerance"`
	// SLO, when set, is the objective the claimed goodput values used.
	SLO    *SLO         `json:"slo,omitempty"`
	Points []PointClaim `json:"points"`
}

// PointClaim holds the claimed values of one load point, and of one repeat
// when Repeat is set (otherwise the claim is about the point's repeat 0, or
// its summary when the metric is a summary metric).
type PointClaim struct {
	Point   string  `json:"point"`
	Repeat  *int    `json:"repeat,omitempty"`
	Metrics []Claim `json:"metrics"`
}

// Claim is one claimed number. Metric is a path into the replay JSON result
// of that point and repeat, e.g. "ttft_ns.p99", "request_throughput",
// "counts.ok". Values are in the replay contract's units (ns, per second).
type Claim struct {
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	// Source names the field of the original tool output the value came
	// from, for imported claims.
	Source string `json:"source,omitempty"`
	// NotRecomputable, when set, says why this value cannot be recomputed
	// from the stored records; a verifier reports it and never counts it as
	// matched.
	NotRecomputable string `json:"not_recomputable,omitempty"`
}

// MarshalJSON writes the claims with "points" and each point's "metrics" as
// arrays even when empty, as the published JSON Schema requires.
func (c Claims) MarshalJSON() ([]byte, error) {
	type plain Claims
	pts := make([]PointClaim, len(c.Points))
	for i, p := range c.Points {
		if p.Metrics == nil {
			p.Metrics = []Claim{}
		}
		pts[i] = p
	}
	c.Points = pts
	return json.Marshal(plain(c))
}

// CurrentDefinitionsVersion returns the current version of the named
// definitions, which new claims files name ("" for an unknown
// definitions).
func CurrentDefinitionsVersion(definitions string) string {
	if vs, _ := DefinitionsVersions(definitions); len(vs) > 0 {
		return vs[len(vs)-1]
	}
	return ""
}
