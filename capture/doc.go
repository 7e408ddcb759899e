// Package capture is benchseal's load client: it drives an OpenAI-compatible
// inference endpoint (/v1/chat/completions or /v1/completions, streamed as
// server-sent events or not) through a plan of load points and writes a run
// directory in format v1 as it goes.
//
// Every timestamp is taken on one monotonic clock (time since the run's
// start). A chunk's arrival time is taken when its bytes are read from the
// connection, before any parsing; only content-bearing chunks are recorded.
// Open-loop (rate) points precompute their send schedule from a seed, so a
// slow server never slows the schedule, and each record keeps both its
// scheduled and its actual send time.
//
// Records are appended to records.jsonl as requests finish and flushed
// regularly; the manifest is written first marked incomplete and replaced
// atomically when the run ends, so a killed capture leaves a directory that
// validates as incomplete.
package capture
