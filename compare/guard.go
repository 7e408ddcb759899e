package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// Check statuses.
const (
	Pass    = "pass"
	Differs = "differs"
	Unknown = "unknown"
)

// Guard verdicts.
const (
	// Comparable: every check passed.
	Comparable = "comparable"
	// WithDifferences: no required check failed, but some checks differ
	// or are unknown; the differences are listed and travel with every
	// number.
	WithDifferences = "comparable-with-differences"
	// SameUnknowns: no stated value differs and nothing is accepted; the
	// only limits are facts unknown on every input alike (model revision
	// declared unknown on both), which are listed but are no difference.
	SameUnknowns = "comparable-same-unknowns"
	// Refused: a required check differs (or a quantized run has no
	// passing quality gate); no number is compared.
	Refused = "refused"
)

// Check names of the comparability guard, in the order they are run.
const (
	CheckWorkload      = "workload"
	CheckModel         = "model"
	CheckRevision      = "model_revision"
	CheckTokenizer     = "tokenizer"
	CheckBoundary      = "boundary"
	CheckDefinitions   = "definitions"
	CheckInputLengths  = "input_lengths"
	CheckOutputLengths = "output_lengths"
	CheckLoadMode      = "load_mode"
	CheckSLO           = "slo"
	CheckQualityGate   = "quality_gate"
	CheckPrecision     = "precision"
	CheckPrefixCache   = "prefix_cache"
	CheckEvidence      = "evidence"
	CheckClient        = "client"
	CheckHardware      = "hardware"
	CheckEngine        = "engine"
)

// RequiredChecks must pass (or be explicitly allowed) for numbers to be
// compared: without them the runs do not measure the same thing.
// A warm prefix cache serves from memory the prompt a cold one computes,
// so TTFT and prefill throughput of a warm run and a cache-off run do
// not measure the same thing.
var RequiredChecks = []string{CheckWorkload, CheckModel, CheckRevision, CheckTokenizer, CheckBoundary, CheckDefinitions,
	CheckInputLengths, CheckOutputLengths, CheckLoadMode, CheckSLO, CheckQualityGate, CheckPrefixCache}

// CheckResult is one check of the guard.
type CheckResult struct {
	Name string
	// Status is Pass, Differs or Unknown.
	Status string
	// Required says whether a difference refuses the comparison.
	Required bool
	// Allowed is set when a required difference was accepted by the
	// caller (e.g. --allow-different-workload).
	Allowed bool
	// Values holds what each input states, in input order ("" when
	// not stated).
	Values []string
	// Detail says what differs or which input does not state it.
	Detail string
}

// Guard is the comparability verdict over the measured inputs.
type Guard struct {
	// Verdict is Comparable, SameUnknowns, WithDifferences or Refused.
	Verdict string
	Checks  []CheckResult
	// Refusals say why the comparison was refused.
	Refusals []string
	// Allowed lists the required checks whose difference the caller
	// accepted.
	Allowed []string
	// Limits are the differences and unknowns every number carries.
	Limits []string
}

// Check returns the named check, or nil.
func (g *Guard) Check(name string) *CheckResult {
	for i := range g.Checks {
		if g.Checks[i].Name == name {
			return &g.Checks[i]
		}
	}
	return nil
}

type field struct {
	value string
	// declared: listed in manifest.unknown.
	declared bool
	// notShipped: a stated value whose evidence the input lacks (a
	// workload hash without the workload file).
	notShipped bool
}

func stated(m *schema.Manifest, v string, paths ...string) field {
	f := field{value: v}
	if v == "" {
		for _, p := range paths {
			if m.Declared(p) {
				f.declared = true
			}
		}
	}
	return f
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func lengths(d *schema.LengthDist) string {
	if d == nil {
		return ""
	}
	var b []string
	if d.Kind != "" {
		b = append(b, d.Kind)
	}
	if d.Spec != "" {
		b = append(b, d.Spec)
	}
	if d.Min != 0 || d.Max != 0 {
		b = append(b, "min "+strconv.Itoa(d.Min), "max "+strconv.Itoa(d.Max))
	}
	if d.Mean != 0 {
		b = append(b, "mean "+digits.Shortest(d.Mean))
	}
	if len(b) > 0 {
		// The unit is part of the lengths: 128 words and 128 tokens are
		// not one workload.
		b = append(b, lengthUnitText(d.Unit))
	}
	return strings.Join(b, ", ")
}

// lengthUnitText says what a length summary counts.
func lengthUnitText(unit string) string {
	switch unit {
	case schema.LengthTokens:
		return "in tokens of the served model"
	case schema.LengthWords:
		return "in words (not tokens)"
	}
	return "unit not stated"
}

// SLOText describes an SLO as replay applied it ("ttft ≤ 200ms, e2e ≤ 5s,
// one_token pass"), "" when no limit is set.
func SLOText(s replay.SLOSpec) string {
	var parts []string
	for _, k := range schema.SLOKeys {
		if v := s.Limit(k); v != nil {
			parts = append(parts, k+" ≤ "+schema.Duration(*v).String())
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + ", one_token " + s.OneToken
}

// GuardOptions are the differences a caller accepts.
type GuardOptions struct {
	// Allow names required checks whose difference is accepted (the
	// acceptance is part of the result).
	Allow []string
}

// RunGuard checks whether the measured inputs (external references are
// left out) measure the same thing.
func RunGuard(ins []*Input, opts GuardOptions) *Guard {
	g := &Guard{}
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Name
	}
	required := map[string]bool{}
	for _, r := range RequiredChecks {
		required[r] = true
	}
	for _, gf := range guardFields {
		g.Checks = append(g.Checks, compareField(ins, names, gf.name, required[gf.name], gf.get))
	}
	g.checkQualityGates(ins, names)
	g.Refusals = append(g.Refusals, sameRunRefusals(ins, names)...)
	allowed := map[string]bool{}
	for _, a := range opts.Allow {
		allowed[a] = true
	}
	g.decide(allowed)
	if l := deviceCountLimit(ins, names); l != "" {
		g.Limits = append(g.Limits, l)
	}
	return g
}

// sameRunRefusals names every run id two or more inputs share: one run
// (one capture, one manifest.run_id) signed again, or copied under
// another name, is not a second configuration, and ranking it against
// itself would let any difference between the copies, or the test's
// noise between identical records, name a winner. No --allow lifts it.
func sameRunRefusals(ins []*Input, names []string) []string {
	by := map[string][]string{}
	var order []string
	for i, in := range ins {
		if in.Manifest == nil || in.Manifest.RunID == "" {
			continue
		}
		id := in.Manifest.RunID
		if len(by[id]) == 0 {
			order = append(order, id)
		}
		by[id] = append(by[id], names[i])
	}
	var out []string
	for _, id := range order {
		if len(by[id]) > 1 {
			out = append(out, fmt.Sprintf("the same run (run_id %s) given %d times (%s): one run is not two configurations", id, len(by[id]), strings.Join(by[id], ", ")))
		}
	}
	return out
}

// deviceCountNotes is deviceCountLimit of ins as a list of notes (none
// when the counts agree).
func deviceCountNotes(ins []*Input) []string {
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = in.Name
	}
	if l := deviceCountLimit(ins, names); l != "" {
		return []string{l}
	}
	return nil
}

// deviceCountLimit names a difference in how many accelerators the runs'
// energy counts ("scraped accelerators differ: 2 devices (a) vs 1 device
// (b)"), "" when every run with accelerator scrapes lists as many: energy
// summed over fewer devices is not the same quantity, whichever run is
// lower.
func deviceCountLimit(ins []*Input, names []string) string {
	var parts []string
	counts := map[int]bool{}
	for i, in := range ins {
		g := in.Manifest.GPUMetrics
		if g == nil {
			continue
		}
		n := 0
		for _, e := range g.Endpoints {
			n += len(e.Devices)
		}
		counts[n] = true
		parts = append(parts, digits.Count(n, "device", "devices")+" ("+names[i]+")")
	}
	if len(counts) < 2 {
		return ""
	}
	return "scraped accelerators differ: " + strings.Join(parts, " vs ") + "; each run's energy is summed over its own devices"
}

// guardFields are the guard's checks, in output order: what each reads
// of an input.
var guardFields = []struct {
	name string
	get  func(in *Input) field
}{
	{CheckWorkload, func(in *Input) field {
		f := stated(in.Manifest, in.Manifest.Workload.SHA256, "workload.sha256")
		f.notShipped = in.WorkloadNotShipped
		return f
	}},
	{CheckModel, func(in *Input) field {
		return stated(in.Manifest, in.Manifest.Model.Name, "model.name")
	}},
	{CheckRevision, func(in *Input) field {
		return stated(in.Manifest, in.Manifest.Model.Revision, "model.revision")
	}},
	{CheckTokenizer, func(in *Input) field {
		m := in.Manifest.Model
		v := m.Tokenizer
		if v != "" && m.TokenizerRevision != "" {
			v += "@" + m.TokenizerRevision
		}
		return stated(in.Manifest, v, "model.tokenizer")
	}},
	{CheckBoundary, func(in *Input) field {
		return stated(in.Manifest, in.Manifest.Client.Boundary, "client.boundary")
	}},
	{CheckDefinitions, func(in *Input) field {
		v := in.Result.Definitions
		if tc := in.Manifest.Client.TokenCounts; tc != "" {
			v += "; output tokens: " + tc
		}
		return field{value: v}
	}},
	{CheckInputLengths, func(in *Input) field {
		return stated(in.Manifest, lengths(in.Manifest.Workload.InputTokens), "workload.input_tokens")
	}},
	{CheckOutputLengths, func(in *Input) field {
		v := lengths(in.Manifest.Workload.OutputTokens)
		if mt := in.Manifest.Decoding.MaxTokens; mt > 0 && v != "" {
			v += "; max_tokens " + strconv.Itoa(mt)
		}
		return stated(in.Manifest, v, "workload.output_tokens")
	}},
	{CheckLoadMode, func(in *Input) field {
		l := in.Manifest.Load
		v := l.Mode
		if l.Mode == schema.ModeRate {
			var arr []string
			seen := map[string]bool{}
			for _, p := range l.Points {
				a := p.Arrival
				if a == "" {
					a = "arrival not stated"
				}
				if !seen[a] {
					seen[a] = true
					arr = append(arr, a)
				}
			}
			if len(arr) > 0 {
				v += " (" + strings.Join(arr, ", ") + ")"
			}
		}
		return stated(in.Manifest, v, "load.mode")
	}},
	{CheckSLO, func(in *Input) field {
		s := SLOText(in.Result.SLO)
		if s == "" {
			s = "none"
		}
		return field{value: s}
	}},
	{CheckQualityGate, func(in *Input) field {
		m := in.Manifest
		if !schema.IsQuantized(m.Model.Precision) {
			return field{value: "not needed"}
		}
		if m.QualityGate == nil {
			return field{value: "MISSING"}
		}
		if !m.QualityGate.Passed {
			return field{value: "FAILED"}
		}
		return field{value: "not needed"}
	}},
	{CheckPrecision, func(in *Input) field {
		return stated(in.Manifest, in.Manifest.Model.Precision, "model.precision")
	}},
	{CheckPrefixCache, func(in *Input) field {
		v, measured := PrefixCache(in)
		if measured {
			return field{value: v}
		}
		return stated(in.Manifest, v, "engine.prefix_cache")
	}},
	{CheckEvidence, func(in *Input) field { return field{value: in.Manifest.Evidence} }},
	{CheckClient, func(in *Input) field {
		c := in.Manifest.Client
		v := joinNonEmpty(" ", c.Name, c.Version)
		// The build, when stated, so two runs of one version built from
		// different sources (or one modified tree) differ here by name.
		if c.Build != nil && c.Build.ID() != "" {
			v += " [build " + c.Build.ID() + "]"
		}
		if s := in.Manifest.Source; s != nil {
			v += " (imported from " + joinNonEmpty(" ", s.Tool, s.Version)
			if s.Importer != nil && s.Importer.ID() != "" {
				v += " by benchseal [build " + s.Importer.ID() + "]"
			}
			v += ")"
		}
		return field{value: v}
	}},
	{CheckHardware, func(in *Input) field {
		return stated(in.Manifest, HardwareText(in.Manifest), "hardware.accelerator")
	}},
	{CheckEngine, func(in *Input) field {
		e := in.Manifest.Engine
		return stated(in.Manifest, joinNonEmpty(" ", e.Name, e.Version), "engine.name")
	}},
}

// compareField compares one field across the inputs: it differs when two
// stated values differ, and is unknown when some input does not state it
// (or declares it unknown, or states a hash of what it did not ship).
func compareField(ins []*Input, names []string, name string, required bool, get func(in *Input) field) CheckResult {
	c := CheckResult{Name: name, Required: required}
	var missing, declared, notShipped []string
	distinct := map[string]bool{}
	for i, in := range ins {
		f := get(in)
		c.Values = append(c.Values, f.value)
		switch {
		case f.value == "" && f.declared:
			declared = append(declared, names[i])
		case f.value == "":
			missing = append(missing, names[i])
		default:
			distinct[f.value] = true
			if f.notShipped {
				notShipped = append(notShipped, names[i])
			}
		}
	}
	switch {
	case len(distinct) > 1:
		c.Status = Differs
		var parts []string
		for i, v := range c.Values {
			parts = append(parts, names[i]+": "+orNotStated(v))
		}
		c.Detail = strings.Join(parts, "; ")
	case len(missing)+len(declared)+len(notShipped) > 0:
		c.Status = Unknown
		var parts []string
		if len(notShipped) > 0 {
			parts = append(parts, "declared, not shipped on "+strings.Join(notShipped, ", ")+" (the hash is the publisher's word)")
		}
		if len(declared) > 0 {
			parts = append(parts, "declared unknown on "+strings.Join(declared, ", "))
		}
		if len(missing) > 0 {
			parts = append(parts, "not stated on "+strings.Join(missing, ", "))
		}
		c.Detail = strings.Join(parts, "; ")
	default:
		c.Status = Pass
	}
	return c
}

// checkQualityGates makes the quality gate a condition on each input,
// not a difference between them: any quantized run without a passing
// gate refuses.
func (g *Guard) checkQualityGates(ins []*Input, names []string) {
	qg := g.Check(CheckQualityGate)
	qg.Status, qg.Detail = Pass, ""
	var bad []string
	for i, in := range ins {
		m := in.Manifest
		v := qg.Values[i]
		switch v {
		case "MISSING":
			bad = append(bad, fmt.Sprintf("%s is quantized (%s) and has no quality gate", names[i], m.Model.Precision))
		case "FAILED":
			bad = append(bad, fmt.Sprintf("%s is quantized (%s) and its quality gate failed", names[i], m.Model.Precision))
		}
		if schema.IsQuantized(m.Model.Precision) && m.QualityGate != nil {
			qg.Values[i] = fmt.Sprintf("%s %s %s: %s (threshold %s)", m.QualityGate.Check, m.QualityGate.Dataset, m.QualityGate.Metric, digits.Shortest(m.QualityGate.Result), digits.Shortest(m.QualityGate.Threshold))
			if !m.QualityGate.Passed {
				qg.Values[i] = "FAILED " + qg.Values[i]
			}
		}
	}
	if len(bad) > 0 {
		qg.Status, qg.Detail = Differs, strings.Join(bad, "; ")
	}
}

// decide sorts the checks into refusals, allowed differences and limits,
// and gives the verdict.
func (g *Guard) decide(allowed map[string]bool) {
	for i := range g.Checks {
		c := &g.Checks[i]
		switch {
		case c.Status == Differs && c.Required && allowed[c.Name] && c.Name != CheckQualityGate:
			c.Allowed = true
			g.Allowed = append(g.Allowed, c.Name)
			g.Limits = append(g.Limits, c.Name+" differs (allowed): "+c.Detail)
		case c.Status == Differs && c.Required:
			g.Refusals = append(g.Refusals, refusal(c))
		case c.Status == Differs:
			g.Limits = append(g.Limits, c.Name+" differs: "+c.Detail)
		case c.Status == Unknown:
			g.Limits = append(g.Limits, c.Name+" unknown: "+c.Detail)
		}
	}
	switch {
	case len(g.Refusals) > 0:
		g.Verdict = Refused
	case len(g.Limits) == 0:
		g.Verdict = Comparable
	case len(g.UnknownOnAll()) == len(g.Limits):
		g.Verdict = SameUnknowns
	default:
		g.Verdict = WithDifferences
	}
}

// UnknownOnAll names the checks that no input states (not stated or
// declared unknown on every one), in check order.
func (g *Guard) UnknownOnAll() []string {
	var out []string
	for _, c := range g.Checks {
		if c.Status != Unknown {
			continue
		}
		all := true
		for _, v := range c.Values {
			all = all && v == ""
		}
		if all {
			out = append(out, c.Name)
		}
	}
	return out
}

func refusal(c *CheckResult) string {
	switch c.Name {
	case CheckWorkload:
		return "workload hashes differ (" + c.Detail + "): the runs sent different requests; pass --allow-different-workload to compare anyway"
	case CheckQualityGate:
		return c.Detail + ": a quantized variant is comparable only with a passing quality gate"
	case CheckSLO:
		return "the SLOs differ (" + c.Detail + "): goodput is only comparable under one SLO; pass --slo"
	case CheckPrefixCache:
		return "the prefix-cache states differ (" + c.Detail + "): a warm cache serves prompt tokens a cold or disabled one computes, so TTFT is not comparable; pass --allow-difference prefix_cache to compare anyway"
	}
	return c.Name + " differs (" + c.Detail + "); pass --allow-difference " + c.Name + " to compare anyway"
}

func orNotStated(v string) string {
	if v == "" {
		return "not stated"
	}
	return v
}

// HardwareText is "8 × NVIDIA H200" as the manifest states it; an unknown
// count is "unknown count × NVIDIA H200", never "0 ×"; "" when no
// accelerator is stated; a simulated server is Manifest.SimulatedHardware.
func HardwareText(m *schema.Manifest) string {
	h := m.Hardware
	if h.Accelerator == "" {
		return ""
	}
	if h.Accelerator == schema.HardwareSimulated {
		// Stated or not, a count of simulated accelerators is the
		// scrapes' (capture --sim-gpus states it): never "2 × simulated
		// server (no accelerator)".
		return m.SimulatedHardware()
	}
	c, stated := h.Accelerators()
	n := "unknown count"
	if stated {
		n = strconv.Itoa(c)
	}
	return n + " × " + h.Accelerator
}

// PrefixCache is the run's prefix-cache state as compare reads it, and
// whether it is measured: where the records carry the engine's own
// cached-token reports (replay's PointResult.Cache), the state they show
// (warm, empty, or "warm at N of M points × repeats" when it changed
// during the run; disabled when the publisher declares it and nothing
// was served from a cache); else the publisher's engine.prefix_cache
// ("" when not stated).
func PrefixCache(in *Input) (state string, measured bool) {
	declared := in.Manifest.Engine.PrefixCache
	if in.Result == nil {
		return declared, false
	}
	var n, warm int
	var cached int64
	for _, p := range in.Result.Results {
		if p.Cache == nil {
			continue
		}
		n++
		cached += p.Cache.CachedTokens
		if p.Cache.MeasuredWarm() {
			warm++
		}
	}
	switch {
	case n == 0:
		return declared, false
	case declared == schema.CacheDisabled && cached == 0:
		return schema.CacheDisabled, true
	case warm == n:
		return schema.CacheWarm, true
	case warm == 0:
		return schema.CacheEmpty, true
	}
	return fmt.Sprintf("warm at %d of %d points × repeats", warm, n), true
}
