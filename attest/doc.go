// Package attest builds and parses reviewer attestations: in-toto
// statements whose subject is a bundle's run manifest and whose predicate is
// an SLSA Verification Summary Attestation v1 carrying benchseal's own
// verified levels, and, for BENCHSEAL_REPRODUCED, the reproduction the
// reviewer ran (benchsealReproduction: the run, the margin, every claim's
// verdict). Verification and signing live in package verify.
package attest
