package redact

import "strings"

// ArgChange is an argument Args changed: its index, the kind of the first
// credential found in it, and what it became (never the credential).
type ArgChange struct {
	Index    int
	Kind     string
	Redacted string
}

// Args returns args with every credential String finds masked and, when
// secret is not "", every occurrence of secret too (a key the caller holds,
// such as one read from the environment, that an argument repeats; kind
// names it in the change). A command line kept in a run is published with
// it, so each argument changed is listed, in order, for a warning.
func Args(args []string, secret, kind string) ([]string, []ArgChange) {
	out := make([]string, len(args))
	var changed []ArgChange
	for i, a := range args {
		r, found := String(a)
		if secret != "" && strings.Contains(r, secret) {
			r = strings.ReplaceAll(r, secret, Mask)
			found = append(found, Finding{Line: 1, Kind: kind})
		}
		if len(found) > 0 {
			changed = append(changed, ArgChange{Index: i, Kind: found[0].Kind, Redacted: r})
		}
		out[i] = r
	}
	return out, changed
}
