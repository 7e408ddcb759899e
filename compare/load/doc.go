// Package load reads the inputs of a comparison: a bundle through the
// verifier (pinned keys, or integrity only when unsigned input is
// explicitly allowed) and then the replay engine over the same opened
// bundle, or a run directory after validation. Each input carries how far
// it was checked.
package load
