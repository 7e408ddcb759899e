// Expected against reported prefix-cache hits of a trace replay.

package replay

import "github.com/benchseal/benchseal/schema"

// PrefixExpected is, over a point × repeat's measured requests that ended
// ok and whose workload item states cacheable_tokens, their prompt tokens
// (the records' input_tokens, the server's count), the tokens the item
// expects a prefix cache to serve (its leading tokens that earlier
// requests sent as the same trace blocks: an unbounded cache; in words, or
// in the served model's tokens when capture fitted the prompts), and,
// over those whose answer reported cached tokens, the cached tokens the
// server reported (schema.ServerReport.Cached).
type PrefixExpected struct {
	Requests, PromptTokens, ExpectedTokens int64
	Reported, ReportedTokens               int64
}

func (p *PrefixExpected) add(w *schema.WorkloadItems, rec *schema.Record) {
	if w == nil || rec.Status != schema.StatusOK || rec.Item == nil {
		return
	}
	n, ok := w.Cacheable(*rec.Item)
	if !ok {
		return
	}
	p.Requests++
	p.PromptTokens += rec.InputTokens
	p.ExpectedTokens += n
	if c, ok := rec.Server.Cached(); ok {
		p.Reported++
		p.ReportedTokens += c
	}
}
