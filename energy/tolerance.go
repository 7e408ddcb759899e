// How far an energy counter may be from its own power gauges.

package energy

import (
	"fmt"
	"math/big"

	"github.com/benchseal/benchseal/internal/digits"
)

// CounterTolerancePercent is how far, in percent of the power read, an
// energy counter may rise below or above what its device's own power
// gauges imply and pass the counter-against-gauge check
// (artifact.GPUGaugeTolerance is this over 100; docs/energy.md says why
// 10 %). A publisher who holds the signing key can therefore scale a
// counter by any factor in [0.9, 1.1] and the run still verifies: an
// energy difference within that is the signer's word, not the evidence's.
const CounterTolerancePercent = 10

// CounterToleranceNote says what an energy difference within
// CounterTolerancePercent rests on.
var CounterToleranceNote = fmt.Sprintf("within the ×%s–×%s the gauges check: the signer's word",
	digits.Places(float64(100-CounterTolerancePercent)/100, 1), digits.Places(float64(100+CounterTolerancePercent)/100, 1))

// BeyondCounterTolerance reports whether energy less is below more by
// more than counters scaled within CounterTolerancePercent on either
// side can make: less ÷ (1 − t) < more ÷ (1 + t), the most the first
// may have been scaled down still below the most the second may have been
// scaled up (each run may have its own signer). Nil or negative values
// are never beyond it.
func BeyondCounterTolerance(less, more *big.Rat) bool {
	if less == nil || more == nil || less.Sign() < 0 || more.Sign() <= 0 {
		return false
	}
	l := new(big.Rat).Mul(less, big.NewRat(100+CounterTolerancePercent, 1))
	m := new(big.Rat).Mul(more, big.NewRat(100-CounterTolerancePercent, 1))
	return l.Cmp(m) < 0
}
