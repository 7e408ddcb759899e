// Expected against reported prefix-cache hits of a trace replay or a run
// of multi-turn sessions.

package replay

import (
	"math"

	"github.com/benchseal/benchseal/schema"
)

// What a PrefixExpected's expected tokens are (PrefixExpected.Basis).
const (
	// PrefixBasisTrace: a trace replay's items' cacheable_tokens, the
	// prompt's leading tokens earlier requests sent as the same trace
	// blocks (words, or the served model's tokens when capture fitted
	// the prompts).
	PrefixBasisTrace = "trace"
	// PrefixBasisSessions: a later turn of a session expects its
	// previous turn's whole prompt cached (that turn's input_tokens, the
	// server's count): the history it sends starts with that prompt. The
	// dataset's answer after it is not what the server generated, so it
	// is not expected cached, and a system prompt shared across sessions
	// is not counted either: a lower bound of what a cache can serve.
	PrefixBasisSessions = "sessions"
)

// ReasonPrefixOverflow is PrefixExpected.Overflow when a sum does not fit
// in 64 bits: no real run's token counts reach it.
const ReasonPrefixOverflow = "a sum of token counts exceeds 2^63 − 1: the records' input_tokens or cached tokens are not real counts"

// PrefixExpected is, over a point × repeat's measured requests that ended
// ok and have an expected cacheable prefix (Basis), their prompt tokens
// (the records' input_tokens, the server's count), the tokens a prefix
// cache is expected to serve (an unbounded cache), and, over those whose
// answer reported cached tokens, the cached tokens the server reported
// (schema.ServerReport.Cached). When a sum overflows, Overflow says so and
// the sums are not to be printed (null with that reason).
type PrefixExpected struct {
	Basis                                  string
	Requests, PromptTokens, ExpectedTokens int64
	Reported, ReportedTokens               int64
	Overflow                               string
}

// sum adds v to *to, or marks p overflowed (a negative v too: counts are
// not negative).
func (p *PrefixExpected) sum(to *int64, v int64) {
	if v < 0 || *to > math.MaxInt64-v {
		p.Overflow = ReasonPrefixOverflow
		return
	}
	*to += v
}

// count adds an ok request rec expecting expected tokens cached.
func (p *PrefixExpected) count(rec *schema.Record, expected int64) {
	p.Requests++
	p.sum(&p.PromptTokens, rec.InputTokens)
	p.sum(&p.ExpectedTokens, expected)
	if c, ok := rec.Server.Cached(); ok {
		p.Reported++
		p.sum(&p.ReportedTokens, c)
	}
}

func (p *PrefixExpected) add(w *schema.WorkloadItems, rec *schema.Record) {
	if w == nil || rec.Status != schema.StatusOK || rec.Item == nil {
		return
	}
	n, ok := w.Cacheable(*rec.Item)
	if !ok {
		return
	}
	p.Basis = PrefixBasisTrace
	p.count(rec, n)
}

// addTurn adds a later turn of a session whose previous turn, prev, ended
// ok with its prompt counted (input_tokens measured: inputs).
func (p *PrefixExpected) addTurn(rec *schema.Record, prev *prevTurn, inputs bool) {
	if !inputs || rec.Status != schema.StatusOK || prev == nil || !prev.ok || prev.input <= 0 {
		return
	}
	p.Basis = PrefixBasisSessions
	p.count(rec, prev.input)
}

// prevTurn is what a session's expected prefix needs of its last turn.
type prevTurn struct {
	turn, input int64
	ok          bool
}
