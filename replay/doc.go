// Package replay is benchseal's deterministic metric engine: it recomputes
// every published metric of a run from the raw per-request records, under
// benchseal's canonical definitions (exact integer and rational arithmetic,
// nearest-rank percentiles, population standard deviation) or under the
// definitions of a peer tool (AIPerf, vLLM, SGLang, GuideLLM, LLMPerf,
// MLPerf LoadGen, GenAI-Perf, inference-perf), and checks claimed numbers
// against the recomputation.
//
// The engine streams records, reads no clock and no environment, and gives
// byte-identical results on any machine. Numbers are carried as Values
// (exact rationals, or float64 for peer definitions that compute in
// floating point, or undefined); package report formats them.
package replay
