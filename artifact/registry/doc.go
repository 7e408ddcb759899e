// Package registry pushes benchseal bundles to OCI registries and pulls
// them back into bundles that verify exactly like the original.
//
// Push uploads the run manifest, its blobs and every signature referrer
// (subject = run manifest); on registries without the OCI referrers API
// (such as distribution v3.1.2) oras-go maintains the referrers tag
// "sha256-<hex>" instead. Pull resolves a reference, fetches the run
// manifest, its blobs and the Sigstore-bundle referrers whose subject is
// the run manifest, checks every size against artifact's limits before
// reading and every digest while the bytes stream, and writes the bundle
// with artifact's own writer, atomically, refusing an existing output.
//
// The package never reads the environment or configuration files:
// credentials come in through Options.
package registry
