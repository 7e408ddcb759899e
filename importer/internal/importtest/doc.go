// Package importtest holds test helpers shared by the importers: loading
// the fixtures under the repository's testdata/fixtures and checking that
// bad input fails cleanly.
package importtest
