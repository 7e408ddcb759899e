// What a run against the in-process simulator guarantees of each record's
// output tokens.

package schema

// simTokens holds, for a capture against benchseal's in-process simulator
// (InProcessSimulator), what every ok record's output_tokens must be.
// Zero-slack counters bound only the sum of the output tokens, so tokens
// moved between records (the slowest fifth cut to 2 tokens, their tokens
// given to records near the median) lowered tpot p50 by 17 % with every
// claim MATCHED; against the simulator each record's count is fixed.
type simTokens struct {
	// min is decoding.min_tokens: capture sends it (with ignore_eos)
	// under --force-length, and the simulator generates at least that
	// many tokens for every request it answers in full.
	min int64
	// oneTokenChunks: the run streamed, with chunk times measured, and
	// the simulator capture starts (its default configuration) sends one
	// token per content chunk, so output_tokens equals the chunk count.
	oneTokenChunks bool
}

// newSimTokens returns m's simTokens; the zero value (no rule) unless m
// is a capture against the in-process simulator.
func newSimTokens(m *Manifest) simTokens {
	if !InProcessSimulator(m) {
		return simTokens{}
	}
	return simTokens{
		min:            int64(m.Decoding.MinTokens),
		oneTokenChunks: m.Decoding.Streaming && m.Provenance.Field(FieldChunks).Status == FieldMeasured,
	}
}

// check holds an ok record rec to s, naming its field.
func (s simTokens) check(rec *Record, add func(field, format string, args ...any)) {
	if rec.Status != StatusOK {
		return
	}
	if rec.OutputTokens < s.min {
		add("output_tokens", "is %d, fewer than decoding.min_tokens %d, which the in-process simulator (--simulate on client.command_line) always generates for an ok request", rec.OutputTokens, s.min)
	}
	if n := int64(len(rec.ChunksNS)); s.oneTokenChunks && n > 0 && rec.OutputTokens != n {
		add("output_tokens", "is %d, but the answer arrived in %d content-bearing chunks, and the in-process simulator (--simulate on client.command_line) sends one token per chunk", rec.OutputTokens, n)
	}
}

// checkEnd checks what a record's end says: its status against its times
// (checkTimeout) and, for a run against the in-process simulator, its
// output tokens (simTokens).
func (c *RecordChecker) checkEnd(rec *Record, add func(field, format string, args ...any)) {
	c.checkTimeout(rec, add)
	c.sim.check(rec, add)
}
