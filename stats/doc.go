// Package stats holds the significance tests benchseal's compare uses: the
// two-sided Mann–Whitney U test (exact distribution for small samples, with
// or without ties; normal approximation with tie and continuity correction
// above) and the Holm–Bonferroni correction for many comparisons. Medians
// and their distribution-free intervals are replay.SummarizeValues; this
// package does not compute them a second time.
package stats
