// Package enginetest holds the end-to-end check against a real inference
// engine, llama.cpp's llama-server (make engine-test): benchseal's client
// and every later step are run against an engine nobody here wrote, and
// each request is cross-checked with the engine's own numbers. It has no
// code outside its test, which skips unless BENCHSEAL_LLAMA_SERVER and
// BENCHSEAL_LLAMA_MODEL name the binary and model scripts/engine.sh
// builds.
package enginetest
