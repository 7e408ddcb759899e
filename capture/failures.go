package capture

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// ErrTooManyFailures is the root of the error Run returns when a phase's
// failure rate passed Options.MaxErrorRate and the run was stopped. The
// run written so far is kept, marked incomplete.
var ErrTooManyFailures = errors.New("too many failed requests")

// MinErrorSample is how many requests of a phase must have ended before
// Options.MaxErrorRate can stop the run (or all of a smaller phase).
const MinErrorSample = 20

// maxFailureKinds bounds the distinct failure reasons counted; later ones
// are counted under "other".
const maxFailureKinds = 50

// Failure is one request that did not end ok, reported as it ends.
type Failure struct {
	ID, Point, Phase string
	Repeat           int
	Status, Error    string
	// Kind is the reason the failure is counted under (status and
	// message, shortened).
	Kind string
}

// FailureCount is how many requests failed for one reason.
type FailureCount struct {
	Kind  string
	Count int64
	// Warmup is how many of Count were warmup requests, which no
	// point's measured counts include.
	Warmup int64
}

// failureLog counts failures by kind and reports each to Options.OnFailure.
type failureLog struct {
	mu     sync.Mutex
	kinds  map[string]int64
	warmup map[string]int64 // of kinds, in the warmup phase
}

// hardFailure reports whether a record counts against MaxErrorRate: an
// error, a timeout or a refusal by the server. Planned or interrupting
// cancellations and the client's own max_outstanding refusals do not.
func hardFailure(rec *schema.Record) bool {
	switch rec.Status {
	case schema.StatusError, schema.StatusTimeout:
		return true
	case schema.StatusRejected:
		return strings.HasPrefix(rec.Error, "server:")
	}
	return false
}

func failureKind(rec *schema.Record) string {
	return rec.Status + ": " + truncate(rec.Error, 160)
}

// record counts a failed record and passes it to on (under the lock, so
// callers see one failure at a time).
func (l *failureLog) record(rec *schema.Record, on func(Failure)) {
	k := failureKind(rec)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kinds == nil {
		l.kinds = map[string]int64{}
	}
	if _, ok := l.kinds[k]; !ok && len(l.kinds) >= maxFailureKinds {
		k = "other"
	}
	l.kinds[k]++
	if rec.Phase == schema.PhaseWarmup {
		if l.warmup == nil {
			l.warmup = map[string]int64{}
		}
		l.warmup[k]++
	}
	if on != nil {
		on(Failure{ID: rec.ID, Point: rec.Point, Phase: rec.Phase, Repeat: rec.Repeat, Status: rec.Status, Error: rec.Error, Kind: k})
	}
}

// counts returns the failures by kind, most frequent first.
func (l *failureLog) counts() []FailureCount {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]FailureCount, 0, len(l.kinds))
	for k, n := range l.kinds {
		out = append(out, FailureCount{k, n, l.warmup[k]})
	}
	slices.SortFunc(out, func(a, b FailureCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Kind, b.Kind))
	})
	return out
}

// noteEnd counts a finished request of c against the failure threshold
// and stops the run when the phase's failure rate passed it.
func (r *runner) noteEnd(c *cell, rec *schema.Record) {
	hard := hardFailure(rec)
	if rec.Status != schema.StatusOK {
		r.failures.record(rec, r.o.OnFailure)
	}
	done := c.ended.Add(1)
	bad := c.hard.Load()
	if hard {
		bad = c.hard.Add(1)
	}
	thr := r.o.MaxErrorRate
	if thr <= 0 || r.abort == nil {
		return
	}
	sample := int64(MinErrorSample)
	if n := c.count(); n > 0 {
		sample = min(sample, int64(n))
	}
	if done >= sample && float64(bad) > thr*float64(done) {
		// The check sees the requests ended so far, not the point's final
		// counts: the message says so and how many were still in flight
		// (sent in the current phase, c's, and not yet ended), which the
		// records count too.
		inFlight := max(0, r.cur.sent.Load()-r.cur.done.Load())
		r.abort(errcond.Errorf(ErrTooManyFailures, "too many failed requests: point %s repeat %d (%s): %d of the first %d ended requests failed (%s%%), more than --max-error-rate %s%%; %d more were in flight",
			c.pt.Name, c.repeat, c.phase, bad, done, digits.Places(100*float64(bad)/float64(done), 0), digits.Places(100*thr, 0), inFlight))
	}
}
