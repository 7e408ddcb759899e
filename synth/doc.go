// Package synth generates deterministic synthetic benchmark runs from a
// queueing model of an LLM server, for demos, tests and benchmarks: the same
// options and seed always give the same bytes.
package synth
