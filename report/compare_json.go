package report

import (
	"io"
	"strconv"

	"github.com/benchseal/benchseal/compare"
)

func jsonBool(b bool) num { return num(strconv.FormatBool(b)) }

// inputJSON is one input run of a comparison or decision; Label is
// empty (and left out) for a reference.
type inputJSON struct {
	Label            text            `json:"label,omitempty"`
	Name             text            `json:"name"`
	RunID            text            `json:"run_id"`
	Evidence         text            `json:"evidence"`
	Incomplete       bool            `json:"incomplete"`
	Model            text            `json:"model"`
	ModelRevision    text            `json:"model_revision"`
	Precision        text            `json:"precision"`
	Accelerator      text            `json:"accelerator"`
	AcceleratorCount num             `json:"accelerator_count"`
	Engine           text            `json:"engine"`
	EngineVersion    text            `json:"engine_version"`
	EngineImage      text            `json:"engine_image"`
	Boundary         text            `json:"boundary"`
	PrefixCache      text            `json:"prefix_cache"`
	PrefixMeasured   bool            `json:"prefix_cache_measured,omitempty"`
	Definitions      text            `json:"definitions"`
	SLO              sloJSON         `json:"slo"`
	Unknown          []text          `json:"unknown"`
	Verification     verifyJSON      `json:"verification"`
	External         *[]externalJSON `json:"external,omitempty"`
}

type verifyJSON struct {
	Status       text   `json:"status"`
	Keys         []text `json:"keys"`
	BundleDigest text   `json:"bundle_digest"`
	Warnings     []text `json:"warnings"`
}

// externalJSON is a result published by another tool (MLPerf), as it
// was published.
type externalJSON struct {
	Kind             text   `json:"kind"`
	Version          text   `json:"version"`
	Division         text   `json:"division"`
	Category         text   `json:"category"`
	Scenario         text   `json:"scenario"`
	Status           text   `json:"status"`
	AcceleratorCount num    `json:"accelerator_count"`
	URL              text   `json:"url"`
	Verification     text   `json:"verification"`
	Results          object `json:"results"`
}

// newInputJSON is in under label ("" for a reference).
func newInputJSON(label string, in *compare.Input) inputJSON {
	m := in.Manifest
	j := inputJSON{Label: text(label), Name: text(in.Name), RunID: text(m.RunID), Evidence: text(m.Evidence), Incomplete: m.Incomplete,
		Model: text(m.Model.Name), ModelRevision: text(m.Model.Revision), Precision: text(m.Model.Precision), Accelerator: text(m.Hardware.Accelerator),
		AcceleratorCount: "null", Engine: text(m.Engine.Name), EngineVersion: text(m.Engine.Version), EngineImage: text(m.Engine.Image),
		Boundary: text(m.Client.Boundary), Definitions: text(in.Result.Definitions), SLO: newSLOJSON(in.Result.SLO), Unknown: texts(m.Unknown),
		Verification: verifyJSON{text(in.Verification.Status), texts(in.Verification.Keys), text(in.Verification.BundleDigest), texts(in.Verification.Warnings)}}
	if n, ok := m.Hardware.Accelerators(); ok {
		j.AcceleratorCount = num(strconv.Itoa(n))
	}
	pc, measured := compare.PrefixCache(in)
	j.PrefixCache, j.PrefixMeasured = text(pc), measured
	if in.External() {
		ext := make([]externalJSON, 0, len(m.External))
		for _, e := range m.External {
			x := externalJSON{text(e.Kind), text(e.Version), text(e.Division), text(e.Category), text(e.Scenario), text(e.Status),
				"null", text(e.URL), text(e.UnverifiedLabel()), sortedObject(e.Results)}
			if e.AcceleratorCount > 0 {
				x.AcceleratorCount = num(strconv.Itoa(e.AcceleratorCount))
			}
			ext = append(ext, x)
		}
		j.External = &ext
	}
	return j
}

// inputsJSON is the inputs under their labels.
func inputsJSON(ins []*compare.Input) []inputJSON {
	out := make([]inputJSON, 0, len(ins))
	for i, in := range ins {
		out = append(out, newInputJSON(inputLabel(i), in))
	}
	return out
}

// referencesJSON is the references, without labels.
func referencesJSON(refs []*compare.Input) []inputJSON {
	out := make([]inputJSON, 0, len(refs))
	for _, in := range refs {
		out = append(out, newInputJSON("", in))
	}
	return out
}

// guardJSON is the comparability guard.
type guardJSON struct {
	Verdict  text        `json:"verdict"`
	Checks   []checkJSON `json:"checks"`
	Refusals []text      `json:"refusals"`
	Allowed  []text      `json:"allowed"`
	Limits   []text      `json:"limits"`
}

type checkJSON struct {
	Name     text   `json:"name"`
	Status   text   `json:"status"`
	Required bool   `json:"required"`
	Allowed  bool   `json:"allowed"`
	Values   []text `json:"values"`
	Detail   text   `json:"detail"`
}

func newGuardJSON(g *compare.Guard) guardJSON {
	j := guardJSON{Verdict: text(g.Verdict), Checks: make([]checkJSON, 0, len(g.Checks)), Refusals: texts(g.Refusals), Allowed: texts(g.Allowed), Limits: texts(g.Limits)}
	for _, c := range g.Checks {
		j.Checks = append(j.Checks, checkJSON{text(c.Name), text(c.Status), c.Required, c.Allowed, texts(c.Values), text(c.Detail)})
	}
	return j
}

// sideJSON is one side of a comparison: its values and their summary.
type sideJSON struct {
	Point  text  `json:"point"`
	Values []num `json:"values"`
	statJSON
	NullReason *text `json:"null_reason"`
}

func newSideJSON(s compare.Side) sideJSON {
	j := sideJSON{Point: text(s.Point), Values: nums(s.Values), statJSON: newStatJSON(s.Summary)}
	if s.NullReason != "" {
		why := text(s.NullReason)
		j.NullReason = &why
	}
	return j
}

// compareDoc is a comparison (schema "benchseal/compare/v1").
type compareDoc struct {
	Schema      text             `json:"schema"`
	Alpha       num              `json:"alpha"`
	Correction  text             `json:"correction"`
	Tests       num              `json:"tests"`
	Inputs      []inputJSON      `json:"inputs"`
	References  []inputJSON      `json:"references"`
	Guard       guardJSON        `json:"guard"`
	Loads       []text           `json:"loads"`
	Unmatched   []unmatchedJSON  `json:"unmatched"`
	Comparisons []comparisonJSON `json:"comparisons"`
	Notes       []text           `json:"notes"`
}

type unmatchedJSON struct {
	Input  text `json:"input"`
	Point  text `json:"point"`
	Load   text `json:"load"`
	Reason text `json:"reason"`
}

// comparisonJSON is one metric at one load, base against other; p,
// p_adjusted and exact are null when the pair was not tested.
type comparisonJSON struct {
	Load           text     `json:"load"`
	Metric         text     `json:"metric"`
	Name           text     `json:"name"`
	Unit           text     `json:"unit"`
	HigherIsBetter bool     `json:"higher_is_better"`
	Base           text     `json:"base"`
	Other          text     `json:"other"`
	BaseSide       sideJSON `json:"base_side"`
	OtherSide      sideJSON `json:"other_side"`
	Change         num      `json:"change"`
	Tested         bool     `json:"tested"`
	P              num      `json:"p"`
	PAdjusted      num      `json:"p_adjusted"`
	Exact          num      `json:"exact"`
	Significant    bool     `json:"significant"`
	Better         bool     `json:"better"`
	Delta          text     `json:"delta"`
	Warnings       []text   `json:"warnings"`
	Note           text     `json:"note"`
}

func newComparisonJSON(c compare.Comparison, currency string) comparisonJSON {
	name := nameOf(c.Metric.Path, currency)
	j := comparisonJSON{Load: text(c.Load), Metric: text(c.Metric.Path), Name: text(name.Name), Unit: text(name.JSONUnit), HigherIsBetter: c.Metric.HigherIsBetter,
		Base: text(inputLabel(0)), Other: text(inputLabel(c.Other)), BaseSide: newSideJSON(c.Base), OtherSide: newSideJSON(c.Patch), Change: num(Number(c.Change)),
		Tested: c.Tested, P: "null", PAdjusted: "null", Exact: "null", Significant: c.Significant, Better: c.Better, Delta: text(delta(c)), Warnings: texts(c.Warnings), Note: text(c.Note)}
	if c.Tested {
		j.P, j.PAdjusted, j.Exact = num(shortestFloat(c.P)), num(shortestFloat(c.PAdjusted)), jsonBool(c.Exact)
	}
	return j
}

// CompareJSON writes a comparison (schema "benchseal/compare/v1"; its JSON
// Schema is OutputSchema("compare")). Values are in the units the replay
// JSON uses (ns, req/s, tok/s, fractions); an undefined value is null with
// a null_reason beside it.
func CompareJSON(out io.Writer, r *compare.Result) error {
	doc := compareDoc{Schema: text(r.Schema), Alpha: num(shortestFloat(r.Alpha)), Correction: text(r.Correction), Tests: num(strconv.Itoa(r.Tests)),
		Inputs: inputsJSON(r.Inputs), References: referencesJSON(r.References), Guard: newGuardJSON(r.Guard), Loads: texts(r.Loads),
		Unmatched: make([]unmatchedJSON, 0, len(r.Unmatched)), Comparisons: make([]comparisonJSON, 0, len(r.Comparisons)), Notes: texts(r.Notes)}
	for _, u := range r.Unmatched {
		doc.Unmatched = append(doc.Unmatched, unmatchedJSON{text(u.Input), text(u.Point), text(u.Load), text(u.Reason)})
	}
	cur := currencyOf(r.Inputs)
	for _, c := range r.Comparisons {
		doc.Comparisons = append(doc.Comparisons, newComparisonJSON(c, cur))
	}
	return writeJSON(out, doc, nil)
}
