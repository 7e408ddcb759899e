# benchseal — build, test and demo targets. Every tool version is pinned.
GO        ?= go
BIN       := bin/benchseal
FUZZTIME  ?= 30s
STATICCHECK_VERSION := 0.8.2
DEADCODE_VERSION    := 0.52.0
COSIGN_VERSION      := v2.6.5
CYCLONEDX_VERSION   := v1.10.0
DIST                ?= dist
export CGO_ENABLED ?= 0

.PHONY: engine engine-test release release-check install-check arm64-check dockerfile-check k8s-dryrun crashtest screenshot screenshot-check all build test lint vet fmt staticcheck deadcode fuzz bench bench-large demo golden docs check interop registry clean

all: build

build:
	$(GO) build -trimpath -o $(BIN) ./cmd/benchseal

## test: the fast suite CI runs (unit, golden, CLI end-to-end, fuzz seeds).
test: fmt
	$(GO) vet ./...
	$(GO) test -count=1 ./...

## lint: gofmt, go vet, staticcheck and deadcode -test (pinned): no function nothing reaches, even from tests.
lint: fmt vet staticcheck deadcode

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	@PATH="$$($(GO) env GOPATH)/bin:$$PATH"; staticcheck -version 2>/dev/null | grep -qF '($(STATICCHECK_VERSION))' || \
		$(GO) install honnef.co/go/tools/cmd/staticcheck@v$(STATICCHECK_VERSION)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" staticcheck ./...

deadcode:
	@out=$$($(GO) run golang.org/x/tools/cmd/deadcode@v$(DEADCODE_VERSION) -test ./...); if [ -n "$$out" ]; then echo "unreachable code:"; echo "$$out"; exit 1; fi

## fuzz: run every fuzz target for FUZZTIME each.
fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

## bench: the goals at 1M and 5M requests (scripts/bench.d/goals.sh: peak RSS < 256 MiB and CPU within 1.5x of the
## floors measured in the same run, the load beside each figure), every other scripts/bench.d measurement, then the
## performance sections of README.md and docs/performance.md rewritten from the output (bin/bench.txt), then the Go
## benchmarks. Fails when a goal was missed. Not part of make test. BENCH_GOALS_ONLY=1: the goals alone.
bench: build
	@status=0; bash scripts/bench.sh || status=1; \
	python3 scripts/bench-doc.py "$${BENCH_OUT:-bin/bench.txt}" || status=1; \
	if [ "$${BENCH_GOALS_ONLY:-0}" != 1 ]; then $(GO) test -run '^$$' -bench . -benchmem ./... || status=1; fi; \
	if [ $$status != 0 ]; then echo "make bench: FAILED (a goal missed or a measurement failed: see above and bin/bench.txt)"; fi; \
	exit $$status

## bench-large: the goals at 20M requests (about 25 GiB of free disk under $TMPDIR; bin/bench-large.txt; the
## README is not rewritten). Fails when a goal was missed.
bench-large: build
	BENCH_SIZES=20000004 BENCH_GOALS_ONLY=1 BENCH_OUT=bin/bench-large.txt bash scripts/bench.sh

## demo: the main job on built-in defaults, no network.
demo:
	@echo "building $(BIN): on a cold Go build cache this takes minutes; go build -v names each package as it compiles"
	$(GO) build -v -trimpath -o $(BIN) ./cmd/benchseal
	bash scripts/demo.sh

## golden: rewrite golden files after an intended output change.
golden:
	$(GO) test ./... -update

docs: build
	$(BIN) docs --out docs/cli

check: lint test

## ci-full: make test, then the proofs against real components: the HTML pages in Chromium, the Dockerfile's own build, cosign, a registry,
## the same bytes on linux/arm64 (under qemu-user) as on linux/amd64, a release built twice to identical bytes,
## docs/install.md's go install line from a module proxy layout, and a real inference engine.
ci-full: test screenshot-check dockerfile-check interop registry arm64-check release-check install-check engine-test

## arm64-check: no fused multiply-add in benchseal's arm64 code, and replay/compare/decide outputs over
## testdata/compat and two synthetic runs byte-identical on linux/arm64 (qemu-user-static, installed) and amd64.
arm64-check:
	sh scripts/arm64-check.sh

## release: VERSION=vX.Y.Z [DIST=dist] [TARGETS="linux/amd64 ..."] [KEY=release.key]: reproducible archives for
## linux, darwin, windows × amd64, arm64 of the committed HEAD, CycloneDX SBOMs (cyclonedx-gomod, pinned),
## SHA256SUMS and an SLSA provenance statement (signed with KEY by benchseal's own signing code).
release:
	@test -n "$(VERSION)" || { echo "make release: VERSION=vX.Y.Z is required"; exit 2; }
	VERSION=$(VERSION) DIST=$(DIST) CYCLONEDX_VERSION=$(CYCLONEDX_VERSION) bash scripts/release.sh

## release-check: make release twice (the second with an empty Go build cache) and compare every byte.
release-check:
	bash scripts/release-check.sh $(or $(VERSION),v0.0.0)

## install-check: docs/install.md's `go install github.com/benchseal/benchseal/cmd/benchseal@V` run against the
## committed HEAD served at V from a file-based module proxy (no network): the binary names V and its sha256.
install-check:
	sh scripts/install-check.sh $(or $(VERSION),v0.99.0)

## engine: build llama.cpp's llama-server (node-llama-cpp 3.22.1's bundled source, ~30 min on 2 cores, cached in
## bin/tools) and write the tiny random-weight model it serves; BENCHSEAL_LLAMA_SERVER=PATH uses that binary.
engine:
	bash scripts/engine.sh

## engine-test: capture from a real llama-server (closed and open loop, chat, completions, non-streaming),
## validate, pack, verify, replay, and check every request against the engine's usage, timings and /metrics.
engine-test: build
	env $$(bash scripts/engine.sh --print-env) BENCHSEAL_BIN=$(CURDIR)/$(BIN) \
		$(GO) test -count=1 -timeout 30m -v -run '^TestLlamaServer$$' ./internal/enginetest

## interop: prove cosign interoperability offline (installs pinned cosign).
interop: build
	bash scripts/interop.sh $(COSIGN_VERSION)

## registry: push/pull round trip through a loopback distribution v3.1.2 registry.
registry: build
	bash scripts/registry.sh v3.1.2

## dockerfile-check: run the Dockerfile's own go build (-trimpath: the whole module compiled again) and check
## the binary is static and says its version; make test only checks that command against this Makefile's.
dockerfile-check:
	BENCHSEAL_DOCKERFILE_BUILD=1 $(GO) test -count=1 -run '^TestDockerfile' ./internal/dockerfile

## k8s-dryrun: server-side dry run of the rendered Jobs on a loopback kube-apiserver (builds it once; installs etcd).
k8s-dryrun: build dockerfile-check
	bash scripts/k8s-dryrun.sh v1.37.2

## crashtest: SIGKILL pack (dir, tar, --key), sign and capture at random instants (KILLS each, default 20).
crashtest: build
	bash scripts/crashtest.sh $(KILLS)

## screenshot-check: every kind of HTML page (replay, compare and decide of signed bundles, each objective) laid
## out in headless Chromium (installs Debian's) at 1280 px, 1920 px and A4 print; fails naming each element past the
## edge, out of its box, cut off, overlapping or scrolled out of view; full-page PNGs in bin/screenshots.
screenshot-check:
	GO=$(GO) bash scripts/screenshot.sh

## screenshot: the same (the PNGs are its output).
screenshot: screenshot-check

clean:
	rm -rf bin
