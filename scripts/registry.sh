#!/usr/bin/env bash
# Round trip through a real OCI registry on 127.0.0.1 (loopback only):
# distribution v3.1.2 (`registry`), which has no referrers API, so this
# exercises the referrers tag schema fallback ("sha256-<hex>").
#   1. synth a run, keygen, pack --key, push;
#   2. pull into a directory and a .tar; verify both with the key; the run
#      manifest digest and index.json equal the original's;
#   3. sign the pulled tar with a second key, push it, pull again: two
#      referrers, verified with both keys;
#   4. the trust chain: a pre-registered plan, the publisher's signature and a
#      reviewer's attestation as three referrers of one run manifest, pushed,
#      pulled and verified with --plan and --require-attestation;
#   5. a blob altered on the registry's disk makes pull fail closed (exit 3,
#      nothing written); pull refuses an existing output;
#   6. a sharded capture as the k8s Job runs it: three shards captured,
#      packed signed and pushed to REF-shard-I; merge --pull verifies and
#      merges them into the run a local merge gives; another signer, a
#      missing shard and a shard under another's tag are refused.
# Usage: scripts/registry.sh [REGISTRY_VERSION]   (make registry; default v3.1.2)
set -euo pipefail
REGISTRY_VERSION=${1:-v3.1.2}
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/bin/tools
BENCHSEAL=$ROOT/bin/benchseal
mkdir -p "$TOOLS"
export GOMODCACHE="$(go env GOMODCACHE)" GOCACHE="$(go env GOCACHE)" GOPATH="$(go env GOPATH)"

WORK=$(mktemp -d)
REG_PID=
cleanup() {
  if [ -n "$REG_PID" ]; then kill "$REG_PID" 2>/dev/null || true; wait "$REG_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
# No Docker config of the caller is read: anonymous access to the loopback registry.
export HOME="$WORK/home" DOCKER_CONFIG="$WORK/home/.docker"
mkdir -p "$HOME"

go build -trimpath -o "$BENCHSEAL" ./cmd/benchseal
REGISTRY=$TOOLS/registry
if ! "$REGISTRY" --version 2>/dev/null | grep -q " ${REGISTRY_VERSION}\(+unknown\)\?\$"; then
  echo "== installing distribution registry ${REGISTRY_VERSION} into ${TOOLS}"
  GOBIN="$TOOLS" GOFLAGS=-buildvcs=false go install "github.com/distribution/distribution/v3/cmd/registry@${REGISTRY_VERSION}"
fi
"$REGISTRY" --version

# start_registry: pick a free loopback port, write the config, start the
# registry and wait until /v2/ answers. Retries with another port if the
# chosen one was taken meanwhile.
start_registry() {
  local try port
  for try in 1 2 3 4 5; do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
    mkdir -p "$WORK/reg/data"
    cat >"$WORK/reg/config.yml" <<YML
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $WORK/reg/data}, delete: {enabled: true}}
http: {addr: 127.0.0.1:$port}
YML
    OTEL_TRACES_EXPORTER=none "$REGISTRY" serve "$WORK/reg/config.yml" >"$WORK/reg/log" 2>&1 &
    REG_PID=$!
    for _ in $(seq 1 100); do
      # -s without -S: nothing printed while the registry starts
      if curl -fs -o /dev/null "http://127.0.0.1:$port/v2/" 2>/dev/null; then PORT=$port; return 0; fi
      kill -0 "$REG_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill "$REG_PID" 2>/dev/null || true; wait "$REG_PID" 2>/dev/null || true; REG_PID=
  done
  echo "could not start the registry"; cat "$WORK/reg/log"; return 1
}
start_registry
HOST=127.0.0.1:$PORT
echo "== registry ${REGISTRY_VERSION} on $HOST (pid $REG_PID)"

failures=0
pass() { echo "PASS  $*"; }
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }
expect_ok() { local what=$1; shift; if "$@" >"$WORK/out" 2>&1; then pass "$what"; else fail "$what (exit $?)"; cat "$WORK/out"; fi; }
# expect_exit CODE WHAT CMD...: the command must exit with CODE.
expect_exit() {
  local want=$1 what=$2 rc=0; shift 2
  "$@" >"$WORK/out" 2>&1 || rc=$?
  if [ "$rc" = "$want" ]; then pass "$what (exit $rc)"; sed -n '1,3s/^/      /p' "$WORK/out"; else fail "$what (exit $rc, want $want)"; cat "$WORK/out"; fi
}
equal() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: '$2' != '$3'"; fi; }

cd "$WORK"
export BENCHSEAL_PASSWORD=registry-password SOURCE_DATE_EPOCH=1767225600
"$BENCHSEAL" synth --out run --requests 200 --points 2,8 --repeats 2 --items 20 >/dev/null
"$BENCHSEAL" keygen --out publisher >/dev/null
"$BENCHSEAL" keygen --out reviewer >/dev/null
"$BENCHSEAL" pack run --out bundle --key publisher.key >/dev/null
MANIFEST=$("$BENCHSEAL" inspect bundle | awk '/^manifest/{print $2}')
REF=$HOST/bench/run:v1
echo "== run manifest $MANIFEST"

echo "== 1. push"
"$BENCHSEAL" push bundle "$REF" --plain-http | tee push.out
equal "push reports the run manifest digest" "$(awk '/^  manifest/{print $2}' push.out)" "$MANIFEST"
equal "the registry has no referrers API (404)" \
  "$(curl -s -o /dev/null -w '%{http_code}' "http://$HOST/v2/bench/run/referrers/$MANIFEST")" 404
if curl -fsS "http://$HOST/v2/bench/run/tags/list" | grep -q "\"sha256-${MANIFEST#sha256:}\""; then
  pass "referrers tag sha256-<hex> is listed"
else
  fail "referrers tag sha256-<hex> missing"; curl -s "http://$HOST/v2/bench/run/tags/list"
fi

echo "== 2. pull into a directory and a .tar, verify both"
"$BENCHSEAL" pull "$REF" --out pulled --plain-http | tee pull.out
"$BENCHSEAL" pull "$REF" --out pulled.tar --plain-http >/dev/null
equal "pulled manifest digest equals the original" "$(awk '/^  manifest/{print $2}' pull.out)" "$MANIFEST"
equal "inspect of the pulled tar shows the same manifest" \
  "$("$BENCHSEAL" inspect pulled.tar | awk '/^manifest/{print $2}')" "$MANIFEST"
expect_ok "pulled directory: same files, byte for byte" \
  diff <(cd bundle && find . -type f | LC_ALL=C sort | xargs sha256sum) <(cd pulled && find . -type f | LC_ALL=C sort | xargs sha256sum)
expect_ok "benchseal verify pulled --key publisher.pub" "$BENCHSEAL" verify pulled --key publisher.pub
expect_ok "benchseal verify pulled.tar --key publisher.pub" "$BENCHSEAL" verify pulled.tar --key publisher.pub
expect_exit 3 "verify pulled.tar with the wrong key is rejected" "$BENCHSEAL" verify pulled.tar --key reviewer.pub
expect_exit 1 "pull refuses an existing output" "$BENCHSEAL" pull "$REF" --out pulled.tar --plain-http

echo "== 3. a second signature: sign the pulled tar, push, pull again"
"$BENCHSEAL" sign pulled.tar --key reviewer.key >/dev/null
"$BENCHSEAL" push pulled.tar "$REF" --plain-http | tee push2.out
"$BENCHSEAL" pull "$REF" --out two.tar --plain-http | tee pull2.out
equal "two referrers after the second push" "$(grep -c '^  referrer' pull2.out)" 2
expect_ok "benchseal verify two.tar --key publisher.pub --key reviewer.pub" \
  "$BENCHSEAL" verify two.tar --key publisher.pub --key reviewer.pub
expect_ok "the re-pulled tar equals the tar that was pushed, byte for byte" cmp pulled.tar two.tar

echo "== 4. plan, publisher signature and reviewer attestation: three referrers on one subject"
"$BENCHSEAL" plan init --out plan.json --concurrency 1,2 --requests 8 --warmup-requests 1 --repeats 2 --seed 4 \
  --input-tokens 8 --output-tokens 8 --slo ttft=2s,e2e=10s,tpot=1s >/dev/null
"$BENCHSEAL" plan sign plan.json --key publisher.key >/dev/null
"$BENCHSEAL" capture --simulate --plan plan.json --out trun --progress never --sim-time-scale 0.05 >/dev/null
"$BENCHSEAL" replay trun --write-claims trun/claims.json >/dev/null
"$BENCHSEAL" pack trun --out trusted.tar --key publisher.key >/dev/null
"$BENCHSEAL" sign trusted.tar --sigstore-bundle plan.json.sigstore.json >/dev/null
"$BENCHSEAL" attest trusted.tar --key reviewer.key --publisher-key publisher.pub --plan plan.json >/dev/null
TMANIFEST=$("$BENCHSEAL" inspect trusted.tar | awk '/^manifest/{print $2}')
TREF=$HOST/bench/trusted:v1
expect_ok "push the run with its three referrers" "$BENCHSEAL" push trusted.tar "$TREF" --plain-http
TAG=${TMANIFEST/:/-}
equal "the referrers index lists three manifests with the run as subject" \
  "$(curl -s -H 'Accept: application/vnd.oci.image.index.v1+json' "http://$HOST/v2/bench/trusted/manifests/$TAG" | grep -o '"dev.sigstore.bundle.predicateType":"[^"]*"' | sort | tr '\n' ' ')" \
  '"dev.sigstore.bundle.predicateType":"https://benchseal.dev/attestation/plan/v1" "dev.sigstore.bundle.predicateType":"https://benchseal.dev/attestation/run/v1" "dev.sigstore.bundle.predicateType":"https://slsa.dev/verification_summary/v1" '
"$BENCHSEAL" pull "$TREF" --out trusted-pulled.tar --plain-http | tee tpull.out
equal "pull brings back three referrers" "$(grep -c '^  referrer' tpull.out)" 3
"$BENCHSEAL" inspect trusted-pulled.tar >tinspect.out
equal "inspect: one signature, one signed plan, one attestation" \
  "$(grep -c 'signatures (1,\|signed plans (1,\|reviewer attestations (1,' tinspect.out)" 3
expect_ok "verify the pulled bundle with --plan and --require-attestation" \
  "$BENCHSEAL" verify trusted-pulled.tar --key publisher.pub --plan plan.json --require-attestation reviewer.pub
expect_ok "the plan travels in the bundle: verify checks it without --plan" \
  sh -c "'$BENCHSEAL' verify trusted-pulled.tar --key publisher.pub --require-attestation reviewer.pub | grep -q '^PASS  *plan'"
expect_exit 3 "an attestation by someone else is not accepted" \
  "$BENCHSEAL" verify trusted-pulled.tar --key publisher.pub --require-attestation publisher.pub

echo "== 5. tamper: a records blob altered on the registry's disk"
LAYER=$("$BENCHSEAL" inspect bundle | awk '/^  records\//{getline; print $1; exit}')
BLOB=$(find "$WORK/reg/data" -path "*/blobs/sha256/*/${LAYER#sha256:}/data")
[ -f "$BLOB" ] || { fail "blob $LAYER not found on disk"; exit 1; }
c=$(dd if="$BLOB" bs=1 skip=100 count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
printf "$(printf '\\%03o' $(((c + 1) % 256)))" | dd of="$BLOB" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_exit 3 "pull of a tampered blob fails closed" "$BENCHSEAL" pull "$REF" --out tampered.tar --plain-http
if grep -q "${LAYER}" "$WORK/out"; then pass "the error names the blob"; else fail "the error does not name $LAYER"; fi
if [ -e tampered.tar ] || ls -A | grep -q '^\.tampered'; then fail "pull left files behind"; else pass "nothing written"; fi

echo "== 6. sharded capture: three signed shard bundles pushed as the k8s Job does, merge --pull"
SREF=$HOST/bench/sharded:v1
for i in 0 1 2; do
  "$BENCHSEAL" capture --simulate --sim-time-scale 0.01 --rate 300 --requests 30 --warmup-requests 3 --repeats 2 \
    --seed 9 --shard "$i/3" --out "shard-$i" --progress never >/dev/null
  "$BENCHSEAL" pack "shard-$i" --out "shard-$i.tar" --key publisher.key >/dev/null
  "$BENCHSEAL" push "shard-$i.tar" "$SREF-shard-$i" --plain-http >/dev/null
done
expect_ok "merge --pull of three shards, each verified with the publisher key" \
  "$BENCHSEAL" merge --pull "$SREF" --shards 3 --key publisher.pub --plain-http --out pulled-merge
grep -c '^pulled shard [0-2]: .* verified, signed by key sha256:' "$WORK/out" | grep -qx 3 && pass "every shard bundle reported verified" || { fail "not every shard reported verified"; cat "$WORK/out"; }
expect_ok "the merged run validates" "$BENCHSEAL" validate pulled-merge
"$BENCHSEAL" merge shard-0 shard-1 shard-2 --out local-merge >/dev/null
equal "the pulled merge has the records of a merge of the local shard directories" \
  "$(cat pulled-merge/records.jsonl* | sha256sum)" "$(cat local-merge/records.jsonl* | sha256sum)"
expect_exit 3 "a shard signed by another key is refused" \
  "$BENCHSEAL" merge --pull "$SREF" --shards 3 --key reviewer.pub --plain-http --out wrong-key
expect_exit 3 "a shard missing from the registry is refused" \
  "$BENCHSEAL" merge --pull "$SREF" --shards 4 --key publisher.pub --plain-http --out four
if [ -e wrong-key ] || [ -e four ]; then fail "a refused merge --pull left output"; else pass "refused merges wrote nothing"; fi
"$BENCHSEAL" push "shard-1.tar" "$SREF-shard-2" --plain-http >/dev/null
expect_exit 3 "shard 1's bundle under shard 2's tag is refused by merge" \
  "$BENCHSEAL" merge --pull "$SREF" --shards 3 --key publisher.pub --plain-http --out swapped

echo
if [ "$failures" -ne 0 ]; then echo "registry: $failures check(s) FAILED"; exit 1; fi
echo "registry: all checks passed"
