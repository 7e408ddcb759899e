package replay

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/benchseal/benchseal/schema"
)

// A Definition is one set of metric definitions: benchseal's canonical
// ones, or a peer tool's, reproduced the way that tool computes (what it
// counts, how it reads a record, how it finishes a distribution: its
// percentile, stddev, window and units). Each lives in a file of its own
// (def_<tool>.go), which adds it to the registry from its init function
// (register); the CLI help and the claims-schema enum derive from the
// registry, and TestDefinitionsInSync fails when it and what schema
// accepts (schema.ClaimDefinitions, DefinitionsVersions, a peer tool's
// ExtraDists) disagree.
//
// Only this package implements Definition: the rules work on the replay
// engine's accumulators.
type Definition interface {
	// Name is the name --definitions and claims.json use: the peer
	// tool's name (Tool().Name), or "benchseal".
	Name() string
	// Tool is the peer tool whose definitions these are, the same value
	// its importer points to; nil for benchseal's own.
	Tool() *schema.PeerTool
	// Meanings say what tpot_ns and itl_ns mean under these
	// definitions, in the tool's own formula; nil where the tool has
	// none of its own (benchseal's meanings then apply).
	Meanings() map[string]string
	// Summary is a one-line description; Help the full definition text
	// (used by benchseal replay --help and docs/cli).
	Summary() string
	Help() string
	// Aliases maps the tool's own metric names to replay result paths.
	Aliases() map[string]string
	// Notes say what these definitions cannot compute.
	Notes() []string
	// ExtraDists are the distributions these definitions add to the
	// canonical ones (ClaimDistNames), which a claim may name.
	ExtraDists() []string
	// OneToken is the one-token policy these definitions apply whatever
	// the SLO states ("" when they follow the SLO's), and rule the
	// tool's rule in words.
	OneToken() (policy, rule string)

	// peerRules returns a fresh accumulator for one point and repeat, or
	// nil for the canonical definitions (computed by the engine itself).
	peerRules() peerRules
	// unmeasured returns the metrics these definitions cannot compute
	// from m's records although their fields were measured, with why.
	unmeasured(m *schema.Manifest) map[string]string
}

// registered collects the definitions each def_*.go file adds from its
// init function, in no particular order: a tool's definitions are named
// in its own file only, as Go cannot list a package's variables.
var registered []Definition

// register adds d to the registry. It is called from init functions
// only, so registry, first called after every init has run, sees them
// all.
func register(d Definition) { registered = append(registered, d) }

// registry returns every definitions, canonical first, then each peer
// tool's in schema.PeerTools order. Two definitions of one tool, or of
// a tool schema does not list, are a programming error: it panics
// (TestDefinitionsInSync and importer's TestEveryPeerToolIsComplete
// name the culprit first).
var registry = sync.OnceValue(func() []Definition {
	rank := func(d Definition) int {
		if d.Tool() == nil {
			return -1
		}
		if i := slices.Index(schema.PeerTools, d.Tool()); i >= 0 {
			return i
		}
		panic("replay: definitions " + d.Name() + " name a tool schema.PeerTools does not list")
	}
	out := slices.Clone(registered)
	slices.SortFunc(out, func(a, b Definition) int { return rank(a) - rank(b) })
	for i := 1; i < len(out); i++ {
		if rank(out[i]) == rank(out[i-1]) {
			panic("replay: two definitions for " + out[i].Name())
		}
	}
	return out
})

// DefinitionNames lists every definitions name, canonical first.
func DefinitionNames() []string {
	out := make([]string, 0, len(registry()))
	for _, d := range registry() {
		out = append(out, d.Name())
	}
	return out
}

// Definitions returns every definitions, canonical first.
func Definitions() []Definition { return slices.Clone(registry()) }

// info is the descriptive part every Definition shares.
type info struct {
	// tool is the peer tool's registration, which names the
	// definitions; nil for benchseal's, named by name.
	tool                *schema.PeerTool
	name, summary, help string
	// meanings say what tpot_ns and itl_ns mean in the tool's formula.
	meanings map[string]string
	aliases  map[string]string
	notes    []string
	// oneToken is the tool's fixed one-token policy ("" follows the
	// SLO's), oneTokenRule the tool's rule in words.
	oneToken, oneTokenRule string
}

func (i *info) Name() string {
	if i.tool != nil {
		return i.tool.Name
	}
	return i.name
}
func (i *info) Tool() *schema.PeerTool      { return i.tool }
func (i *info) Meanings() map[string]string { return i.meanings }
func (i *info) Summary() string             { return i.summary }
func (i *info) Help() string                { return i.help }
func (i *info) Aliases() map[string]string  { return i.aliases }
func (i *info) Notes() []string             { return i.notes }
func (i *info) ExtraDists() []string {
	if i.tool == nil {
		return nil
	}
	return slices.Clone(i.tool.ExtraDists)
}
func (i *info) OneToken() (string, string)                    { return i.oneToken, i.oneTokenRule }
func (i *info) unmeasured(*schema.Manifest) map[string]string { return nil }

func lookupDefinition(name string) (Definition, error) {
	if name == "" {
		name = "benchseal"
	}
	for _, d := range registry() {
		if d.Name() == strings.ToLower(name) {
			return d, nil
		}
	}
	return nil, badInput("unknown definitions %q (want one of %s)", name, strings.Join(DefinitionNames(), ", "))
}

// LookupDefinition returns the named definitions.
func LookupDefinition(name string) (Definition, error) { return lookupDefinition(name) }

// applyOneTokenPolicy returns slo with the one-token policy def applies:
// a tool that fixes its own overrides the SLO's. The note names the
// tool's rule when the policy differs from the SLO's, or when it matters
// (a TPOT limit is set); "" otherwise.
func applyOneTokenPolicy(def Definition, slo SLOSpec) (SLOSpec, string) {
	pol, rule := def.OneToken()
	if pol == "" {
		return slo, ""
	}
	stated := slo.OneToken
	slo.OneToken = pol
	switch {
	case !slo.Any():
		return slo, ""
	case pol != stated:
		slo.OverriddenOneToken = stated
		return slo, fmt.Sprintf("%s: %s; one_token %s applied, overriding the SLO's one_token %s", def.Name(), rule, pol, stated)
	case slo.TPOTNS != nil:
		return slo, fmt.Sprintf("%s: %s; one_token %s applied whatever the SLO states", def.Name(), rule, pol)
	}
	return slo, ""
}
