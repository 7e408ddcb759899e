// Package compare turns several replayed runs into a buyer's answer: a
// comparability guard that says, check by check, whether the runs measure
// the same thing; a comparison of every matched load point and metric
// across repeats (medians, distribution-free intervals, relative change,
// Mann–Whitney U test, Holm–Bonferroni on request); and a decision under an
// objective (max goodput, min cost per good token, max capacity) that names
// a winner only when the difference is significant.
//
// The package computes; it opens no file, verifies no signature and
// formats no number. Callers pass each run's manifest, replay result and
// verification status (package compare/load reads bundles through the
// verifier); package report renders the results.
package compare
