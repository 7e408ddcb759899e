package report

import (
	"io"
	"strconv"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/schema"
)

func jsonBool(b bool) string { return strconv.FormatBool(b) }

func (w *jw) inputs(ins []*compare.Input) {
	w.open('[')
	for i, in := range ins {
		w.elem()
		w.open('{')
		w.ks("label", inputLabel(i))
		w.input(in)
		w.close('}')
	}
	w.close(']')
}

func (w *jw) input(in *compare.Input) {
	m := in.Manifest
	w.ks("name", in.Name)
	w.ks("run_id", m.RunID)
	w.ks("evidence", m.Evidence)
	w.kv("incomplete", jsonBool(m.Incomplete))
	w.ks("model", m.Model.Name)
	w.ks("model_revision", m.Model.Revision)
	w.ks("precision", m.Model.Precision)
	w.ks("accelerator", m.Hardware.Accelerator)
	if n, ok := m.Hardware.Accelerators(); ok {
		w.kv("accelerator_count", strconv.Itoa(n))
	} else {
		w.kv("accelerator_count", "null")
	}
	w.ks("engine", m.Engine.Name)
	w.ks("engine_version", m.Engine.Version)
	w.ks("engine_image", m.Engine.Image)
	w.ks("boundary", m.Client.Boundary)
	pc, measured := compare.PrefixCache(in)
	w.ks("prefix_cache", pc)
	if measured {
		w.kv("prefix_cache_measured", "true")
	}
	w.ks("definitions", in.Result.Definitions)
	w.key("slo")
	w.open('{')
	w.kv(schema.MetricTTFT, intOrNull(in.Result.SLO.TTFTNS))
	w.kv(schema.MetricE2E, intOrNull(in.Result.SLO.E2ENS))
	w.kv(schema.MetricTPOT, intOrNull(in.Result.SLO.TPOTNS))
	w.ks("one_token", in.Result.SLO.OneToken)
	w.ks("source", in.Result.SLO.Source)
	w.close('}')
	w.key("unknown")
	strList(w, m.Unknown)
	v := in.Verification
	w.key("verification")
	w.open('{')
	w.ks("status", v.Status)
	w.key("keys")
	strList(w, v.Keys)
	w.ks("bundle_digest", v.BundleDigest)
	w.key("warnings")
	strList(w, v.Warnings)
	w.close('}')
	if in.External() {
		w.key("external")
		w.open('[')
		for _, e := range m.External {
			w.elem()
			w.open('{')
			w.ks("kind", e.Kind)
			w.ks("version", e.Version)
			w.ks("division", e.Division)
			w.ks("category", e.Category)
			w.ks("scenario", e.Scenario)
			w.ks("status", e.Status)
			if e.AcceleratorCount > 0 {
				w.kv("accelerator_count", strconv.Itoa(e.AcceleratorCount))
			} else {
				w.kv("accelerator_count", "null")
			}
			w.ks("url", e.URL)
			w.ks("verification", e.UnverifiedLabel())
			w.key("results")
			w.stringMap(e.Results)
			w.close('}')
		}
		w.close(']')
	}
}

func (w *jw) references(refs []*compare.Input) {
	w.open('[')
	for _, in := range refs {
		w.elem()
		w.open('{')
		w.input(in)
		w.close('}')
	}
	w.close(']')
}

func (w *jw) guard(g *compare.Guard) {
	w.open('{')
	w.ks("verdict", g.Verdict)
	w.key("checks")
	w.open('[')
	for _, c := range g.Checks {
		w.elem()
		w.open('{')
		w.ks("name", c.Name)
		w.ks("status", c.Status)
		w.kv("required", jsonBool(c.Required))
		w.kv("allowed", jsonBool(c.Allowed))
		w.key("values")
		strList(w, c.Values)
		w.ks("detail", c.Detail)
		w.close('}')
	}
	w.close(']')
	w.key("refusals")
	strList(w, g.Refusals)
	w.key("allowed")
	strList(w, g.Allowed)
	w.key("limits")
	strList(w, g.Limits)
	w.close('}')
}

func (w *jw) side(s compare.Side) {
	w.open('{')
	w.ks("point", s.Point)
	w.key("values")
	valList(w, s.Values)
	w.kv("median", Number(s.Summary.Median))
	w.kv("ci_low", Number(s.Summary.CILow))
	w.kv("ci_high", Number(s.Summary.CIHigh))
	w.kv("confidence", Number(s.Summary.Confidence))
	w.kv("n", strconv.Itoa(s.Summary.N))
	w.key("warnings")
	strList(w, s.Summary.Warnings)
	if s.NullReason == "" {
		w.kv("null_reason", "null")
	} else {
		w.ks("null_reason", s.NullReason)
	}
	w.close('}')
}

// CompareJSON writes a comparison (schema "benchseal/compare/v1"; its JSON
// Schema is OutputSchema("compare")). Values are in the units the replay
// JSON uses (ns, req/s, tok/s, fractions); an undefined value is null with
// a null_reason beside it.
func CompareJSON(out io.Writer, r *compare.Result) error {
	w := &jw{}
	w.open('{')
	w.ks("schema", r.Schema)
	w.kv("alpha", shortestFloat(r.Alpha))
	w.ks("correction", r.Correction)
	w.kv("tests", strconv.Itoa(r.Tests))
	w.key("inputs")
	w.inputs(r.Inputs)
	w.key("references")
	w.references(r.References)
	w.key("guard")
	w.guard(r.Guard)
	w.key("loads")
	strList(w, r.Loads)
	w.key("unmatched")
	w.open('[')
	for _, u := range r.Unmatched {
		w.elem()
		w.open('{')
		w.ks("input", u.Input)
		w.ks("point", u.Point)
		w.ks("load", u.Load)
		w.ks("reason", u.Reason)
		w.close('}')
	}
	w.close(']')
	cur := currencyOf(r.Inputs)
	w.key("comparisons")
	w.open('[')
	for _, c := range r.Comparisons {
		w.elem()
		w.open('{')
		w.ks("load", c.Load)
		w.ks("metric", c.Metric.Path)
		w.ks("name", nameOf(c.Metric.Path, cur).Name)
		w.ks("unit", nameOf(c.Metric.Path, cur).JSONUnit)
		w.kv("higher_is_better", jsonBool(c.Metric.HigherIsBetter))
		w.ks("base", inputLabel(0))
		w.ks("other", inputLabel(c.Other))
		w.key("base_side")
		w.side(c.Base)
		w.key("other_side")
		w.side(c.Patch)
		w.kv("change", Number(c.Change))
		w.kv("tested", jsonBool(c.Tested))
		if c.Tested {
			w.kv("p", shortestFloat(c.P))
			w.kv("p_adjusted", shortestFloat(c.PAdjusted))
			w.kv("exact", jsonBool(c.Exact))
		} else {
			w.kv("p", "null")
			w.kv("p_adjusted", "null")
			w.kv("exact", "null")
		}
		w.kv("significant", jsonBool(c.Significant))
		w.kv("better", jsonBool(c.Better))
		w.ks("delta", delta(c))
		w.key("warnings")
		strList(w, c.Warnings)
		w.ks("note", c.Note)
		w.close('}')
	}
	w.close(']')
	w.key("notes")
	strList(w, r.Notes)
	w.close('}')
	return w.flush(out)
}
