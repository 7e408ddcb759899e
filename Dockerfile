# The benchseal container image, for the Kubernetes Job of 'benchseal k8s job'
# (README "Beyond one machine"). Two stages: a pinned Go toolchain builds a
# static binary (CGO_ENABLED=0, -trimpath), and distroless/static (no shell,
# no libc, user nonroot 65532) runs it. internal/dockerfile's tests check this
# file (make test) and run its build command (make dockerfile-check).
#   docker build -t benchseal:dev .
#   docker build --build-arg VERSION=v0.1.0 -t registry.example/benchseal:v0.1.0 .
#
# Pinning: both base images are pinned by tag only, not by digest. A tag can
# be moved by its publisher, so the same Dockerfile may build on different
# base bytes later. The digests could not be obtained where this file was
# written (no registry access), and a digest made up or copied unchecked
# would be worse than none. For an image behind signed benchmarks, pin both
# by digest: append @sha256:<digest> to each FROM (e.g. from
# `crane digest gcr.io/distroless/static-debian12:nonroot`); the
# internal/dockerfile test accepts that form. Give the built image to
# 'k8s job --image' by digest too, so every pod runs exactly those bytes.
ARG GO_VERSION=1.26.8

FROM docker.io/library/golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0-dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/benchseal/benchseal/cmd/benchseal/internal/cli.Version=${VERSION}" -o /out/benchseal ./cmd/benchseal

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/benchseal /usr/local/bin/benchseal
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/benchseal"]
