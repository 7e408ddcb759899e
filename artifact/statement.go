package artifact

import (
	"encoding/json"
	"strings"
)

// Statement is an in-toto Statement v1 as benchseal signs it.
type Statement struct {
	Type          string     `json:"_type"`
	Subject       []Subject  `json:"subject"`
	PredicateType string     `json:"predicateType"`
	Predicate     *Predicate `json:"predicate"`
}

// Subject is one in-toto subject.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Predicate summarises a run (predicate type PredicateTypeRun). Every
// value is derived from the bundle, so a verifier recomputes it and
// requires the signed predicate to be equal.
type Predicate struct {
	Run     PredicateRun     `json:"run"`
	Created string           `json:"created"`
	Layers  []PredicateLayer `json:"layers"`
	// Records is the total number of records over all shards.
	Records int64            `json:"records"`
	Claims  *PredicateClaims `json:"claims,omitempty"`
}

// PredicateRun holds the manifest essentials.
type PredicateRun struct {
	RunID            string   `json:"runId"`
	Title            string   `json:"title,omitempty"`
	StartTime        string   `json:"startTime"`
	FinishTime       string   `json:"finishTime"`
	Evidence         string   `json:"evidence"`
	Incomplete       bool     `json:"incomplete,omitempty"`
	Boundary         string   `json:"boundary"`
	Client           string   `json:"client"`
	Model            string   `json:"model"`
	ModelRevision    string   `json:"modelRevision,omitempty"`
	Precision        string   `json:"precision,omitempty"`
	Engine           string   `json:"engine,omitempty"`
	EngineVersion    string   `json:"engineVersion,omitempty"`
	Accelerator      string   `json:"accelerator,omitempty"`
	AcceleratorCount *int     `json:"acceleratorCount,omitempty"`
	LoadMode         string   `json:"loadMode"`
	Points           []string `json:"points"`
	Repeats          int      `json:"repeats"`
}

// PredicateLayer lists one layer with its stored and uncompressed digests
// and sizes.
type PredicateLayer struct {
	Title              string `json:"title"`
	MediaType          string `json:"mediaType"`
	Digest             string `json:"digest"`
	Size               int64  `json:"size"`
	UncompressedDigest string `json:"uncompressedDigest"`
	UncompressedSize   int64  `json:"uncompressedSize"`
	Point              string `json:"point,omitempty"`
	Repeat             *int   `json:"repeat,omitempty"`
	Records            *int64 `json:"records,omitempty"`
}

// PredicateClaims holds the headline claims.
type PredicateClaims struct {
	Definitions string                `json:"definitions"`
	Tolerance   float64               `json:"tolerance"`
	Points      []PredicateClaimPoint `json:"points"`
}

// PredicateClaimPoint holds the claims of one point (and repeat).
type PredicateClaimPoint struct {
	Point   string           `json:"point"`
	Repeat  *int             `json:"repeat,omitempty"`
	Metrics []PredicateClaim `json:"metrics"`
}

// PredicateClaim is one claimed number.
type PredicateClaim struct {
	Metric          string  `json:"metric"`
	Value           float64 `json:"value"`
	NotRecomputable bool    `json:"notRecomputable,omitempty"`
}

func hexOf(d string) string { return strings.TrimPrefix(d, "sha256:") }

// Statement returns the statement benchseal signs for this bundle: subject
// 0 is the run manifest (named by the run id), then one subject per layer
// (named by its title); the predicate summarises the run. It is computed
// from the bundle's structure, which Open checked; the uncompressed digests
// are the ones recorded in the layer annotations.
func (b *Bundle) Statement() *Statement {
	m := b.manifest
	st := &Statement{
		Type:          StatementTypeV1,
		PredicateType: PredicateTypeRun,
		Subject: []Subject{{
			Name:   m.RunID,
			Digest: map[string]string{"sha256": hexOf(string(b.runDesc.Digest))},
		}},
	}
	p := &Predicate{
		Run: PredicateRun{
			RunID: m.RunID, Title: m.Title, StartTime: m.StartTime, FinishTime: m.FinishTime,
			Evidence: m.Evidence, Incomplete: m.Incomplete, Boundary: m.Client.Boundary, Client: m.Client.Name,
			Model: m.Model.Name, ModelRevision: m.Model.Revision, Precision: m.Model.Precision,
			Engine: m.Engine.Name, EngineVersion: m.Engine.Version,
			Accelerator: m.Hardware.Accelerator, AcceleratorCount: m.Hardware.AcceleratorCount,
			LoadMode: m.Load.Mode, Repeats: m.Load.Repeats, Points: []string{},
		},
		Created: b.created,
		Layers:  []PredicateLayer{},
	}
	for _, pt := range m.Load.Points {
		p.Run.Points = append(p.Run.Points, pt.Name)
	}
	for _, l := range b.layers {
		st.Subject = append(st.Subject, Subject{Name: l.Title, Digest: map[string]string{"sha256": hexOf(string(l.Descriptor.Digest))}})
		pl := PredicateLayer{
			Title: l.Title, MediaType: l.Descriptor.MediaType,
			Digest: string(l.Descriptor.Digest), Size: l.Descriptor.Size,
			UncompressedDigest: string(l.UncompressedDigest), UncompressedSize: l.UncompressedSize,
		}
		if l.Kind == KindRecords {
			r, n := l.Repeat, l.Records
			pl.Point, pl.Repeat, pl.Records = l.Point, &r, &n
			p.Records += l.Records
		}
		p.Layers = append(p.Layers, pl)
	}
	if c := b.claims; c != nil {
		pc := &PredicateClaims{Definitions: c.Definitions, Tolerance: c.Tolerance, Points: []PredicateClaimPoint{}}
		for _, pt := range c.Points {
			cp := PredicateClaimPoint{Point: pt.Point, Metrics: []PredicateClaim{}}
			if pt.Repeat != nil {
				r := *pt.Repeat
				cp.Repeat = &r
			}
			for _, mc := range pt.Metrics {
				cp.Metrics = append(cp.Metrics, PredicateClaim{Metric: mc.Metric, Value: mc.Value, NotRecomputable: mc.NotRecomputable != ""})
			}
			pc.Points = append(pc.Points, cp)
		}
		p.Claims = pc
	}
	st.Predicate = p
	return st
}

// MarshalStatement returns the canonical bytes of a statement (the DSSE
// payload benchseal signs).
func MarshalStatement(st *Statement) ([]byte, error) { return json.Marshal(st) }

// ParseStatement decodes a DSSE payload strictly: duplicate or case-folded
// keys, unknown fields and non-canonical forms are refused.
func ParseStatement(b []byte) (*Statement, error) {
	var st Statement
	if err := decodeStrict(b, &st); err != nil {
		return nil, err
	}
	return &st, nil
}
