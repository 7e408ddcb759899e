package schema

import (
	"slices"
	"strings"
)

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
// who, the reproduction's manifest.json digest ("sha256:<hex>", what an
// attestation names; not the reproduction bundle's OCI run manifest), the
// setup limits the reviewer stated (reproduce's "<check> <status>: …"
// lines) and whether the bundle carries that reproduction as a referrer.
type ReviewerReproduction struct {
	Reviewer, ManifestJSON string
	Limits                 []string
	Carried                bool
}

// SplitSetupLimits splits a reproduction's stated setup limits
// ("<check> <status>: <detail>", as reproduce writes them) into those
// where a stated value differs and those only unknown (status "unknown":
// no two stated values differ, some side states none). The setup differs
// only when differ is not empty.
func SplitSetupLimits(limits []string) (differ, unknown []string) {
	for _, l := range limits {
		head, _, _ := strings.Cut(l, ":")
		if strings.HasSuffix(head, " unknown") && !strings.Contains(strings.TrimSuffix(head, " unknown"), " ") {
			unknown = append(unknown, l)
		} else {
			differ = append(differ, l)
		}
	}
	return differ, unknown
}

// setupSummary names a reproduction's stated limits by check: "on a setup
// the reviewer states differs (…)" only when a stated value differs, else
// "on the same stated setup (unknown: …)"; "" when there are none.
func setupSummary(limits []string) string {
	differ, unknown := SplitSetupLimits(limits)
	names := func(ls []string, suffix string) []string {
		out := make([]string, len(ls))
		for i, l := range ls {
			head, _, _ := strings.Cut(l, ":")
			out[i] = strings.TrimSuffix(head, suffix)
		}
		return out
	}
	var u string
	if len(unknown) > 0 {
		u = "unknown: " + escapeAll(names(unknown, " unknown"))
	}
	switch {
	case len(differ) > 0 && u != "":
		return ", on a setup the reviewer states differs (" + escapeAll(names(differ, "")) + "; " + u + ")"
	case len(differ) > 0:
		return ", on a setup the reviewer states differs (" + escapeAll(names(differ, "")) + ")"
	case u != "":
		return ", on the same stated setup (" + u + ")"
	}
	return ""
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
		s += "; attested by reviewer " + escapeAll(uniq(v.Reviewers)) + " (the same checks on the same bundle, not a reproduction)"
	}
	for _, r := range v.Reproductions {
		s += "; reviewer " + EscapeText(r.Reviewer, false) + " states a reproduction, manifest.json " + EscapeText(r.ManifestJSON, false) + setupSummary(r.Limits)
		if r.Carried {
			s += " (carried as a reproduction referrer; its manifest.json digest matches the attestation; its verdicts are as the reviewer states them)"
		} else {
			s += " (the reviewer's word: the reproduction is not carried as a referrer)"
		}
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

// uniq returns ss without repeats, in first-seen order: a reviewer that
// signed two attestations is one reviewer.
func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
