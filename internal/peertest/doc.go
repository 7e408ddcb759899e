// Package peertest is the contract every peer tool's importer package
// tests itself against: Run imports the tool's real fixture and a failed-
// first edit of it, then checks the verify round trip, the canonical
// numbers against the tool's own and the provenance block. It lives here,
// not under importer/, because it packs and verifies (importer may not
// import artifact or verify; internal/archtest), and only tests import it.
package peertest
