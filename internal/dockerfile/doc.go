// Package dockerfile holds no code: its test checks the repository's
// Dockerfile without a container engine (none is assumed on a developer's
// or CI's machine) — the stages, the user the Kubernetes Job runs as, the
// entrypoint — and runs the Dockerfile's own go build command to prove it
// builds a static binary that distroless/static can run.
package dockerfile
