package ingest

import "github.com/benchseal/benchseal/schema"

// A Registration is what one importer package declares (as its exported
// variable Registration) to be listed in importer's registry; that list,
// importer/registry_gen.go, is generated from the packages that declare
// one (go test ./importer -run TestRegistryInSync -update).
type Registration struct {
	// Peer is the tool's registration, which its replay definitions
	// point to as well.
	Peer *schema.PeerTool
	// Files describes the files the importer takes (import --help).
	Files string
	// Format says what the tool's files look like; every import checks
	// its files against every tool's, so that a file of another tool is
	// refused naming the import to use (importer.LooksLike).
	Format Format
	// Stream passes each record on as it is built; nil for a tool whose
	// input cannot be read element by element, which sets Parse.
	Stream StreamFunc
	// Parse builds every record in memory; set only without Stream.
	Parse func([]File) (*Result, error)
}
