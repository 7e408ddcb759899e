// Package registrytest is an in-memory OCI distribution server on
// loopback for tests of code that pushes and pulls bundles, with hooks to
// alter what it stores as a hostile or corrupt registry would.
package registrytest
