// Package readme holds no code: its tests run every runnable sh block of
// the repository's README.md and of the docs pages that continue its tour
// (docs/trust.md, docs/sharding.md), twice, and the first block of
// docs/bundles.md, as written, so the tour stays runnable.
package readme
