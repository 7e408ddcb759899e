// Package artifacttest provides in-process test keys, small valid runs and
// packed, signed bundles for tests of artifact, verify and the CLI. The keys
// are fixed and public: never use them for anything but tests.
package artifacttest
