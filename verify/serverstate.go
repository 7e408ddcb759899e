package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// checkServerState checks the measured facts of manifest.server_state
// against the evidence they name, and lists the declared ones as
// unverified warnings. A measured fresh start is re-read from its stored
// scrape: its digest, and the engine's counters in it, must be what the
// manifest says. (Schema validation already ties an empty cache of source
// reset to a recorded successful reset that started after every earlier
// request ended and ended before the point's first request.)
func checkServerState(b *artifact.Bundle, res *Result) error {
	m := b.Manifest()
	for _, u := range schema.UnverifiedServerState(m) {
		res.Warnings = append(res.Warnings, "UNVERIFIED server state: "+u)
	}
	if m.ServerState == nil || m.ServerState.Fresh == nil || m.ServerState.Fresh.Source != schema.StateMeasured {
		return nil
	}
	f := m.ServerState.Fresh
	raw, err := b.ReadAttachment(f.Scrape)
	if err != nil {
		return fmt.Errorf("server_state.fresh: %w", err)
	}
	if h := sha256.Sum256(raw); hex.EncodeToString(h[:]) != f.SHA256 {
		return fmt.Errorf("server_state.fresh: %s: sha256 differs from the manifest", f.Scrape)
	}
	snap, err := servermetrics.Parse(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("server_state.fresh: %s: %w", f.Scrape, err)
	}
	sv, ok := servermetrics.ServedBefore(snap)
	switch {
	case !ok:
		return fmt.Errorf("server_state.fresh: %s holds no engine request and prompt-token counters, so it measures nothing", f.Scrape)
	case f.RequestsBefore == nil || f.PromptTokensBefore == nil || sv.Requests != *f.RequestsBefore || sv.PromptTokens != *f.PromptTokensBefore:
		return fmt.Errorf("server_state.fresh: %s counts %v requests and %v prompt tokens, the manifest says %v and %v",
			f.Scrape, sv.Requests, sv.PromptTokens, deref(f.RequestsBefore), deref(f.PromptTokensBefore))
	case sv.Fresh() != f.Fresh:
		return fmt.Errorf("server_state.fresh: fresh is %v, but %s says %v", f.Fresh, f.Scrape, sv.Fresh())
	}
	return nil
}

func deref(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}
