// Package artifact writes and reads benchseal bundles: deterministic OCI
// image layouts (as a directory or a reproducible tar) holding one run, its
// keys, and Sigstore signatures stored as OCI referrers.
//
// A bundle opened with Open implements schema.Run: its records stream from
// the zstd record shards in a defined order, with every digest checked while
// the bytes stream. Open never trusts the bundle: every size is capped by the
// limits in limits.go and every descriptor is checked before use. Signature
// verification is verify's job; this package only produces and parses them.
package artifact
