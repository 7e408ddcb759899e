#!/usr/bin/env bash
# benchseal demo: the whole job on built-in defaults, offline, on loopback only.
#
#   publisher: simulate a server, capture a sweep, claim its numbers, pack and sign
#   reviewer:  verify the bundle with nothing but it and a public key; see a tampered copy rejected
#   buyer:     recompute goodput under a stricter SLO than the publisher's
#   and the same for a real AIPerf result shipped in testdata/.
set -euo pipefail
cd "$(dirname "$0")/.."
B="$PWD/bin/benchseal"
OUT=${DEMO_OUT:-$PWD/demo-out}
rm -rf "$OUT"
mkdir -p "$OUT/keys"
export BENCHSEAL_PASSWORD=demo-only-password
export SOURCE_DATE_EPOCH=
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*" | sed "s#$OUT#\$OUT#g; s#$B#benchseal#g"; "$@"; }

step "1. Start the local simulator (a labelled simulator on loopback, not an inference engine)"
"$B" simulate --listen 127.0.0.1:0 --seed 7 --time-scale 0.05 --chunk-tokens 4 >"$OUT/simulator.log" 2>&1 &
SIM=$!
trap 'kill $SIM 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q 'http://' "$OUT/simulator.log" 2>/dev/null && break; sleep 0.1; done
URL=$(grep -o 'http://[0-9.:]*' "$OUT/simulator.log" | head -1)
[ -n "$URL" ] || { echo "simulator did not start"; cat "$OUT/simulator.log"; exit 1; }
echo "simulator at $URL"

step "2. Publisher: capture a concurrency sweep (3 points x 2 repeats, warmup, SLO declared before the run)"
run "$B" capture --endpoint "$URL" --model benchseal-sim --out "$OUT/run" \
  --concurrency 1,4,16 --requests 40 --warmup-requests 4 --repeats 2 --seed 1 \
  --set slo.ttft=300ms --set slo.e2e=4s --set slo.tpot=25ms --progress never
"$B" validate "$OUT/run"

step "3. Publisher: record the headline numbers as claims, make a key, pack and sign"
run "$B" replay "$OUT/run" --write-claims "$OUT/run/claims.json" >/dev/null
run "$B" keygen --out "$OUT/keys/publisher"
run "$B" pack "$OUT/run" --out "$OUT/run.oci" --key "$OUT/keys/publisher.key"

step "4. Reviewer: verify offline with only the bundle and the publisher's public key"
run "$B" verify "$OUT/run.oci" --key "$OUT/keys/publisher.pub"

step "5. Reviewer: a copy with one byte changed in a records layer is rejected (exit 3)"
cp -r "$OUT/run.oci" "$OUT/tampered.oci"
layer=$(ls -S "$OUT/tampered.oci/blobs/sha256" | head -1)
python3 - "$OUT/tampered.oci/blobs/sha256/$layer" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[len(b) // 2] ^= 0x01
open(p, 'wb').write(bytes(b))
PY
set +e
"$B" verify "$OUT/tampered.oci" --key "$OUT/keys/publisher.pub" >"$OUT/tampered.txt" 2>&1
rc=$?
set -e
grep -E '^(FAIL|REJECTED)' "$OUT/tampered.txt" | head -5
echo "exit code $rc"
[ "$rc" -eq 3 ] || { echo "tampered bundle was not rejected"; exit 1; }

step "6. Buyer: goodput under my own, stricter SLO (the bundle is not changed)"
run "$B" replay "$OUT/run.oci" --slo ttft=150ms,e2e=2s,tpot=15ms --output markdown | head -40

step "7. Buyer: how goodput falls as the TTFT limit tightens"
run "$B" replay "$OUT/run.oci" --sweep-slo ttft=20ms..300ms:8 | sed -n '/sweep/,$p' | head -40

step "8. An existing AIPerf result: import, pack, sign, verify (its own numbers recomputed), stricter SLO"
run "$B" import aiperf testdata/fixtures/aiperf/run1_profile_export.jsonl testdata/fixtures/aiperf/run1_profile_export_aiperf.json \
  --out "$OUT/aiperf"
run "$B" pack "$OUT/aiperf" --out "$OUT/aiperf.oci.tar" --key "$OUT/keys/publisher.key"
run "$B" verify "$OUT/aiperf.oci.tar" --key "$OUT/keys/publisher.pub" | tail -15
run "$B" replay "$OUT/aiperf.oci.tar" --slo ttft=2s,e2e=10s | head -30

printf '\nDemo finished: everything is under %s\n' "$OUT"
