// A capture's check of the run it just wrote.

package artifact

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// CapturedRunError says that a run directory a capture just wrote is not
// a valid run: validate, pack and verify would reject it. SharedServer is
// set when the engine's counters show more finished requests than the
// run sent, which on an honest capture means other clients used the
// server during the run.
type CapturedRunError struct {
	Dir          string
	Problems     []schema.Problem
	Omitted      int
	SharedServer bool
}

// Error names the run, its problems and, for a shared server, the cause
// and the two ways out.
func (e *CapturedRunError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "capture: %s was written but is not a valid run: validate, pack and verify reject it (%d problem(s))", e.Dir, len(e.Problems)+e.Omitted)
	if e.SharedServer {
		b.WriteString("\n  the server's counters show requests this run did not send: the server was most likely shared during the run " +
			"(another benchmark, a canary or monitor, a load balancer's synthetic traffic), so its counters cannot vouch for this run's records." +
			"\n  re-run against a server no other client uses, or with --server-metrics off (the run then carries no server evidence, and verify prints the claims that rest on it UNVERIFIED)")
	}
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "\n  … %d more", e.Omitted)
	}
	return b.String()
}

// countedPhrase and upperBoundVerb make checkServerCounters' message for a
// request counter that rose above what the run sent, and upperBoundMark
// the words built from it that CheckCapturedRun looks for: one phrase,
// stated once, so the message and its detection cannot drift apart.
const (
	countedPhrase  = "would have counted"
	upperBoundVerb = "at most"
	upperBoundMark = countedPhrase + " " + upperBoundVerb
)

// CheckCapturedRun checks the run directory a capture just wrote as pack
// will (the records, then the stored scrapes against them), so that a
// capture does not report a run complete that pack then rejects. It
// returns nil for a valid run, a *CapturedRunError naming the problems,
// or the error that stopped the check.
func CheckCapturedRun(ctx context.Context, dir string, maxProblems int) error {
	sum, err := schema.CheckRunDir(ctx, dir, maxProblems, nil)
	var ve *schema.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return err
	}
	e := &CapturedRunError{Dir: dir}
	if ve != nil {
		e.Problems, e.Omitted = ve.Problems, ve.Omitted
	}
	for _, p := range CheckRunDirServerEvidence(dir, sum) {
		e.Problems = append(e.Problems, p)
		if strings.HasPrefix(p.Field, "server_metrics.scrapes[") && strings.Contains(p.Message, upperBoundMark) {
			e.SharedServer = true
		}
	}
	if len(e.Problems) == 0 && e.Omitted == 0 {
		return nil
	}
	return e
}

// ValidatePackable checks a run directory as pack does before packing it:
// its records and manifest (schema.CheckRunDir, at most maxProblems
// problems) and then its stored server and accelerator scrapes against
// them (CheckRunDirServerEvidence). schema.ValidateRunDocuments alone
// leaves the scrapes unchecked, so a run directory whose scrape file was edited
// would be compared or evaluated as if valid. It returns the records'
// summary and nil, a *schema.ValidationError listing every problem, or
// the error that stopped the check.
func ValidatePackable(ctx context.Context, dir string, maxProblems int) (*schema.RunSummary, error) {
	sum, err := schema.CheckRunDir(ctx, dir, maxProblems, nil)
	var ve *schema.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return sum, err
	}
	if probs := CheckRunDirServerEvidence(dir, sum); len(probs) > 0 {
		if ve == nil {
			ve = &schema.ValidationError{}
		}
		ve.Problems = append(ve.Problems, probs...)
	}
	if ve != nil {
		return sum, ve
	}
	return sum, nil
}
