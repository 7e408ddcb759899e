package verify

import (
	"errors"
	"strings"

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
	gpuFailed := false
	for _, p := range probs {
		errs = append(errs, errors.New(p.String()))
		gpuFailed = gpuFailed || strings.HasPrefix(p.Field, "gpu_metrics")
	}
	for _, n := range notes {
		res.Warnings = append(res.Warnings, "UNVERIFIED "+n.Reason)
	}
	res.counterCells = notes
	if res.Records != nil {
		idle, idleNotes, gaps := artifact.CheckGPUIdleGaps(m, schema.ManifestFile, b.ReadAttachment, res.Records.Busy)
		for _, p := range idle {
			errs = append(errs, errors.New(p.String()))
		}
		res.Energy = energyEvidence(m, gpuFailed, len(idle) > 0, gaps)
		if m.GPUMetrics.AgeUnknown() {
			res.Warnings = append(res.Warnings, "UNVERIFIED "+schema.AgeUnknownNote)
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

// energyEvidence is the EnergyEvidence of m's accelerator scrapes (nil
// without any).
func energyEvidence(m *schema.Manifest, failed, idleFailed bool, gaps int) *EnergyEvidence {
	g := m.GPUMetrics
	if g == nil {
		return nil
	}
	e := &EnergyEvidence{Scrapes: len(g.Scrapes), Endpoints: len(g.Endpoints), Evidence: StatusPassed, IdleGaps: gaps, Idle: StatusPassed,
		GaugeNotApplied: artifact.GPUGaugeNotApplied(g)}
	for _, ep := range g.Endpoints {
		e.Devices += len(ep.Devices)
	}
	if failed {
		e.Evidence = StatusFailed
	}
	switch {
	case idleFailed:
		e.Idle = StatusFailed
	case gaps == 0:
		e.Idle = StatusSkipped
	}
	return e
}
