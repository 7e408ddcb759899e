// Package sglang imports SGLang bench_serving output written with
// --output-details: a JSON Lines file, one run per line, each with
// summary fields and per-request lists (input_lens, output_lens, ttfts,
// itls, errors; no send times and no per-request latency). Each line
// becomes a load point; its summary becomes claims under SGLang's
// definitions.
package sglang
