// Package schematest holds test helpers for code that decodes records
// with schema.RecordReader.NextInto, whose pointer and slice fields alias
// buffers the reader reuses: Distinct builds records whose every such
// field differs from one record to the next, so a consumer that keeps a
// record without copying one of them is caught by comparing what it kept
// with what was written.
package schematest
