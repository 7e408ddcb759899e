// Package collect gathers the shards of a sharded capture from an OCI
// registry for merging: it pulls each shard bundle REF-shard-I (the names
// the k8s Job pushes to), verifies it with the caller's verifier and
// policy, and unpacks the verified bundle into a run directory. A shard
// that fails verification stops the collection; a shard absent from the
// registry is reported, so the merge can refuse or mark the run
// incomplete.
package collect
