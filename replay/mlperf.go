package replay

import (
	"fmt"
	"math/big"

	"github.com/benchseal/benchseal/schema"
)

// MLPerfLimits are the MLPerf LoadGen server-scenario constraints.
type MLPerfLimits struct {
	TTFTNS, TPOTNS int64
	// MinDurationNS defaults to 600 s, MinQueries to 100.
	MinDurationNS int64
	MinQueries    int64
}

// MLPerfCheck is the outcome of the MLPerf server validity check of one
// point and repeat (LoadGen results.cc): p99 by index ⌊n·0.99⌋ of TTFT from
// the scheduled time and of TPOT truncated to integer ns, each ≤ its limit;
// early stopping on both; minimum duration and query count; no answer of
// fewer than two tokens.
//
// In LoadGen every issued query is completed and enters both latency
// arrays and the overlatency counts (github.com/mlcommons/inference,
// loadgen/: the percentiles and counts are over every issued sample); a
// query that failed (error, timeout, cancelled, rejected, an ok answer without
// content, or a declared request never sent) has no latency within any
// limit, so it enters them as +∞: over both limits, and the p99 when the
// index ⌊n·0.99⌋ falls among the failures. A failure also completes with
// fewer than two tokens, which LoadGen logs as an error (logging.cc
// "Number of tokens need to be greater than 1"): the run is invalid, with
// the reason "N queries failed".
type MLPerfCheck struct {
	Valid bool
	// TTFTP99NS and TPOTP99NS are null when the p99 is a failed query
	// (+∞; TTFTP99Failed, TPOTP99Failed) or there is no query.
	TTFTP99NS, TPOTP99NS         Value
	TTFTP99Failed, TPOTP99Failed bool
	// TTFTOver and TPOTOver count queries strictly over the limit, failed
	// queries included.
	TTFTOver, TPOTOver int64
	// Failed counts the issued queries without a latency (+∞).
	Failed int64
	// TTFTMinQueries and TPOTMinQueries are the early-stopping minimum
	// query counts for those overlatency counts (Null when not computed).
	TTFTMinQueries, TPOTMinQueries Value
	Queries                        int64
	DurationNS                     Value
	Reasons                        []string
}

// Field returns a check field by key.
func (c *MLPerfCheck) Field(key string) (Value, bool) {
	switch key {
	case "valid":
		if c.Valid {
			return Int(1), true
		}
		return Int(0), true
	case "ttft_p99_ns":
		return c.TTFTP99NS, true
	case "tpot_p99_ns":
		return c.TPOTP99NS, true
	case "ttft_over":
		return Int(c.TTFTOver), true
	case "tpot_over":
		return Int(c.TPOTOver), true
	case "ttft_min_queries":
		return c.TTFTMinQueries, true
	case "tpot_min_queries":
		return c.TPOTMinQueries, true
	case "queries":
		return Int(c.Queries), true
	case "duration_ns":
		return c.DurationNS, true
	}
	return Null, false
}

// earlyStopPasses reports whether n queries with t over the latency target
// pass LoadGen's server early-stopping rule at p = 99/100, c = 99/100,
// d = 0: P[Bin(n, 1/100) ≤ t] < 1/100, exactly. With q = 1/100:
// Σ_{i≤t} C(n,i)·99^{n−i} < 100^{n−1}.
//
// A median of Bin(n, q) is at most ⌈nq⌉ (Kaas and Buhrman, "Mean, median
// and mode in binomial distributions", Statistica Neerlandica 1980), so
// P[Bin ≤ t] ≥ 1/2 from t ≥ ⌈n/100⌉ on: only t < n/100 is summed, each
// term from the one before by one product and one exact quotient of small
// numbers, O(t²) word operations in all (not a power per term).
func earlyStopPasses(n, t int64) bool {
	if n <= t || t >= (n+99)/100 {
		return false
	}
	// Σ_{i≤t} C(n,i)·99^{t−i}, then times 99^{n−t}. Term i is term i−1
	// × (n−i+1)/(99·i), exactly: C(n,i)·i = C(n,i−1)·(n−i+1).
	term := new(big.Int).Exp(big.NewInt(99), big.NewInt(t), nil)
	sum := new(big.Int).Set(term)
	var f, d big.Int
	for i := int64(1); i <= t; i++ {
		term.Mul(term, f.SetInt64(n-i+1))
		term.Quo(term, d.SetInt64(99*i))
		sum.Add(sum, term)
	}
	sum.Mul(sum, new(big.Int).Exp(big.NewInt(99), big.NewInt(n-t), nil))
	return sum.Cmp(new(big.Int).Exp(big.NewInt(100), big.NewInt(n-1), nil)) < 0
}

// EarlyStopMinQueries returns the smallest total query count h+t that
// passes the server early-stopping rule with t overlatency queries
// (459, 662, 838, 1001 for t = 0..3).
func EarlyStopMinQueries(t int64) int64 {
	lo, hi := t+1, t+2
	for !earlyStopPasses(hi, t) {
		lo, hi = hi, hi*2
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if earlyStopPasses(mid, t) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// mlperfP99 returns sorted[⌊99·n/100⌋] (LoadGen's index, clamped).
func mlperfIndex(n, num, den int64) int64 {
	i := new(big.Int).Mul(big.NewInt(n), big.NewInt(num))
	i.Quo(i, big.NewInt(den))
	return min(i.Int64(), n-1)
}

func (g *group) mlperfCheck(k groupKey, lim *MLPerfLimits) *MLPerfCheck {
	c := &MLPerfCheck{Valid: true, TTFTP99NS: Null, TPOTP99NS: Null, TTFTMinQueries: Null, TPOTMinQueries: Null, DurationNS: Null}
	minDur := lim.MinDurationNS
	if minDur == 0 {
		minDur = 600e9
	}
	minQ := lim.MinQueries
	if minQ == 0 {
		minQ = 100
	}
	c.Queries = g.counts.Declared()
	fail := func(why string) { c.Valid = false; c.Reasons = append(c.Reasons, why) }
	ttft := &g.ttftS
	if ttft.n() == 0 {
		ttft = &g.ttft
		if g.ttft.n() > 0 {
			c.Reasons = append(c.Reasons, "no scheduled times: TTFT measured from the actual send")
		}
	}
	// Every issued query without content failed: +∞ in both arrays.
	c.Failed = c.Queries - (g.counts.OK - g.counts.OKNoContent)
	if c.Failed > 0 {
		fail(fmt.Sprintf("%d of %d queries failed (no latency: +∞ in the p99 and the overlatency counts; LoadGen logs a query completed without two tokens as an error)", c.Failed, c.Queries))
	}
	check := func(name string, s *intSamples, limit int64, p99 *Value, p99Failed *bool, over *int64, minq *Value) {
		n := s.n() + c.Failed
		if n == 0 {
			fail(name + ": no samples")
			return
		}
		if i := mlperfIndex(n, 99, 100); i < s.n() {
			v := s.ranks([]int64{i + 1})[0]
			*p99 = Int(v)
			if v > limit {
				fail(name + " p99 over the limit")
			}
		} else {
			*p99Failed = true
			fail(name + " p99 is a failed query (+∞): over the limit")
		}
		*over = c.Failed
		s.each(func(x int64) {
			if x > limit {
				*over++
			}
		})
		if *over <= 64 {
			*minq = Int(EarlyStopMinQueries(*over))
		}
		if !earlyStopPasses(c.Queries, *over) {
			fail(name + ": early stopping needs more queries")
		}
	}
	check(schema.SLOTTFT, ttft, lim.TTFTNS, &c.TTFTP99NS, &c.TTFTP99Failed, &c.TTFTOver, &c.TTFTMinQueries)
	check(schema.SLOTPOT, &g.mlperfTPOT, lim.TPOTNS, &c.TPOTP99NS, &c.TPOTP99Failed, &c.TPOTOver, &c.TPOTMinQueries)
	if g.mlperfOneTk > 0 {
		fail("answers of fewer than two tokens (LoadGen: Number of tokens need to be greater than 1)")
	}
	var dur int64
	if g.haveSch {
		dur = g.maxSch - g.minSch
	} else if g.haveSent {
		dur, _, _, _ = g.measuredWindow(k)
	}
	c.DurationNS = Int(dur)
	if dur < minDur {
		fail("duration below the minimum")
	}
	if c.Queries < minQ {
		fail("fewer queries than the minimum")
	}
	return c
}
