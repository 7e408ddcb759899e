#!/usr/bin/env bash
# Builds a benchseal release reproducibly (make release VERSION=vX.Y.Z DIST=dist):
#   1. a clean clone of the committed HEAD (uncommitted changes are not
#      released; go build stamps VCS state only in a real .git directory,
#      which a git worktree lacks), SOURCE_DATE_EPOCH = the commit's time;
#   2. per target (linux, darwin, windows × amd64, arm64): go build with
#      CGO_ENABLED=0 -trimpath -buildvcs=true, -ldflags "-s -w -X ...Version=VERSION";
#   3. deterministic archives (internal/release: fixed mtime, owners 0:0,
#      sorted entries, no gzip name/time): benchseal_V_OS_ARCH.tar.gz (.zip
#      on windows) holding benchseal[.exe] and README.md;
#   4. an SBOM per binary (CycloneDX JSON from cyclonedx-gomod, pinned,
#      `bin` mode: the modules the binary's build info lists);
#   5. SHA256SUMS over archives and SBOMs, and benchseal_V.provenance.json:
#      an in-toto statement, SLSA provenance v1, with those files as subjects;
#   6. with KEY=FILE, the statement signed by benchseal's own signing code
#      (artifact.SignStatement; password BENCHSEAL_PASSWORD) as
#      benchseal_V.provenance.sigstore.json, which
#      cosign verify-blob-attestation --type slsaprovenance1 verifies.
# Nothing reads a clock: the same commit, Go version and tools give the
# same bytes (make release-check builds twice and compares).
# Env: VERSION (required), DIST (default dist), TARGETS (space-separated
# GOOS/GOARCH, default all six), KEY, BUILDER_ID, CYCLONEDX_VERSION, REV
# (the commit, default HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=${VERSION:?VERSION=vX.Y.Z is required}
DIST=${DIST:-dist}
TARGETS=${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
CYCLONEDX_VERSION=${CYCLONEDX_VERSION:-v1.10.0}
BUILDER_ID=${BUILDER_ID:-https://github.com/benchseal/benchseal/blob/main/Makefile#release (local)}
case "$VERSION" in v[0-9]*.[0-9]*.[0-9]*) ;; *) echo "release: VERSION=$VERSION: want vX.Y.Z" >&2; exit 2 ;; esac
case "$DIST" in /*) ;; *) DIST=$ROOT/$DIST ;; esac
unset GOFLAGS GOAMD64 GOARM64 GOEXPERIMENT
export GOTOOLCHAIN=local

TOOLS=$ROOT/bin/tools
CDX=$TOOLS/cyclonedx-gomod
mkdir -p "$TOOLS"
if ! "$CDX" version 2>/dev/null | grep -q "Version:[[:space:]]*${CYCLONEDX_VERSION}\$"; then
  echo "== installing cyclonedx-gomod ${CYCLONEDX_VERSION} into ${TOOLS}"
  GOBIN="$TOOLS" GOFLAGS=-buildvcs=false go install "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@${CYCLONEDX_VERSION}"
fi

# REV: the commit to release (default HEAD; release-check pins both builds to one).
REV=$(git rev-parse "${REV:-HEAD}^{commit}")
if [ -n "$(git status --porcelain)" ]; then
  echo "release: WARNING: the tree has uncommitted changes; the release is built from the commit $REV without them" >&2
fi
REF=$(git describe --tags --exact-match "$REV" 2>/dev/null | sed 's|^|refs/tags/|' || true)
EPOCH=$(git log -1 --format=%ct "$REV")
export SOURCE_DATE_EPOCH=$EPOCH

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/src
git clone --quiet --no-checkout "$ROOT" "$SRC"
git -C "$SRC" -c advice.detachedHead=false checkout --quiet "$REV"

# releasetool from the same commit (so the packer is the released code).
(cd "$SRC" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$WORK/releasetool" ./internal/release/releasetool)

LDFLAGS="-s -w -X github.com/benchseal/benchseal/cmd/benchseal/internal/cli.Version=${VERSION}"
rm -rf "$DIST"
mkdir -p "$DIST"
files=()
for t in $TARGETS; do
  os=${t%/*} arch=${t#*/}
  name=benchseal_${VERSION}_${os}_${arch}
  exe=benchseal; [ "$os" = windows ] && exe=benchseal.exe
  mkdir -p "$WORK/bin/$name"
  echo "== build $t"
  (cd "$SRC" && env CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOAMD64=v1 GOARM64=v8.0 \
    go build -trimpath -buildvcs=true -ldflags "$LDFLAGS" -o "$WORK/bin/$name/$exe" ./cmd/benchseal)
  if [ "$os" = windows ]; then archive=$DIST/$name.zip; else archive=$DIST/$name.tar.gz; fi
  "$WORK/releasetool" archive -out "$archive" -mtime "$EPOCH" \
    "$name/$exe=$WORK/bin/$name/$exe+x" "$name/README.md=$SRC/README.md"
  # The SBOM: the binary's own module list (its build info), no serial
  # number (a random UUID) and no timestamp: the same binary, the same bytes.
  (cd "$SRC" && "$CDX" bin -json -noserial -notimestamp -std -version "$VERSION" -output "$DIST/$name.cdx.json" "$WORK/bin/$name/$exe")
  files+=("$archive" "$DIST/$name.cdx.json")
done

"$WORK/releasetool" sums -out "$DIST/SHA256SUMS" "${files[@]}"
PROV=$DIST/benchseal_${VERSION}.provenance.json
"$WORK/releasetool" provenance -out "$PROV" -version "$VERSION" -revision "$REV" -ref "$REF" \
  -command "make release VERSION=$VERSION" -targets "$(echo $TARGETS | tr ' ' ,)" -go "$(go env GOVERSION)" \
  -epoch "$EPOCH" -ldflags "$LDFLAGS" -builder "$BUILDER_ID" "${files[@]}"
if [ -n "${KEY:-}" ]; then
  "$WORK/releasetool" sign -key "$KEY" -in "$PROV" -out "${PROV%.json}.sigstore.json"
  echo "signed   ${PROV%.json}.sigstore.json"
fi
echo "release $VERSION of $REV (SOURCE_DATE_EPOCH=$EPOCH) in $DIST:"
(cd "$DIST" && cat SHA256SUMS)
