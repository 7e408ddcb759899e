// Package release builds benchseal's release evidence, byte for byte
// reproducibly: deterministic tar.gz and zip archives (fixed mtimes,
// owners and order), a SHA256SUMS file, and an in-toto statement with an
// SLSA provenance v1 predicate over the release files, which artifact's
// signing code signs. scripts/release.sh (make release) drives it
// through the releasetool command.
package release
