// Package schema defines benchseal's run directory format v1: the frozen run
// manifest, the per-request records, the publisher's claims, their published
// JSON Schemas, and the decoders and validators that check them.
//
// schema is the leaf of the module: every other package (artifact, verify,
// replay, importers and the load client) speaks in these types.
package schema
