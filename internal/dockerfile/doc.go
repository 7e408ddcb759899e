// Package dockerfile holds no code: its tests check the repository's
// Dockerfile without a container engine (none is assumed on a developer's
// or CI's machine) — the stages, the user the Kubernetes Job runs as, the
// entrypoint, and that its go build command builds what the Makefile
// builds, with the same flags. make dockerfile-check also runs that go
// build to prove it makes a static binary that distroless/static can run
// (left out of make test: it compiles the whole module again).
package dockerfile
