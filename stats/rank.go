package stats

import "math/big"

// NearestRank returns the 1-based rank of the a/b quantile of n sorted
// samples under the nearest-rank definition, max(1, ⌈a·n/b⌉): the
// percentile is sorted[NearestRank(n, a, b) − 1], always a sample, never
// an interpolation (docs/metrics.md, "percentiles"). It is computed exactly,
// without overflow, for any n ≥ 0 and 0 ≤ a ≤ b, b > 0. Capture and
// replay both use it, so a percentile means one thing in benchseal.
func NearestRank(n, a, b int64) int64 {
	num := new(big.Int).Mul(big.NewInt(a), big.NewInt(n))
	num.Add(num, big.NewInt(b-1))
	num.Quo(num, big.NewInt(b))
	return max(1, num.Int64())
}
