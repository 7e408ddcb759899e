// Package importer turns the output files of other LLM-inference benchmark
// tools (AIPerf, GenAI-Perf, vLLM, SGLang, GuideLLM, LLMPerf, inference-perf
// and MLPerf LoadGen) into benchseal run directories.
//
// Each tool has its own sub-package with a Parse function that reads the
// tool's files into an ingest.Result (manifest, rebuilt records and the
// tool's own summary as claims) without touching the file system; this
// package maps tool names to those parsers and Import writes the result
// atomically as a run directory, each record as it is parsed (see
// ingest.WriteStream).
package importer
