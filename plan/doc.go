// Package plan is the pre-registered test plan: a document that fixes,
// before any request is sent, the workload, the load points, counts,
// warmup, repeats, timeouts, the SLO, the definitions, the boundary and the
// metrics to be claimed; its canonical digest; the in-toto statement a
// publisher signs over it; and the comparison of a finished run with it,
// where every deviation is a named failure.
package plan
