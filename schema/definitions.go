package schema

import "slices"

// The releases that name definitions versions: a version is
// "DEFINITIONS/RELEASE" (docs/format.md, "Versions"). replay attaches each
// version's rules; what a claims file may name is decided here, from the
// peer tools' registrations, so that a new tool is stated in its
// registration only.
const (
	// FirstRelease is the first release: every definitions of a tool
	// registered then has a version of it.
	FirstRelease = "2026.11"
	// CurrentRelease is the release of every definitions' current
	// version.
	CurrentRelease = "2026.12"
)

// benchsealVersions are benchseal's own definitions versions, oldest
// first; replay keeps the rules of every one.
var benchsealVersions = []string{"benchseal/" + FirstRelease, "benchseal/" + CurrentRelease}

// ClaimDefinitions returns the metric definitions a claims file or a plan
// may follow, canonical first, then each peer tool's in PeerTools order:
// the order of replay's registry.
func ClaimDefinitions() []string {
	out := []string{"benchseal"}
	for _, t := range PeerTools {
		out = append(out, t.Name)
	}
	return out
}

// DefinitionsVersions returns the versions of the named definitions a
// claims file may name, oldest first (kept: replay computes their rules),
// and those no claims file names (unwritten: a peer's first-release
// rules that replay no longer computes, changed before claims files
// named versions). Both are nil for an unknown definitions.
func DefinitionsVersions(definitions string) (kept, unwritten []string) {
	if definitions == "benchseal" {
		return slices.Clone(benchsealVersions), nil
	}
	t := peerTool(definitions)
	if t == nil {
		return nil, nil
	}
	first := t.Name + "/" + FirstRelease
	if t.KeepsFirst {
		kept = append(kept, first)
	} else {
		unwritten = append(unwritten, first)
	}
	return append(kept, t.Name+"/"+CurrentRelease), unwritten
}

// unwrittenVersions lists every definitions' unwritten versions.
func unwrittenVersions() []string {
	var out []string
	for _, d := range ClaimDefinitions() {
		_, u := DefinitionsVersions(d)
		out = append(out, u...)
	}
	return out
}

// peerTool returns the peer tool whose definitions are named exactly so,
// nil for benchseal's or an unknown name.
func peerTool(definitions string) *PeerTool {
	i := slices.IndexFunc(PeerTools, func(t *PeerTool) bool { return t.Name == definitions })
	if i < 0 {
		return nil
	}
	return PeerTools[i]
}
