// Package simulator is a simulated OpenAI-compatible inference server for
// tests and demos. It is labelled a simulator everywhere: its model is
// owned_by "benchseal-simulator", every answer carries the
// X-Benchseal-Simulator header, and /version says so, so runs captured
// against it are marked evidence "synthetic".
//
// Latency model (every duration multiplied by Config.TimeScale):
//
//   - Admission: at most MaxRunning requests are served at once; up to
//     QueueLimit more wait for a slot (streams get their headers at once
//     and, with KeepAlive set, ": keep-alive" comments while waiting);
//     beyond that the answer is HTTP 429.
//   - A chat stream sends a role-only chunk at once (content ""), as vLLM
//     and OpenAI do.
//   - Prefill: PrefillBase + PrefillPerToken × prompt tokens, where a
//     prompt token is a whitespace-separated word of the prompt or of the
//     messages' text.
//   - Decode: each output token takes DecodeBase + DecodePerRunning × (the
//     number of other requests being served at that moment), so
//     per-token time grows with concurrency. Tokens are sent in chunks of
//     1..MaxChunkTokens tokens (uniform); before a chunk the stream stalls
//     for Stall extra with probability StallProb. With StepJitter j > 0,
//     each token's time is multiplied by a uniform factor in [1 − j, 1 + j]
//     drawn from JitterSeed alone.
//   - Output length: max_tokens (or max_completion_tokens, default
//     DefaultMaxTokens) when ignore_eos is set or min_tokens ≥ max_tokens;
//     otherwise uniform in [max(1, min_tokens), max_tokens].
//   - With probability ErrorRate, drawn per request from Seed and the
//     request's number (not per prompt), a streamed request fails at a random chunk
//     with an in-band error event, {"error":{...}}, inside the 200 stream
//     and no [DONE].
//   - The first ReasoningTokens of a chat answer are sent as
//     delta.reasoning_content.
//   - The stream ends with a finish_reason chunk, a usage-only chunk when
//     stream_options.include_usage is set (usage on every chunk too with
//     continuous_usage_stats), and "data: [DONE]".
//
// Every random choice of a request (output length, chunk sizes, stalls,
// error) comes from a generator seeded with Config.Seed and the FNV-1a hash
// of the prompt text, so the same prompt gets the same answer shape.
// Timing itself depends on the Go scheduler and on the load, and, with
// StepJitter, on JitterSeed: two servers of one Seed and two JitterSeeds
// give the same answers timed as two runs of a live server are.
package simulator
