// Command benchseal packages LLM-inference benchmark runs into signed,
// content-addressed evidence bundles, verifies them, and recomputes every
// published metric from the raw timestamps. The commands live in
// internal/cli; this package only hands them the process's arguments and
// standard streams and exits with their code.
package main
