package replay

import (
	"math/big"
	"runtime"
	"testing"
)

// The early-stopping rule decides exactly as the sum term by term, on
// both sides of its boundary.
func TestEarlyStopPassesEqualsTheSum(t *testing.T) {
	for n := int64(1); n <= 1500; n += 7 {
		for over := int64(0); over <= 20; over++ {
			if got, want := earlyStopPasses(n, over), earlyStopPassesByTerms(n, over); got != want {
				t.Fatalf("earlyStopPasses(%d, %d) = %v, want %v", n, over, got, want)
			}
		}
	}
	for _, over := range []int64{0, 1, 2, 3, 10, 40} {
		m := EarlyStopMinQueries(over)
		if earlyStopPassesByTerms(m-1, over) || !earlyStopPassesByTerms(m, over) {
			t.Errorf("EarlyStopMinQueries(%d) = %d is not the boundary of the sum", over, m)
		}
	}
}

// 32,000 queries with many over the target: the rule costs a few MB, not
// a fresh power per term (~10 s and GBs when every term was raised anew).
func TestEarlyStopIsQuadraticAtMost(t *testing.T) {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	for _, over := range []int64{300, 319, 5000, 31999} {
		earlyStopPasses(32000, over)
	}
	EarlyStopMinQueries(300)
	runtime.ReadMemStats(&b)
	if alloc := b.TotalAlloc - a.TotalAlloc; alloc > 256<<20 {
		t.Errorf("early stopping at 32,000 queries allocated %d MiB", alloc>>20)
	}
}

// earlyStopPassesByTerms is the early-stopping rule term by term, each
// with a power of its own: the reference earlyStopPasses is checked
// against. It reports whether n queries with t over the latency target
// pass LoadGen's server early-stopping rule at p = 99/100, c = 99/100,
// d = 0: P[Bin(n, 1/100) ≤ t] < 1/100, exactly. With q = 1/100:
// Σ_{i≤t} C(n,i)·99^{n−i} < 100^{n−1}.
func earlyStopPassesByTerms(n, t int64) bool {
	if n <= t {
		return false
	}
	// Σ_{i≤t} C(n,i)·99^{t−i}, then times 99^{n−t}.
	sum := new(big.Int)
	c := big.NewInt(1) // C(n,0)
	p99 := big.NewInt(99)
	for i := int64(0); i <= t; i++ {
		if i > 0 {
			c.Mul(c, big.NewInt(n-i+1))
			c.Quo(c, big.NewInt(i))
		}
		term := new(big.Int).Exp(p99, big.NewInt(t-i), nil)
		sum.Add(sum, term.Mul(term, c))
	}
	sum.Mul(sum, new(big.Int).Exp(p99, big.NewInt(n-t), nil))
	return sum.Cmp(new(big.Int).Exp(big.NewInt(100), big.NewInt(n-1), nil)) < 0
}
