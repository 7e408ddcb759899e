package replay

import (
	"math/big"
	"reflect"
)

// SameReplay reports whether a replay under a gives the result of one
// under b: the same definitions and version (named or the current one),
// SLO, stall threshold and attainment target (unset: 9/10), and neither
// asks for smooth goodput, a sweep, the MLPerf check or workload items. It
// is conservative: false means only that the replay must be made.
func SameReplay(a, b Options) bool {
	da, errA := lookupDefinition(a.Definitions)
	db, errB := lookupDefinition(b.Definitions)
	if errA != nil || errB != nil || da.Name() != db.Name() {
		return false
	}
	va, vb := a.Version, b.Version
	if va == "" {
		va = CurrentVersion(da.Name())
	}
	if vb == "" {
		vb = CurrentVersion(db.Name())
	}
	if va != vb || a.StallThresholdNS != b.StallThresholdNS {
		return false
	}
	for _, o := range []Options{a, b} {
		if o.Smooth != nil || o.Sweep != nil || o.MLPerf != nil || o.Workload != nil {
			return false
		}
	}
	if (a.SLO == nil) != (b.SLO == nil) || (a.SLO != nil && !reflect.DeepEqual(*a.SLO, *b.SLO)) {
		return false
	}
	return attainmentTarget(a).Cmp(attainmentTarget(b)) == 0
}

// attainmentTarget is o's attainment target, 9/10 when unset.
func attainmentTarget(o Options) *big.Rat {
	if o.AttainmentTarget == nil {
		return big.NewRat(9, 10)
	}
	return o.AttainmentTarget
}
