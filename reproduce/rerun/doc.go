// Package rerun holds the rules that tell a reproduction that re-ran a
// bundle's test from one that did not: another run, not the original's
// records re-labelled (CheckAnotherRun, CheckNotACopy), and, when the test
// forces the output length, outputs of that length (CheckForcedLength).
// reproduce.Evaluate applies them to a reproduction run directory and
// verify to a reproduction a bundle carries, so it imports only schema.
package rerun
