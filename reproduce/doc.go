// Package reproduce re-runs a verified bundle's test against a reviewer's
// endpoint and decides, per claim, whether the reproduction reproduces it:
// BuildTest takes the test from the bundle (load, workload, request
// parameters, SLO, definitions), Run captures it into a normal run
// directory that names the original, and Evaluate tests every claim for
// equivalence (stats.EquivalenceRatio) between the original's repeats and
// the reproduction's, both replayed under the claims' definitions.
package reproduce
