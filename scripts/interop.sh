#!/usr/bin/env bash
# Proves, offline, that benchseal bundles interoperate with cosign:
#   A. cosign verifies benchseal's detached Sigstore bundle (by manifest
#      digest and by layer blob), and rejects it after a one-byte change;
#      a co-signer's detached bundle (BUNDLE.<key id>.sigstore.json) leaves
#      the publisher's in place, and cosign verifies both;
#   B. benchseal verifies a statement that cosign signed (attest-blob,
#      --tlog-upload=false), and rejects a tampered one;
#   C. a key made by `cosign generate-key-pair` signs with benchseal, and
#      both benchseal and cosign verify that signature;
#   D. cosign verifies a benchseal reviewer attestation (SLSA VSA v1) and
#      benchseal requires one that cosign signed;
#   E. make release's evidence (one target, linux/amd64, to keep the time):
#      cosign verifies the SLSA provenance v1 that benchseal's signing code
#      signed over the archive and its CycloneDX SBOM, SHA256SUMS checks,
#      and the released binary names its revision and own digest.
# Usage: scripts/interop.sh COSIGN_VERSION   (make interop passes v2.6.5)
set -euo pipefail
COSIGN_VERSION=${1:-v2.6.5}
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/bin/tools
BENCHSEAL=$ROOT/bin/benchseal
mkdir -p "$TOOLS"

# Keep Go's caches where they are, then give cosign a throwaway HOME.
export GOMODCACHE="$(go env GOMODCACHE)" GOCACHE="$(go env GOCACHE)" GOPATH="$(go env GOPATH)"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export HOME="$WORK/home"
mkdir -p "$HOME"

go build -trimpath -o "$BENCHSEAL" ./cmd/benchseal
COSIGN=$TOOLS/cosign
if ! "$COSIGN" version 2>/dev/null | grep -q "GitVersion:[[:space:]]*${COSIGN_VERSION}\$"; then
  echo "== installing cosign ${COSIGN_VERSION} into ${TOOLS}"
  GOBIN="$TOOLS" GOFLAGS=-buildvcs=false go install "github.com/sigstore/cosign/v2/cmd/cosign@${COSIGN_VERSION}"
fi
"$COSIGN" version 2>/dev/null | grep GitVersion

cd "$WORK"
PT=https://benchseal.dev/attestation/run/v1
echo '{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}' > tr.json
VERIFY_ATT=("$COSIGN" verify-blob-attestation --insecure-ignore-tlog --trusted-root tr.json --new-bundle-format --type "$PT")

failures=0
passes=0
pass() { echo "PASS  $*"; passes=$((passes + 1)); }
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }
expect_ok() { local what=$1; shift; if "$@" >"$WORK/out" 2>&1; then pass "$what"; else fail "$what (exit $?)"; cat "$WORK/out"; fi; }
expect_fail() { local what=$1; shift; if "$@" >"$WORK/out" 2>&1; then fail "$what (accepted)"; cat "$WORK/out"; else pass "$what (rejected, exit $?)"; fi; }

# flip_byte FILE OFFSET: replace the byte at OFFSET by a different
# base64/hex-safe character.
flip_byte() {
  local f=$1 off=$2 c
  c=$(dd if="$f" bs=1 skip="$off" count=1 2>/dev/null)
  if [ "$c" = "A" ]; then c=B; else c=A; fi
  printf '%s' "$c" | dd of="$f" bs=1 seek="$off" conv=notrunc 2>/dev/null
}

export BENCHSEAL_PASSWORD=interop-password
"$BENCHSEAL" synth --out run --requests 200 --points 2,8 --repeats 2 --items 20 >/dev/null
"$BENCHSEAL" keygen --out bs >/dev/null
"$BENCHSEAL" pack run --out bundle --key bs.key >/dev/null
MANIFEST=$("$BENCHSEAL" inspect bundle | awk '/^manifest/{print $2}')
HEX=${MANIFEST#sha256:}
# A layer blob (every layer is a subject): the manifest.json layer.
LAYER=$("$BENCHSEAL" inspect bundle | awk '/^  manifest.json/{getline; print $1}')
LAYER=${LAYER#sha256:}
echo "== run manifest $MANIFEST"

echo "== A. cosign verifies benchseal's detached bundle"
expect_ok "cosign verify-blob-attestation --digest <manifest>" \
  "${VERIFY_ATT[@]}" --bundle bundle.sigstore.json --key bs.pub --digest "$HEX" --digestAlg sha256
expect_ok "cosign verify-blob-attestation <layer blob>" \
  "${VERIFY_ATT[@]}" --bundle bundle.sigstore.json --key bs.pub "bundle/blobs/sha256/$LAYER"
cp bundle.sigstore.json tampered.sigstore.json
off=$(grep -bo '"payload": *"' tampered.sigstore.json | head -n1 | cut -d: -f1)
flip_byte tampered.sigstore.json $((off + 40))
expect_fail "cosign, one byte of the signed payload changed" \
  "${VERIFY_ATT[@]}" --bundle tampered.sigstore.json --key bs.pub --digest "$HEX" --digestAlg sha256
cp bundle.sigstore.json tampered2.sigstore.json
off=$(grep -bo '"sig": *"' tampered2.sigstore.json | head -n1 | cut -d: -f1)
flip_byte tampered2.sigstore.json $((off + 20))
expect_fail "cosign, one byte of the signature changed" \
  "${VERIFY_ATT[@]}" --bundle tampered2.sigstore.json --key bs.pub --digest "$HEX" --digestAlg sha256
BAD=$(printf '%s' "$HEX" | sed 's/^./0/'); [ "$BAD" = "$HEX" ] && BAD=$(printf '%s' "$HEX" | sed 's/^./1/')
expect_fail "cosign, another digest" \
  "${VERIFY_ATT[@]}" --bundle bundle.sigstore.json --key bs.pub --digest "$BAD" --digestAlg sha256
cp "bundle/blobs/sha256/$LAYER" layer.bin
flip_byte layer.bin 1
expect_fail "cosign, one byte of the layer blob changed" \
  "${VERIFY_ATT[@]}" --bundle bundle.sigstore.json --key bs.pub layer.bin
expect_fail "cosign, wrong predicate type" \
  "$COSIGN" verify-blob-attestation --insecure-ignore-tlog --trusted-root tr.json --new-bundle-format \
  --type https://example.com/other/v1 --bundle bundle.sigstore.json --key bs.pub --digest "$HEX" --digestAlg sha256
# A co-signer's detached bundle gets its own name: the publisher's stays.
cp -a bundle cobundle
cp bundle.sigstore.json cobundle.sigstore.json
"$BENCHSEAL" keygen --out cosigner >/dev/null
expect_ok "benchseal sign --key cosigner.key (a second signer)" "$BENCHSEAL" sign cobundle --key cosigner.key
CODETACHED=$(awk '/^  detached/{print $2}' "$WORK/out")
expect_ok "cosign verifies the publisher's detached bundle after the co-signature" \
  "${VERIFY_ATT[@]}" --bundle cobundle.sigstore.json --key bs.pub --digest "$HEX" --digestAlg sha256
expect_ok "cosign verifies the co-signer's detached bundle ($CODETACHED)" \
  "${VERIFY_ATT[@]}" --bundle "$CODETACHED" --key cosigner.pub --digest "$HEX" --digestAlg sha256

echo "== B. benchseal verifies a statement cosign signed"
COSIGN_PASSWORD= "$COSIGN" generate-key-pair --output-key-prefix cos >/dev/null 2>&1
"$BENCHSEAL" inspect bundle --statement > statement.json
expect_ok "cosign attest-blob --tlog-upload=false" \
  env COSIGN_PASSWORD= "$COSIGN" attest-blob --key cos.key --statement statement.json --new-bundle-format \
  --bundle cosign.sigstore.json --tlog-upload=false --yes
expect_ok "benchseal verify --key cos.pub --signature cosign.sigstore.json" \
  "$BENCHSEAL" verify bundle --key cos.pub --signature cosign.sigstore.json
cp cosign.sigstore.json cosign-tampered.sigstore.json
off=$(grep -bo '"sig": *"' cosign-tampered.sigstore.json | head -n1 | cut -d: -f1)
flip_byte cosign-tampered.sigstore.json $((off + 20))
expect_fail "benchseal, one byte of cosign's signature changed" \
  "$BENCHSEAL" verify bundle --key cos.pub --signature cosign-tampered.sigstore.json

echo "== C. a cosign-made key signs with benchseal"
"$BENCHSEAL" pack run --out bundle2.tar >/dev/null
expect_ok "benchseal sign --key cos.key (cosign key, empty password)" \
  env BENCHSEAL_PASSWORD= "$BENCHSEAL" sign bundle2.tar --key cos.key
expect_ok "benchseal verify --key cos.pub" "$BENCHSEAL" verify bundle2.tar --key cos.pub
HEX2=$("$BENCHSEAL" inspect bundle2.tar | awk '/^manifest/{print $2}'); HEX2=${HEX2#sha256:}
expect_ok "cosign verifies the signature benchseal made with the cosign key" \
  "${VERIFY_ATT[@]}" --bundle bundle2.tar.sigstore.json --key cos.pub --digest "$HEX2" --digestAlg sha256
expect_fail "benchseal verify with the wrong key" "$BENCHSEAL" verify bundle2.tar --key bs.pub
expect_ok "cosign signs with a benchseal-made key (attest-blob)" \
  env COSIGN_PASSWORD=interop-password "$COSIGN" attest-blob --key bs.key --statement statement.json --new-bundle-format \
  --bundle bs-by-cosign.sigstore.json --tlog-upload=false --yes
expect_ok "benchseal verifies it" "$BENCHSEAL" verify bundle --key bs.pub --signature bs-by-cosign.sigstore.json

echo "== D. reviewer attestations (SLSA verification summary v1)"
VSA=https://slsa.dev/verification_summary/v1
"$BENCHSEAL" keygen --out rev >/dev/null
expect_ok "benchseal attest --key rev.key (verifies and recomputes first)" \
  "$BENCHSEAL" attest bundle --key rev.key --publisher-key bs.pub
expect_ok "cosign verify-blob-attestation --type $VSA" \
  "$COSIGN" verify-blob-attestation --insecure-ignore-tlog --trusted-root tr.json --new-bundle-format \
  --type "$VSA" --bundle bundle.attestation.sigstore.json --key rev.pub --digest "$HEX" --digestAlg sha256
expect_fail "cosign, the attestation checked against the publisher key" \
  "$COSIGN" verify-blob-attestation --insecure-ignore-tlog --trusted-root tr.json --new-bundle-format \
  --type "$VSA" --bundle bundle.attestation.sigstore.json --key bs.pub --digest "$HEX" --digestAlg sha256
expect_fail "cosign, the attestation checked as a run signature" \
  "${VERIFY_ATT[@]}" --bundle bundle.attestation.sigstore.json --key rev.pub --digest "$HEX" --digestAlg sha256
expect_ok "benchseal verify --require-attestation rev.pub" \
  "$BENCHSEAL" verify bundle --key bs.pub --require-attestation rev.pub
sed -n 's/.*"payload": *"\([^"]*\)".*/\1/p' bundle.attestation.sigstore.json | base64 -d > vsa.json
expect_ok "cosign attest-blob signs the same VSA with a cosign key" \
  env COSIGN_PASSWORD= "$COSIGN" attest-blob --key cos.key --statement vsa.json --new-bundle-format \
  --bundle cosign-vsa.sigstore.json --tlog-upload=false --yes
expect_ok "benchseal attest --sigstore-bundle (cosign-made attestation)" \
  "$BENCHSEAL" attest bundle --sigstore-bundle cosign-vsa.sigstore.json
expect_ok "benchseal verify --require-attestation cos.pub --require-attestation rev.pub" \
  "$BENCHSEAL" verify bundle --key bs.pub --require-attestation cos.pub --require-attestation rev.pub
expect_fail "benchseal verify --require-attestation of a reviewer who did not attest" \
  "$BENCHSEAL" verify bundle --key bs.pub --require-attestation bs.pub

echo "== E. release evidence (make release, linux/amd64)"
"$BENCHSEAL" keygen --out rel >/dev/null
expect_ok "make release VERSION=v0.0.0 TARGETS=linux/amd64 KEY=rel.key" \
  env VERSION=v0.0.0 DIST="$WORK/dist" TARGETS=linux/amd64 KEY="$WORK/rel.key" bash "$ROOT/scripts/release.sh"
REL=benchseal_v0.0.0_linux_amd64
PROV_BUNDLE=dist/benchseal_v0.0.0.provenance.sigstore.json
SLSA=(--insecure-ignore-tlog --trusted-root tr.json --new-bundle-format --type slsaprovenance1)
expect_ok "sha256sum -c SHA256SUMS" sh -c "cd dist && sha256sum -c SHA256SUMS"
expect_ok "cosign verify-blob-attestation --type slsaprovenance1 <archive>" \
  "$COSIGN" verify-blob-attestation "${SLSA[@]}" --key rel.pub --bundle "$PROV_BUNDLE" "dist/$REL.tar.gz"
expect_ok "cosign verify-blob-attestation --type slsaprovenance1 <SBOM>" \
  "$COSIGN" verify-blob-attestation "${SLSA[@]}" --key rel.pub --bundle "$PROV_BUNDLE" "dist/$REL.cdx.json"
expect_ok "the SBOM is CycloneDX and lists the modules benchseal signs with" \
  sh -c "grep -q '\"bomFormat\": *\"CycloneDX\"' dist/$REL.cdx.json && grep -q 'pkg:golang/github.com/sigstore/sigstore-go@v' dist/$REL.cdx.json"
cp "dist/$REL.tar.gz" tampered.tar.gz
flip_byte tampered.tar.gz 100
expect_fail "cosign, one byte of the archive changed" \
  "$COSIGN" verify-blob-attestation "${SLSA[@]}" --key rel.pub --bundle "$PROV_BUNDLE" tampered.tar.gz
expect_fail "cosign, the provenance checked against another key" \
  "$COSIGN" verify-blob-attestation "${SLSA[@]}" --key bs.pub --bundle "$PROV_BUNDLE" "dist/$REL.tar.gz"
expect_fail "cosign, the provenance checked as a run signature" \
  "${VERIFY_ATT[@]}" --key rel.pub --bundle "$PROV_BUNDLE" "dist/$REL.tar.gz"
REV=$(git -C "$ROOT" rev-parse HEAD)
tar -xzf "dist/$REL.tar.gz"
EXE_SUM=$(sha256sum "$REL/benchseal" | cut -d' ' -f1)
expect_ok "the released binary names revision $REV and its own sha256" \
  sh -c "'$REL/benchseal' version | grep -qx '  revision $REV (git, .*), clean tree' && '$REL/benchseal' version | grep -qx '  executable sha256:$EXE_SUM'"
expect_ok "the provenance names the commit and the command" \
  sh -c "grep -q '\"gitCommit\": \"$REV\"' dist/benchseal_v0.0.0.provenance.json && grep -q '\"command\": \"make release VERSION=v0.0.0\"' dist/benchseal_v0.0.0.provenance.json"

echo "interop: $passes passed, $failures failed"
[ "$failures" -eq 0 ]
