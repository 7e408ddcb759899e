// Package stats holds the statistics benchseal's compare and replay use:
// the two-sided Mann–Whitney U test (exact distribution for small samples,
// with or without ties; normal approximation with tie and continuity
// correction above), the Holm–Bonferroni correction for many comparisons,
// and the one least-squares line with its slope's Student-t interval
// (LinearFit) that overload trends and server gauge slopes use, and the
// nearest-rank percentile rule (NearestRank) capture and replay share, and
// the equivalence test of a reproduction's ratio to its original
// (EquivalenceRatio: two one-sided tests on the Hodges–Lehmann shift of the
// logs, with ShiftCI's exact interval). Medians
// and their distribution-free intervals are replay.SummarizeValues; this
// package does not compute them a second time.
package stats
