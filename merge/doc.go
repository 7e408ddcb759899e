// Package merge joins the shard runs of a sharded capture (capture with
// Options.Shard) into one run directory: it checks that the shards come
// from one plan, seed and manifest, are disjoint and together cover every
// scheduled request, places them on one timeline with the uncertainty
// their clocks state, and writes the run atomically.
package merge
