package schema

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
)

// MustState lists the manifest fields, as dotted paths, that a publisher
// must either set or name in Manifest.Unknown. Unknown must be said, never
// silently empty.
var MustState = []string{
	"client.version",
	"client.location",
	"client.token_counts",
	"hardware.accelerator",
	"hardware.accelerator_count",
	"hardware.driver",
	"hardware.runtime",
	"engine.name",
	"engine.version",
	"engine.parallelism.tensor",
	"engine.prefix_cache",
	"model.revision",
	"model.precision",
	"decoding.max_tokens",
	"workload.sha256",
	"slo." + SLOTTFT,
	"slo." + SLOE2E,
}

// unquantizedPrecisions are the precisions, lowercased, that need no
// quality gate: the floating-point formats a model is trained and served
// in unchanged. Every other name needs one, whatever it is called
// (fp8, int4, awq, gptq, compressed-tensors, float8_e4m3fn, bitsandbytes,
// auto, ...): a list of quantized names could never be complete, and a
// new name must not escape the gate.
var unquantizedPrecisions = []string{"fp32", "float32", "fp16", "float16", "half", "bf16", "bfloat16"}

// IsQuantized reports whether a model precision needs a quality gate: any
// stated precision but the unquantized ones (fp32, fp16, bf16 and their
// long names, any case). An empty precision (declared unknown) is not
// judged here; compare treats an unknown precision as unknown.
func IsQuantized(precision string) bool {
	p := strings.ToLower(strings.TrimSpace(precision))
	return p != "" && !slices.Contains(unquantizedPrecisions, p)
}

var (
	imageDigestRE = regexp.MustCompile(`^[^@\s]+@sha256:[0-9a-f]{64}$`)
	sha256RE      = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// manifestFields maps every manifest field path (structs walked through,
// slices and maps as leaves) to its index path in the Go struct.
var manifestFields = sync.OnceValue(func() map[string][]int {
	out := map[string][]int{}
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			path := prefix + name
			idx := append(slices.Clone(index), i)
			out[path] = idx
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(ft, path+".", idx)
			}
		}
	}
	walk(reflect.TypeFor[Manifest](), "", nil)
	delete(out, "schema")
	delete(out, "unknown")
	return out
})

// KnownManifestFields returns every field path that Manifest.Unknown may
// name, sorted.
func KnownManifestFields() []string {
	var out []string
	for k := range manifestFields() {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// manifestFieldSet reports whether the field at path is set (non-zero).
func manifestFieldSet(m *Manifest, path string) bool {
	idx, ok := manifestFields()[path]
	if !ok {
		return false
	}
	v := reflect.ValueOf(m).Elem()
	for _, i := range idx {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return false
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	return !v.IsZero()
}

// MissingMustState returns the must-state fields of m that are neither set
// nor declared unknown. Importers use it to fill Manifest.Unknown.
func MissingMustState(m *Manifest) []string {
	var out []string
	for _, p := range MustState {
		if !manifestFieldSet(m, p) && !slices.Contains(m.Unknown, p) {
			out = append(out, p)
		}
	}
	return out
}

type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(field, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	ps.list = append(ps.list, Problem{File: ps.file, Field: field, Message: msg})
}

func oneOf(v string, allowed ...string) bool { return slices.Contains(allowed, v) }

func quoteList(vs ...string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// simulatedCommand tells whether a capture command line turned --simulate
// on ("--simulate", or "--simulate=" with a true value as capture records
// it).
func simulatedCommand(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--simulate" {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--simulate="); ok {
			if b, err := strconv.ParseBool(v); err == nil && b {
				return true
			}
		}
	}
	return false
}

// manifestDigest is the syntax of an OCI sha256 digest.
var manifestDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ValidateManifest runs the checks of a manifest that its JSON Schema
// cannot express (and repeats the enumerations, so that a manifest built in
// memory by an importer gets the same checks). file names the manifest in
// the problems.
func ValidateManifest(m *Manifest, file string) []Problem {
	ps := &problems{file: file}
	for _, rule := range manifestRules {
		rule(ps, m)
	}
	return ps.list
}

// manifestRules are ValidateManifest's checks, in the order their
// problems are listed.
var manifestRules = []func(ps *problems, m *Manifest){
	validateRunIdentity,
	validateClient,
	validateHardwareAndModel,
	validateDecoding,
	validateWorkload,
	func(ps *problems, m *Manifest) { validateLoad(ps, &m.Load, m.ExternalReference()) },
	validateSharding,
	validateRateSeed,
	func(ps *problems, m *Manifest) { validateSLO(ps, "slo", &m.SLO) },
	validateCostAndSources,
	validateSections,
	validateUnknown,
}

// validateRunIdentity checks the schema, the run id, its times and its
// evidence.
func validateRunIdentity(ps *problems, m *Manifest) {
	if m.Schema != ManifestSchemaV1 {
		ps.add("schema", "must be %q", ManifestSchemaV1)
	}
	if m.RunID == "" {
		ps.add("run_id", "must not be empty")
	}
	// The run's times may be declared unknown (empty, or epoch 0, and
	// listed in unknown) when the source does not say when it took place.
	parseTime := func(field, v string) (time.Time, bool) {
		if v == "" && m.Declared(field) {
			return time.Time{}, false
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			ps.add(field, "must be an RFC 3339 time (or empty and listed in unknown), got %q", v)
			return time.Time{}, false
		}
		return t, true
	}
	start, okS := parseTime("start_time", m.StartTime)
	finish, okF := parseTime("finish_time", m.FinishTime)
	if okS && okF && finish.Before(start) {
		ps.add("finish_time", "is before start_time")
	}
	switch {
	case m.EpochUnixNS == 0 && m.Declared("epoch_unix_ns"):
	case m.EpochUnixNS <= 0:
		ps.add("epoch_unix_ns", "must be a positive Unix time in ns (or 0 and listed in unknown)")
	case okF && m.EpochUnixNS > finish.UnixNano():
		ps.add("epoch_unix_ns", "is after finish_time")
	}
	if !oneOf(m.Evidence, EvidenceSelfRun, EvidenceVendorRun, EvidenceIndependent, EvidenceImported, EvidenceSynthetic) {
		ps.add("evidence", "must be one of %s, got %q", quoteList(EvidenceSelfRun, EvidenceVendorRun, EvidenceIndependent, EvidenceImported, EvidenceSynthetic), m.Evidence)
	}
	if m.Evidence == EvidenceImported && m.Source == nil {
		ps.add("source", "is required when evidence is %q", EvidenceImported)
	}
	if m.Evidence != EvidenceSynthetic && m.Client.Name == CaptureClientName && simulatedCommand(m.Client.CommandLine) {
		ps.add("evidence", "is %q but client.command_line has --simulate: a run against benchseal's simulator is %q", m.Evidence, EvidenceSynthetic)
	}
	if m.Evidence != EvidenceSynthetic {
		for _, id := range SimulatorIdentity(m) {
			ps.add("evidence", "is %q but %s: a run against benchseal's simulator is %q", m.Evidence, id, EvidenceSynthetic)
		}
	}
	if m.IncompleteReason != "" && !m.Incomplete {
		ps.add("incomplete_reason", "is set but incomplete is false")
	}
}

// validateClient checks the load client and its measurement boundary.
func validateClient(ps *problems, m *Manifest) {
	if m.Client.Name == "" {
		ps.add("client.name", "must not be empty")
	}
	if !oneOf(m.Client.Boundary, BoundaryClientStreaming, BoundaryServerTimer, BoundaryNonStreaming) {
		ps.add("client.boundary", "must be one of %s, got %q", quoteList(BoundaryClientStreaming, BoundaryServerTimer, BoundaryNonStreaming), m.Client.Boundary)
	}
	// The boundary says where the times were taken; it must agree with
	// how the requests were made (a non-streaming answer arrives whole,
	// with no first-token time to measure).
	switch {
	case m.Client.Boundary == BoundaryClientStreaming && !m.Decoding.Streaming:
		ps.add("client.boundary", "is %q but decoding.streaming is false: a non-streaming response has no chunk times (the boundary is %q)", BoundaryClientStreaming, BoundaryNonStreaming)
	case m.Client.Boundary == BoundaryNonStreaming && m.Decoding.Streaming:
		ps.add("client.boundary", "is %q but decoding.streaming is true", BoundaryNonStreaming)
	}
	if tc := m.Client.TokenCounts; tc != "" && !oneOf(tc, "server-usage", "client-tokenizer", "chunk-count-estimate", "tool-reported") {
		ps.add("client.token_counts", "must be one of %s, got %q", quoteList("server-usage", "client-tokenizer", "chunk-count-estimate", "tool-reported"), tc)
	} else if m.Load.Generator == GeneratorBenchsealV1 && !oneOf(tc, "server-usage", "chunk-count-estimate") {
		// The load client writes only these two, and the record checks
		// bound output_tokens by max_tokens and by the chunks under
		// them: another label would lift those bounds.
		ps.add("client.token_counts", "must be %s under load.generator %q (the only labels its client writes), got %q", quoteList("server-usage", "chunk-count-estimate"), GeneratorBenchsealV1, tc)
	}
}

// validateHardwareAndModel checks the hardware, engine, model and quality
// gate.
func validateHardwareAndModel(ps *problems, m *Manifest) {
	if n, ok := m.Hardware.Accelerators(); ok && n < 0 {
		ps.add("hardware.accelerator_count", "must not be negative")
	}
	if m.Engine.Image != "" && !imageDigestRE.MatchString(m.Engine.Image) {
		ps.add("engine.image", "must be pinned by digest as name@sha256:<64 lowercase hex>, got %q", m.Engine.Image)
	}
	if pc := m.Engine.PrefixCache; pc != "" && !oneOf(pc, CacheWarm, CacheEmpty, CacheDisabled) {
		ps.add("engine.prefix_cache", "must be one of %s, got %q", quoteList(CacheWarm, CacheEmpty, CacheDisabled), pc)
	}
	if m.Model.Name == "" {
		ps.add("model.name", "must not be empty")
	}
	if IsQuantized(m.Model.Precision) && m.QualityGate == nil {
		ps.add("quality_gate", "is required for the quantized precision %q", m.Model.Precision)
	}
	if g := m.QualityGate; g != nil {
		if g.Check == "" || g.Dataset == "" || g.Metric == "" {
			ps.add("quality_gate", "must name its check, dataset and metric")
		}
		if !finite(g.Threshold) || !finite(g.Result) {
			ps.add("quality_gate", "threshold and result must be finite numbers")
		}
	}
}

// validateDecoding checks the decoding settings.
func validateDecoding(ps *problems, m *Manifest) {
	if t := m.Decoding.Temperature; t != nil && (!finite(*t) || *t < 0) {
		ps.add("decoding.temperature", "must be a finite number ≥ 0")
	}
	if p := m.Decoding.TopP; p != nil && (!finite(*p) || *p <= 0 || *p > 1) {
		ps.add("decoding.top_p", "must be in (0, 1]")
	}
	if m.Decoding.MaxTokens < 0 || m.Decoding.MinTokens < 0 {
		ps.add("decoding.max_tokens", "token limits must not be negative")
	} else if m.Decoding.MaxTokens > 0 && m.Decoding.MinTokens > m.Decoding.MaxTokens {
		ps.add("decoding.min_tokens", "is greater than max_tokens")
	}
}

// validateWorkload checks the workload's hash, size and length ranges.
func validateWorkload(ps *problems, m *Manifest) {
	if s := m.Workload.SHA256; s != "" && !sha256RE.MatchString(s) {
		ps.add("workload.sha256", "must be 64 lowercase hex digits, got %q", s)
	}
	if m.Workload.Items < 0 {
		ps.add("workload.items", "must not be negative")
	}
	for i, d := range []*LengthDist{m.Workload.InputTokens, m.Workload.OutputTokens} {
		if d != nil && d.Max > 0 && d.Min > d.Max {
			ps.add([]string{"workload.input_tokens", "workload.output_tokens"}[i], "min is greater than max")
		}
	}
}

// validateRateSeed: a rate schedule benchseal's generator made is
// regenerated from its seed, which must be stated.
func validateRateSeed(ps *problems, m *Manifest) {
	if m.Load.Generator == GeneratorBenchsealV1 && m.Load.Mode == ModeRate && m.Client.Seed == nil {
		ps.add("client.seed", "must be set: load.generator %q regenerates the rate schedule from it", GeneratorBenchsealV1)
	}
}

// validateCostAndSources checks the cost, the external references and the
// import source.
func validateCostAndSources(ps *problems, m *Manifest) {
	if r := m.Reproduces; r != nil && !manifestDigest.MatchString(r.RunManifest) {
		ps.add("reproduces.run_manifest", "must be a run-manifest digest sha256:<64 lowercase hex>, got %q", r.RunManifest)
	}
	if c := m.Cost; c != nil {
		if c.EnergyJoules < 0 || !finite(c.EnergyJoules) {
			ps.add("cost.energy_joules", "must be a finite number ≥ 0")
		}
	}
	for i, e := range m.External {
		if e.Kind == "" {
			ps.add(fmt.Sprintf("external[%d].kind", i), "must not be empty")
		}
	}
	if s := m.Source; s != nil && s.Tool == "" {
		ps.add("source.tool", "must not be empty")
	}
}

// validateUnknown: unknown must be said, and only of fields that exist
// and are not set.
func validateUnknown(ps *problems, m *Manifest) {
	known := manifestFields()
	seen := map[string]bool{}
	for i, u := range m.Unknown {
		f := fmt.Sprintf("unknown[%d]", i)
		switch {
		case seen[u]:
			ps.add(f, "%q is listed twice", u)
		case known[u] == nil:
			ps.add(f, "%q is not a manifest field", u)
		case manifestFieldSet(m, u):
			ps.add(f, "%q is declared unknown but is set", u)
		}
		seen[u] = true
	}
	for _, p := range MissingMustState(m) {
		ps.add(p, "must be stated: set it or list %q in unknown", p)
	}
}

// validateSections checks the manifest's sections that have rules of
// their own: the replayed trace, provenance, server metrics and state,
// accelerator metrics, the load against the command line.
func validateSections(ps *problems, m *Manifest) {
	validateTrace(ps, m)
	validateSessions(ps, m)
	validateProvenance(ps, m)
	validateServerMetrics(ps, m)
	validateGPUMetrics(ps, m)
	validateSimulatedHardware(ps, m)
	validateCommandLoad(ps, m)
	validateServerState(ps, m)
}

// validateLoad checks the load plan; an external-evidence reference
// (external) may declare no point.
func validateLoad(ps *problems, l *Load, external bool) {
	if !oneOf(l.Mode, ModeConcurrency, ModeRate) {
		ps.add("load.mode", "must be %q or %q, got %q", ModeConcurrency, ModeRate, l.Mode)
	}
	if len(l.Points) == 0 && !external {
		ps.add("load.points", "must declare at least one point (only an imported external-evidence reference may declare none)")
	}
	names := map[string]bool{}
	for i, p := range l.Points {
		f := fmt.Sprintf("load.points[%d]", i)
		if p.Name == "" {
			ps.add(f+".name", "must not be empty")
		} else if names[p.Name] {
			ps.add(f+".name", "%q is declared twice", p.Name)
		}
		names[p.Name] = true
		switch l.Mode {
		case ModeConcurrency:
			if p.Concurrency < 1 {
				ps.add(f+".concurrency", "must be ≥ 1 in concurrency mode")
			}
			if p.Rate != 0 {
				ps.add(f+".rate", "must not be set in concurrency mode")
			}
		case ModeRate:
			if !finite(p.Rate) || p.Rate <= 0 {
				ps.add(f+".rate", "must be a finite number > 0 in rate mode")
			}
			if !oneOf(p.Arrival, ArrivalConstant, ArrivalPoisson, ArrivalGamma, ArrivalTrace) {
				ps.add(f+".arrival", "must be one of %s in rate mode, got %q", quoteList(ArrivalConstant, ArrivalPoisson, ArrivalGamma, ArrivalTrace), p.Arrival)
			}
			if p.Concurrency < 0 {
				ps.add(f+".concurrency", "must not be negative")
			}
		}
		if !finite(p.Burstiness) || p.Burstiness < 0 {
			ps.add(f+".burstiness", "must be a finite number ≥ 0")
		} else if p.Arrival == ArrivalGamma && p.Burstiness == 0 {
			ps.add(f+".burstiness", "must be > 0 for gamma arrivals")
		}
		if p.Requests < 0 || p.InputTokens < 0 || p.OutputTokens < 0 {
			ps.add(f, "requests and token counts must not be negative")
		}
	}
	if l.Repeats < 1 {
		ps.add("load.repeats", "must be ≥ 1")
	}
	if l.Warmup.Requests < 0 {
		ps.add("load.warmup.requests", "must not be negative")
	}
	if l.MaxOutstanding < 0 {
		ps.add("load.max_outstanding", "must not be negative")
	}
	loadLimitProblems(ps, l)
	if l.Generator != "" && l.Generator != GeneratorBenchsealV1 {
		ps.add("load.generator", "must be %q or absent, got %q", GeneratorBenchsealV1, l.Generator)
	}
}

// ValidateSLO returns the problems of an SLO on its own (fields named
// "slo.…"), the rules ValidateManifest applies to manifest.slo: a command
// that takes the SLO from its flags checks it before any work.
func ValidateSLO(s SLO) []Problem {
	ps := &problems{file: ManifestFile}
	validateSLO(ps, "slo", &s)
	return ps.list
}

func validateSLO(ps *problems, prefix string, s *SLO) {
	for _, k := range SLOKeys {
		if s.Limit(k) < 0 {
			ps.add(prefix+"."+k, "must not be negative")
		}
	}
	if s.OneToken != "" && !oneOf(s.OneToken, OneTokenPass, OneTokenFail) {
		ps.add(prefix+"."+SLOOneToken, "must be %q or %q, got %q", OneTokenPass, OneTokenFail, s.OneToken)
	}
	if s.TPOT > 0 && s.OneToken == "" {
		ps.add(prefix+"."+SLOOneToken, "must say whether one-token answers pass or fail the tpot limit")
	}
}

// MaxClaimTolerance is the largest relative tolerance claims may state.
// benchseal's own definitions recompute exactly and peer definitions
// reproduce the tools' float64 arithmetic, so a looser tolerance could only
// hide a number that does not follow from the records.
const MaxClaimTolerance = 1e-6

// ValidateClaims checks claims against the manifest of their run (m may be
// nil when the manifest could not be read); file names the claims in the
// problems.
func ValidateClaims(c *Claims, m *Manifest, file string) []Problem {
	ps := &problems{file: file}
	if c.Schema != ClaimsSchemaV1 {
		ps.add("schema", "must be %q", ClaimsSchemaV1)
	}
	kept, _ := DefinitionsVersions(c.Definitions)
	if !oneOf(c.Definitions, ClaimDefinitions()...) {
		ps.add("definitions", "must be one of %s, got %q", quoteList(ClaimDefinitions()...), c.Definitions)
	} else if v := c.DefinitionsVersion; oneOf(v, unwrittenVersions()...) {
		// Claims files name versions from 2026.12 on; these rules are the
		// earlier releases', which wrote no version: naming one is a
		// hand-made claims file (docs/format.md "Versions").
		ps.add("definitions_version", "%q was never written by any release: claims files name versions from 2026.12 on, and a claims file made before then names none (must be one of %s)",
			v, quoteList(kept...))
	} else if v != "" && !oneOf(v, kept...) {
		ps.add("definitions_version", "must be one of %s (the versions of %s definitions this benchseal knows; a newer benchseal may know more), got %q",
			quoteList(kept...), c.Definitions, v)
	}
	if !finite(c.Tolerance) || c.Tolerance < 0 || c.Tolerance > MaxClaimTolerance {
		ps.add("tolerance", "must be a number from 0 to %s (recomputation is exact, or float64 as the tool computed), got %s", digits.Shortest(MaxClaimTolerance), digits.Shortest(c.Tolerance))
	}
	if c.SLO != nil {
		validateSLO(ps, "slo", c.SLO)
	}
	if len(c.Points) == 0 {
		ps.add("points", "must hold at least one claim")
	}
	declared := map[string]bool{}
	if m != nil {
		for _, p := range m.Load.Points {
			declared[p.Name] = true
		}
	}
	type key struct {
		point  string
		repeat int
		metric string
	}
	seen := map[key]bool{}
	for i, p := range c.Points {
		f := fmt.Sprintf("points[%d]", i)
		if m != nil && !declared[p.Point] {
			ps.add(f+".point", "%q is not declared in the manifest's load.points", p.Point)
		}
		r := -1
		if p.Repeat != nil {
			r = *p.Repeat
			if r < 0 || (m != nil && r >= m.Load.Repeats) {
				ps.add(f+".repeat", "%d is out of range [0, load.repeats)", r)
			}
		}
		if len(p.Metrics) == 0 {
			ps.add(f+".metrics", "must hold at least one claim")
		}
		for j, cl := range p.Metrics {
			g := fmt.Sprintf("%s.metrics[%d]", f, j)
			if cl.Metric == "" {
				ps.add(g+".metric", "must not be empty")
			} else if err := CheckClaimMetric(c.Definitions, cl.Metric); err != nil && oneOf(c.Definitions, ClaimDefinitions()...) {
				ps.add(g+".metric", "%v", err)
			}
			if !finite(cl.Value) {
				ps.add(g+".value", "must be a finite number")
			}
			k := key{p.Point, r, cl.Metric}
			if seen[k] {
				ps.add(g+".metric", "%q is claimed twice for this point and repeat", cl.Metric)
			}
			seen[k] = true
		}
	}
	return ps.list
}
