package replay

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/benchseal/benchseal/schema"
)

// A Version is one frozen set of rules of a Definition, named
// "DEFINITIONS/YYYY.MM" (the month it was released). A claims file names
// the version its numbers were computed under (definitions_version) and a
// verifier recomputes them under that version, so a bundle verified once
// verifies with every later benchseal. Changing a definition adds a
// version: the old one stays in versions, unchanged, with its tests.
//
// A version's rules are kept when this benchseal still computes them
// (benchseal's own versions all are); a version whose rules are not kept
// is listed so that claims naming it are recognised, and their numbers
// are recomputed under the first kept version of the same definitions
// and shown UNVERIFIED where the two differ, never mismatched.
type Version struct {
	// Name is "DEFINITIONS/YYYY.MM".
	Name string
	// Definitions names the Definition the version belongs to.
	Definitions string
	// Since is the commit of this repository that introduced the rules.
	Since string
	// Changed names what changed from the previous version of the same
	// definitions, one short phrase per definition ("" for the first),
	// Why says why.
	Changed, Why string
	// Defect is the known defect of this version's rules in one fixed
	// sentence: a rule that made numbers false. A claim recomputed under
	// it is printed with it. "" when none is known.
	Defect string
	// Kept is false when this benchseal no longer computes the version's
	// rules (only some peer definitions' first versions, whose rules were
	// changed before versions were named).
	Kept bool

	rules versionRules
}

// versionRules are the switches that make the engine compute an older
// version's rules; the zero value is the current rules.
type versionRules struct {
	// windowEndsAtLastOK ends benchseal's window at the latest final
	// token of an ok request (benchseal/2026.11) instead of the latest
	// end of any measured request.
	windowEndsAtLastOK bool
	// latencyToLastChunk ends vLLM's and SGLang's latency of a request
	// whose tool stored none at its last chunk (vllm/2026.11,
	// sglang/2026.11: vLLM's serve.py rule) instead of at end_ns, the end
	// of the stream.
	latencyToLastChunk bool
	// tokensAtLastChunk puts all n output tokens of a request at its last
	// chunk in GuideLLM's token rates on a run that is not a GuideLLM
	// import (guidellm/2026.11, before ded935d) instead of each chunk's
	// tokens at its recorded arrival.
	tokensAtLastChunk bool
}

// windowFields returns the record fields the window of these rules is
// computed from: the gate nulls it when the source did not measure one.
// benchseal/2026.11's window ends at a last chunk, later ones at end_ns.
func (r versionRules) windowFields() []string {
	if r.windowEndsAtLastOK {
		return []string{schema.FieldSent, schema.FieldLastChunk}
	}
	return []string{schema.FieldSent, schema.FieldEnd}
}

// latencyEnd returns the record field vLLM's and SGLang's latency of a
// request without a stored one ends at under these rules.
func (r versionRules) latencyEnd() string {
	if r.latencyToLastChunk {
		return schema.FieldLastChunk
	}
	return schema.FieldEnd
}

// First release names: the version a claims file that names none follows.
const (
	firstRelease = schema.FirstRelease
	// currentRelease is the release of every definitions' current version.
	currentRelease = schema.CurrentRelease
	// namedRelease is the release in which claims files began to name
	// their version: a claims file naming none follows a version up to it.
	namedRelease = "2026.12"
)

// Known defect and change texts, each stated once.
const (
	windowChanged = "window: ends at the latest end of any measured request, ok or failed (was: the latest final token of an ok request)"
	windowWhy     = "a request that failed or timed out after the last ok token did not count in the window, so failing hard work shortened it and raised goodput and throughputs"
	windowDefect  = "its window ends at the last ok request's final token, so a request that fails or times out after it is left out of the window and failing hard work can raise goodput and throughputs"

	peerChanged = "read orig only in a run imported from the tool itself, else the records through the provenance gate; SLO limits on unstored values unknown, not misses; the tool's one-token rule applied"
	peerWhy     = "a peer definitions read another tool's orig fields (placeholders among them) as its own and judged unstored values as SLO misses"

	latencyChanged = "e2e and tpot of a request whose tool stored no latency run to end_ns, the end of the stream (was: its last chunk)"
	latencyWhy     = "SGLang's bench_serving and vLLM's 2024 benchmark_serving, which these definitions follow, time the latency to the end of the stream ([DONE] included), not to the last token chunk"

	tokensChanged = "on a run that is not a GuideLLM import each chunk's output tokens count at its recorded arrival (was: all n tokens at the request's last chunk)"
	tokensWhy     = "GuideLLM spreads a request's tokens over its token iterations; the records hold every chunk's arrival, so putting all of them at the last chunk raised output tok/s (+23 % on a capture)"
)

// versions lists every definitions version, oldest first per definitions.
// benchseal's are all kept. Each peer's first version is the rules of the
// first releases, changed (7772d6e and later) before versions were named.
// vLLM's and SGLang's first versions are kept for what a captured run's
// claims under them depend on, the latency rule (latencyToLastChunk);
// GuideLLM's for its token placement on a run that is not a GuideLLM
// import (tokensAtLastChunk, changed in ded935d); the other changes of
// 7772d6e (orig read only in the tool's own imports, the provenance gate,
// unjudged SLO limits) apply to them too, as fixes of misread input that
// no honest claim depends on. The other peers' first versions are not
// kept: no claim of a captured run under them changed (docs/format.md).
var versions = sync.OnceValue(func() []Version {
	vs := []Version{
		{Name: "benchseal/" + firstRelease, Definitions: "benchseal", Since: "2a73a39", Kept: true, Defect: windowDefect,
			rules: versionRules{windowEndsAtLastOK: true}},
		{Name: "benchseal/" + currentRelease, Definitions: "benchseal", Since: "3e42009", Kept: true, Changed: windowChanged, Why: windowWhy},
	}
	for _, d := range registry()[1:] {
		changed, why := peerChanged, peerWhy
		switch d.Tool() {
		case schema.MLPerf:
			// The --mlperf validity check (under any definitions),
			// whose values no claims file holds: listed for the reader.
			changed += "; the --mlperf validity check counts every issued query in the p99 and the overlatency counts, a failed one as +inf (no claims file holds its values)"
			why += "; failed queries were left out of the check's p99"
		}
		// Whether a first version is kept is schema's (what a claims
		// file may name); its rules are here.
		first := Version{Name: d.Name() + "/" + firstRelease, Definitions: d.Name(), Since: "2a73a39", Kept: d.Tool().KeepsFirst}
		switch d.Tool() {
		case schema.VLLM, schema.SGLang:
			first.rules = versionRules{latencyToLastChunk: true}
			changed, why = latencyChanged+"; "+changed, latencyWhy+"; "+why
		case schema.GuideLLM:
			first.rules = versionRules{tokensAtLastChunk: true}
			changed, why = tokensChanged+"; "+changed, tokensWhy+"; "+why
		}
		vs = append(vs, first,
			Version{Name: d.Name() + "/" + currentRelease, Definitions: d.Name(), Since: "7772d6e", Kept: true, Changed: changed, Why: why})
	}
	return vs
})

// Versions returns every definitions version, definitions in registry
// order, oldest first within each.
func Versions() []Version { return slices.Clone(versions()) }

// VersionsOf returns the versions of the named definitions, oldest first.
func VersionsOf(definitions string) []Version {
	if definitions == "" {
		definitions = "benchseal"
	}
	var out []Version
	for _, v := range versions() {
		if v.Definitions == definitions {
			out = append(out, v)
		}
	}
	return out
}

// CurrentVersion returns the name of the current version of the named
// definitions ("" when there is no such definitions).
func CurrentVersion(definitions string) string {
	vs := VersionsOf(definitions)
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1].Name
}

// LookupVersion returns the named version of the named definitions.
func LookupVersion(definitions, name string) (Version, error) {
	vs := VersionsOf(definitions)
	for _, v := range vs {
		if v.Name == name {
			return v, nil
		}
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return Version{}, badInput("unknown definitions version %q for %s definitions (this benchseal knows %s)", name, cmp.Or(definitions, "benchseal"), strings.Join(names, ", "))
}

// firstKept returns the oldest version of v's definitions whose rules
// this benchseal computes, at or after v.
func firstKept(v Version) Version {
	vs := VersionsOf(v.Definitions)
	i := slices.IndexFunc(vs, func(x Version) bool { return x.Name == v.Name })
	for _, x := range vs[max(i, 0):] {
		if x.Kept {
			return x
		}
	}
	return vs[len(vs)-1]
}

// changesSince lists, in order, what changed in the versions after from up
// to and including to, of one definitions ("version: change").
func changesSince(from, to Version) []string {
	var out []string
	in := false
	for _, v := range VersionsOf(from.Definitions) {
		if in && v.Changed != "" {
			out = append(out, fmt.Sprintf("%s: %s", v.Name, v.Changed))
		}
		if v.Name == from.Name {
			in = true
		}
		if v.Name == to.Name {
			break
		}
	}
	return out
}
