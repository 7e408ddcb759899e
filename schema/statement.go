package schema

import "strings"

// Vouch is what, beyond the signer's own word, stands behind a run: the
// verified keyless identities that signed it (who signed, as a
// certificate authority attests) and the verified reviewers who attested
// it (each checked the same bundle; none reproduced the run).
type Vouch struct {
	Identities []string
	Reviewers  []string
	// Reproductions are the verified reviewer attestations at the
	// reproduced level: each reviewer's statement that it re-ran the
	// test, naming its reproduction run.
	Reproductions []ReviewerReproduction
}

// ReviewerReproduction is one reviewer's statement of a reproduction:
// who, the reproduction run's manifest digest ("sha256:<hex>") and the
// differences the reviewer stated (Limits).
type ReviewerReproduction struct {
	Reviewer, RunManifest string
	Limits                []string
}

// SignerStatement is the one line every command prints beside a run's
// evidence class: a signature and a recomputation prove that the bundle
// is what its signer signed and that every claim follows from its
// records, not that the run happened as described. Hardware, engine,
// server state and the measurements themselves stay the signer's
// statement; a keyless identity names who made it, and a reviewer's
// attestation repeats the checks on the same bundle. Text from the
// bundle in v is escaped (EscapeText).
func SignerStatement(evidence string, v Vouch) string {
	var s string
	switch evidence {
	case EvidenceSynthetic:
		s = "signer's statement: a synthetic run (simulator or generator), no measurement of hardware; its configuration and records are the signer's word"
	case EvidenceImported:
		s = "signer's statement: hardware, engine, server state and the measurements themselves (another tool's output, imported) are the signer's word; verification shows the bundle is intact and its claims follow from its records, not that the run happened as described"
	default:
		s = "signer's statement: hardware, engine, server state and the measurements themselves are the signer's word; verification shows the bundle is intact and its claims follow from its records, not that the run happened as described"
	}
	if len(v.Identities) > 0 {
		s += "; signed by keyless identity " + escapeAll(v.Identities) + " (who made the statement, not what ran)"
	}
	if len(v.Reviewers) > 0 {
		s += "; attested by reviewer " + escapeAll(v.Reviewers) + " (the same checks on the same bundle, not a reproduction)"
	}
	for _, r := range v.Reproductions {
		s += "; reviewer " + EscapeText(r.Reviewer, false) + " states a reproduction, run manifest " + EscapeText(r.RunManifest, false)
		if len(r.Limits) > 0 {
			s += ", on a setup the reviewer states differs (" + escapeAll(r.Limits) + ")"
		}
		s += " (the reviewer's word unless the reproduction is present as a referrer)"
	}
	return s
}

func escapeAll(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = EscapeText(s, false)
	}
	return strings.Join(out, ", ")
}
