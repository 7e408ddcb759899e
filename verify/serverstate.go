package verify

import (
	"errors"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

// checkServerState checks the server-metrics evidence the manifest names
// against the bundle's attachments (artifact.CheckServerEvidence, the check
// validate makes on a run directory: every stored scrape present, of its
// sha256 and parsable; a measured fresh start's counters and uptime
// re-derived from its scrape), and lists the declared server-state facts
// as unverified warnings; the point × repeat pairs whose compared counters
// went down are kept for checkClaims, which turns their claims UNVERIFIED. (Schema validation already ties an empty cache
// of source reset to a recorded successful reset that started after
// every earlier request ended and ended before the point's first
// request.)
func checkServerState(b *artifact.Bundle, res *Result) error {
	m := b.Manifest()
	for _, u := range schema.UnverifiedServerState(m) {
		res.Warnings = append(res.Warnings, "UNVERIFIED server state: "+u)
	}
	var errs []error
	var tallies []schema.ScrapeTally
	if res.Records != nil {
		tallies = res.Records.Server
	}
	probs, notes := artifact.CheckServerEvidenceNotes(m, schema.ManifestFile, b.ReadAttachment, tallies)
	for _, p := range probs {
		errs = append(errs, errors.New(p.String()))
	}
	for _, n := range notes {
		res.Warnings = append(res.Warnings, "UNVERIFIED "+n.Reason)
	}
	res.counterCells = notes
	if res.Records != nil {
		idle, idleNotes := artifact.CheckGPUIdle(m, schema.ManifestFile, b.ReadAttachment, res.Records.Busy)
		for _, p := range idle {
			errs = append(errs, errors.New(p.String()))
		}
		for _, n := range idleNotes {
			res.Warnings = append(res.Warnings, "UNVERIFIED "+n)
		}
	}
	return errors.Join(errs...)
}

// checkServerStateBeforeClaims runs checkServerState when the content was
// checked and consistent, before the claims are: a point × repeat whose
// compared counters went down leaves its claims UNVERIFIED. Its error is
// reported after the claims, in the order of the checks.
func checkServerStateBeforeClaims(b *artifact.Bundle, res *Result, skipContent bool) error {
	if c := res.check(CheckConsistency); !skipContent && c.Status == StatusPassed {
		return checkServerState(b, res)
	}
	return nil
}
