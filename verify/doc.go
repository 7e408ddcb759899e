// Package verify checks benchseal bundles fail-closed: container safety,
// content digests, media types, signatures by pinned keys only, the signed
// statement, uncompressed digests, schema and semantic validity of the run,
// and, through a ClaimChecker, that every claimed number recomputes.
package verify
