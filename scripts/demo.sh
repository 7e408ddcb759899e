#!/usr/bin/env bash
# benchseal demo: the whole job on built-in defaults, offline, on loopback only.
#
#   publisher: simulate a server, capture a sweep, claim its numbers, pack and sign
#   reviewer:  verify the bundle with nothing but it and a public key; see a tampered copy rejected
#   buyer:     recompute goodput under a stricter SLO than the publisher's, then
#              choose between two configurations with a significance test
#   and the same for a real AIPerf result shipped in testdata/.
set -euo pipefail
cd "$(dirname "$0")/.."
B="$PWD/bin/benchseal"
OUT=${DEMO_OUT:-$PWD/demo-out}
rm -rf "$OUT"
mkdir -p "$OUT/keys"
export BENCHSEAL_PASSWORD=demo-only-password
export SOURCE_DATE_EPOCH=
# Step headers are bold on a terminal only (and not under NO_COLOR): a log
# file or a pipe gets no escape sequences.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
  step() { printf '\n== %s\n' "$*"; }
fi
# show prints a command so that it pastes into a shell once OUT is set as the
# demo states at the start: the binary as "benchseal", the output directory as
# $OUT, each argument quoted only where the shell needs it.
quote() {
  local a=$1 rest
  case $a in "$B") printf 'benchseal'; return ;; esac
  if [[ $a == *"$OUT"* ]]; then
    rest=${a//"$OUT"/}
    if [[ $rest =~ ^[A-Za-z0-9_./:=,@%+-]*$ ]]; then
      if [[ $OUT =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then printf '%s' "${a//"$OUT"/\$OUT}"; else printf '"%s"' "${a//"$OUT"/\$OUT}"; fi
      return
    fi
  fi
  if [[ $a =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then printf '%s' "$a"; return; fi
  a=${a//\'/\'\\\'\'}
  printf "'%s'" "$a"
}
show() {
  local first=1 a
  printf '$ ' >&2
  for a in "$@"; do
    [ $first = 1 ] || printf ' ' >&2
    first=0
    quote "$a" >&2
  done
  printf '\n' >&2
}
run() { show "$@"; "$@"; }
# start_bg starts a simulator in the background (name, then its arguments),
# prints the command and, once it listens, its URL. One that does not listen
# within 60 s (a loaded CI machine starts a process in well under that) stops
# the demo with its log, so a caller never runs against an empty URL.
start_bg() {
  local name=$1 url; shift
  show "$@"
  "$@" >"$OUT/sim-$name.log" 2>&1 &
  echo $! >"$OUT/sim-$name.pid"
  for _ in $(seq 600); do grep -q 'http://' "$OUT/sim-$name.log" 2>/dev/null && break; sleep 0.1; done
  url=$(grep -o 'http://[0-9.:]*' "$OUT/sim-$name.log" | head -1)
  [ -n "$url" ] || { echo "the $name simulator did not start within 60 s; its log:" >&2; cat "$OUT/sim-$name.log" >&2; exit 1; }
  echo "$url"
}

printf 'OUT=%q   # the printed commands refer to it\n' "$OUT"
printf 'export BENCHSEAL_PASSWORD=%q   # opens the demo'"'"'s keys in $OUT/keys (publisher, reviewer)\n' "$BENCHSEAL_PASSWORD"

step "1. Start the local simulator (a labelled simulator on loopback, not an inference engine)"
trap 'kill $(cat "$OUT"/sim-*.pid 2>/dev/null) 2>/dev/null || true' EXIT
URL=$(start_bg main "$B" simulate --listen 127.0.0.1:0 --seed 7 --time-scale 0.5 --chunk-tokens 4 --prefix-caching \
  --max-running 8 --queue-limit 7 --error-rate 0.02 --stall-prob 0.002 --stall 400ms)
echo "simulator at $URL (the --endpoint of the commands below; 127.0.0.1:0 takes a free port)"

step "2. Publisher: capture a concurrency sweep (3 points x 2 repeats, warmup, prefix cache emptied before each, SLO declared before the run)"
run "$B" capture --endpoint "$URL" --model benchseal-sim --out "$OUT/run" \
  --concurrency 1,4,16 --requests 24 --warmup-requests 4 --repeats 2 --seed 1 --output-tokens 32 \
  --reset-prefix-cache --server-fresh \
  --set slo.ttft=500ms --set slo.e2e=3s --set slo.tpot=30ms --set slo.one_token=pass \
  --location same-host --progress never --max-error-rate 0.9
"$B" validate "$OUT/run"
echo "client columns and, beside them, the server column from the simulator's own /metrics (scraped before, during and after each point):"
"$B" replay "$OUT/run" --detail | sed -n '/^point c16 repeat 0/,/server gauges/p' | grep -E '^point|^  (ttft|e2e) |^  server|^  client|^  cold'
echo "the server's state as capture recorded it (manifest.server_state): a measured fresh start, and per point the warmup and the prefix-cache reset:"
python3 - "$OUT/run/manifest.json" <<'PY'
import json, sys
ss = json.load(open(sys.argv[1]))["server_state"]
f = ss.get("fresh")
if f:
    print(f"  fresh start: {f['fresh']} ({f['source']}: {f.get('requests_before')} requests and {f.get('prompt_tokens_before')} prompt tokens served before the run)")
for p in ss["points"]:
    r = p.get("reset") or {}
    calls = ", ".join(f"{c['path']} {c['status']}" for c in r.get("calls", []))
    print(f"  {p['point']} repeat {p['repeat']}: warmup {p.get('warmup_ns', 0) / 1e6:.1f} ms, prefix cache {p['prefix_cache']} ({p.get('prefix_cache_source', 'no source')}; {calls or 'no reset'})")
PY

step "2b. Overload visible: a rate sweep whose second point is far past the simulator's capacity (4 slots)"
URL_OVER=$(start_bg over "$B" simulate --listen 127.0.0.1:0 --seed 7 --time-scale 0.2 --chunk-tokens 4 --max-running 4 --queue-limit 1000)
echo "simulator at $URL_OVER"
run "$B" capture --endpoint "$URL_OVER" --model benchseal-sim --out "$OUT/over" --rate 10,200 --requests 120 \
  --warmup-requests 2 --seed 1 --output-tokens 32 --server-metrics-interval 100ms --progress never | tail -1
kill "$(cat "$OUT/sim-over.pid")" 2>/dev/null || true
run "$B" replay "$OUT/over" --detail --out "$OUT/over.txt"
grep -E '^point|^  (overloaded|generator-limited|arrival rate|completions|outstanding|server queue trend) ' "$OUT/over.txt"
run "$B" replay "$OUT/over" --output html --out "$OUT/report-overload.html"
echo "HTML report with the overloaded point shaded: $OUT/report-overload.html"
sed -n '/^point rate-200 repeat 0/,/^$/p' "$OUT/over.txt" | grep -q '^  overloaded  *YES' ||
  { echo "the point past capacity was not flagged overloaded"; exit 1; }
sed -n '/^point rate-10 repeat 0/,/^$/p' "$OUT/over.txt" | grep -q '^  overloaded  *no' ||
  { echo "the point within capacity was flagged or undecided"; exit 1; }

step "3. Publisher: record the headline numbers as claims, make a key, pack and sign"
run "$B" replay "$OUT/run" --write-claims "$OUT/run/claims.json" >/dev/null
run "$B" keygen --out "$OUT/keys/publisher"
run "$B" pack "$OUT/run" --out "$OUT/run.oci" --key "$OUT/keys/publisher.key"

step "4. Reviewer: verify offline with only the bundle and the publisher's public key"
run "$B" verify "$OUT/run.oci" --key "$OUT/keys/publisher.pub"

step "5. Reviewer: a copy with one byte changed in a records layer is rejected (exit 3)"
cp -r "$OUT/run.oci" "$OUT/tampered.oci"
# The records layer is found by its media type in the run manifest that
# index.json names (not by size: the largest blob may be the signature).
python3 - "$OUT/tampered.oci" <<'PY'
import json, sys
d = sys.argv[1]
index = json.load(open(d + '/index.json'))
run = [m for m in index['manifests'] if m.get('artifactType') == 'application/vnd.benchseal.run.v1'][0]
manifest = json.load(open(d + '/blobs/sha256/' + run['digest'].split(':')[1]))
layer = [l for l in manifest['layers'] if l['mediaType'] == 'application/vnd.benchseal.run.records.v1.jsonl+zstd'][0]
p = d + '/blobs/sha256/' + layer['digest'].split(':')[1]
b = bytearray(open(p, 'rb').read())
b[len(b) // 2] ^= 0x01
open(p, 'wb').write(bytes(b))
print('changed one byte of', layer['annotations']['org.opencontainers.image.title'])
PY
set +e
"$B" verify "$OUT/tampered.oci" --key "$OUT/keys/publisher.pub" >"$OUT/tampered.txt" 2>&1
rc=$?
set -e
grep -E '^(FAIL|REJECTED)' "$OUT/tampered.txt" || true
echo "exit code $rc"
[ "$rc" -eq 3 ] || { echo "tampered bundle was not rejected"; exit 1; }
grep -qE '^FAIL +descriptors +digest mismatch in "records/' "$OUT/tampered.txt" ||
  { echo "the rejection does not name the changed records layer"; exit 1; }

step "6. Buyer: goodput under the publisher's SLO, then under my own stricter one (the bundle is not changed)"
run "$B" replay "$OUT/run.oci" --output csv --out "$OUT/replay-publisher.csv"
run "$B" replay "$OUT/run.oci" --slo ttft=40ms,e2e=600ms,tpot=8ms,one_token=fail --output csv --out "$OUT/replay-buyer.csv"
python3 - "$OUT/replay-publisher.csv" "$OUT/replay-buyer.csv" <<'PY'
import csv, sys
def rows(p):
    out = {}
    for r in csv.DictReader(open(p)):
        if r["repeat"] != "":
            out.setdefault((r["point"], r["repeat"]), {})[r["metric"]] = r["value"]
    return out
def num(v, places=2):
    return "-" if v in ("", None) else f"{float(v):.{places}f}"
pub, buy = rows(sys.argv[1]), rows(sys.argv[2])
print(f"{'point':>6} {'rep':>3} {'sent':>5} {'ok':>4} {'rejected':>8} {'req/s':>8} | {'goodput req/s, publisher SLO':>29} | {'goodput req/s, buyer SLO':>24} {'attainment':>10}")
for k in pub:
    p, b = pub[k], buy[k]
    print(f"{k[0]:>6} {k[1]:>3} {p['counts.sent']:>5} {p['counts.ok']:>4} {p['counts.rejected']:>8} {num(p['request_throughput']):>8} | "
          f"{num(p['goodput']):>29} | {num(b['goodput']):>24} {num(b['slo_attainment'], 3):>10}")
PY

run "$B" replay "$OUT/run.oci" --slo ttft=40ms,e2e=600ms,tpot=8ms,one_token=fail --output html --out "$OUT/report-buyer.html"
echo "HTML report with charts: $OUT/report-buyer.html"

step "7. Buyer: how goodput falls as the TTFT limit tightens"
run "$B" replay "$OUT/run.oci" --sweep-slo ttft=5ms..60ms:6 --out "$OUT/sweep.txt"
sed -n '/^sweep of the ttft limit/,$p' "$OUT/sweep.txt"

step "8. An existing AIPerf result: import, pack, sign, verify (its own numbers recomputed), stricter SLO"
run "$B" import aiperf testdata/fixtures/aiperf/run1_profile_export.jsonl testdata/fixtures/aiperf/run1_profile_export_aiperf.json \
  --out "$OUT/aiperf"
run "$B" pack "$OUT/aiperf" --out "$OUT/aiperf.oci.tar" --key "$OUT/keys/publisher.key"
run "$B" verify "$OUT/aiperf.oci.tar" --key "$OUT/keys/publisher.pub" --out "$OUT/aiperf-verify.txt"
sed -n '/^PASS\|^FAIL\|^SKIP\|^claims\|^  NOT\|^VERIFIED\|^REJECTED/p' "$OUT/aiperf-verify.txt"
echo "AIPerf's run had no SLO; goodput with the SLO a buyer cares about (TTFT ≤ 2 s, E2E ≤ 10 s):"
run "$B" replay "$OUT/aiperf.oci.tar" --slo ttft=2s,e2e=10s --out "$OUT/aiperf-replay.txt"
sed -n '/^point/,/^$/p' "$OUT/aiperf-replay.txt"

step "9. Trust chain: plan signed before the run -> capture under the plan -> pack signed -> reviewer attests"
T="$OUT/trust"; mkdir -p "$T"
# The publisher's server: a simulate server, which step 12's reviewer starts again with the same flags
# (PRESET), so the original and its reproduction take the same HTTP path. Time scale 1 (a request
# ~0.2 s): a loaded machine's scheduling delays do not scale with it, so they are a small part of each
# latency (at 0.25, one repeat slowed threefold made 3 of 4 reproductions INCONCLUSIVE at load 25-30).
# 12 repeats: 12 against 12 leave the 43 most extreme of the 144 pairwise ratios out at each end of the
# 90 % interval, so three repeats that a loaded machine slowed (a burst of builds lasts several repeats)
# do not decide (8 against 8 leave 16 out: two; 6 against 6 leave 8: one). The plan claims counts and
# medians only (--metrics): 12 repeats of 10 requests cannot pin a p99 down, so a reproduction could not
# test it. Each token's time varies by up to 10 % (--step-jitter), drawn from each server's own
# --jitter-seed, as a live server's steps vary: a server started afresh with the publisher's draws
# would time every answer as the original did, gap for gap, and reproduce refuses a run whose records
# repeat the original's chunk-gap shapes (113 of 149 did on an idle machine without the jitter).
PRESET="--time-scale 1 --max-running 4096 --queue-limit 4096 --step-jitter 0.1"
METRICS=counts.sent,counts.ok,request_throughput,output_token_throughput,ttft_ns.p50,e2e_ns.p50,tpot_ns.p50
start_preset() { # name, then extra simulate flags; prints its URL
  local name=$1; shift
  # shellcheck disable=SC2086 # PRESET is a list of flags
  start_bg "$name" "$B" simulate --listen 127.0.0.1:0 $PRESET "$@"
}
URL_PUB=$(start_preset publisher --jitter-seed 1)
echo "publisher's simulator at $URL_PUB"
run "$B" keygen --out "$OUT/keys/reviewer" >/dev/null
echo "the reviewer's key: $OUT/keys/reviewer.key (BENCHSEAL_PASSWORD=$BENCHSEAL_PASSWORD opens it; try attest with it)"
run "$B" plan init --out "$T/plan.json" --title "demo pre-registered sweep" --concurrency 1,4 --requests 10 \
  --warmup-requests 2 --repeats 12 --seed 9 --input-tokens 16 --output-tokens 16 --slo ttft=2s,e2e=10s,tpot=1s \
  --metrics "$METRICS"
echo "claimed metrics: $METRICS (counts and medians: what 12 repeats of 10 requests let a reproduction test)"
run "$B" plan sign "$T/plan.json" --key "$OUT/keys/publisher.key"
run "$B" capture --endpoint "$URL_PUB" --model benchseal-sim --plan "$T/plan.json" --out "$T/run" --progress never | tail -2
kill "$(cat "$OUT/sim-publisher.pid")" 2>/dev/null || true
run "$B" replay "$T/run" --write-claims "$T/run/claims.json" >/dev/null
run "$B" pack "$T/run" --out "$T/run.oci.tar" --key "$OUT/keys/publisher.key" >/dev/null
run "$B" sign "$T/run.oci.tar" --sigstore-bundle "$T/plan.json.sigstore.json"    # the plan travels as its own referrer
run "$B" attest "$T/run.oci.tar" --key "$OUT/keys/reviewer.key" --publisher-key "$OUT/keys/publisher.pub" --plan "$T/plan.json"
run "$B" verify "$T/run.oci.tar" --key "$OUT/keys/publisher.pub" --plan "$T/plan.json" \
  --require-attestation "$OUT/keys/reviewer.pub" >"$T/verify.txt"
sed -n '/^PASS  *plan\|^PASS  *attestations\|^pre-registered\|^reviewer attestations/,+1p; /^VERIFIED/p' "$T/verify.txt"

step "10. Deviations from the plan are named failures: an extra point, a changed SLO, a missing repeat"
digest=$("$B" plan validate "$T/plan.json" | sed 's/.*sha256://')
printf '{"plan":{"sha256":"%s"}}' "$digest" >"$T/claims-plan.json"
deviate() { # name, load plan JSON, extra replay flags
  local name=$1 load=$2; shift 2
  printf '%s' "$load" >"$T/$name.load.json"
  "$B" capture --simulate --plan "$T/$name.load.json" --manifest "$T/claims-plan.json" --out "$T/$name" --progress never \
    --sim-time-scale 0.1 --set slo.ttft=2s --set slo.e2e=10s --set slo.tpot=1s --set slo.one_token=pass >/dev/null
  "$B" replay "$T/$name" --write-claims "$T/$name/claims.json" "$@" >/dev/null
  "$B" pack "$T/$name" --out "$T/$name.oci.tar" --key "$OUT/keys/publisher.key" >/dev/null
  set +e
  "$B" verify "$T/$name.oci.tar" --key "$OUT/keys/publisher.pub" --plan "$T/plan.json" >"$T/$name.verify.txt"
  local rc=$?
  set -e
  echo "$name: exit $rc"; grep 'DEVIATION' "$T/$name.verify.txt" | sed 's/^/  /'
  [ "$rc" -eq 3 ] || { echo "a run that deviates from its plan was not rejected"; exit 1; }
}
base='"mode":"concurrency","seed":9,"warmup":{"requests":2},"input_tokens":16,"output_tokens":16'
deviate extra-point "{$base,\"repeats\":12,\"points\":[{\"concurrency\":1,\"requests\":10},{\"concurrency\":4,\"requests\":10},{\"concurrency\":16,\"requests\":10}]}"
deviate changed-slo "{$base,\"repeats\":12,\"points\":[{\"concurrency\":1,\"requests\":10},{\"concurrency\":4,\"requests\":10}]}" --slo ttft=500ms,e2e=10s,tpot=1s
deviate missing-repeat "{$base,\"repeats\":11,\"points\":[{\"concurrency\":1,\"requests\":10},{\"concurrency\":4,\"requests\":10}]}"
grep -q 'DEVIATION unplanned-point' "$T/extra-point.verify.txt" && grep -q 'DEVIATION slo-changed' "$T/changed-slo.verify.txt" &&
  grep -q 'DEVIATION missing-repeat' "$T/missing-repeat.verify.txt" || { echo "a deviation was not named"; exit 1; }

step "11. Buyer: decide between two configurations (two simulator presets with 2 simulated accelerators each), each captured 5 times on the same workload, on goodput and on accelerator energy per good token"
start_sim() { # name, then simulate flags
  local name=$1; shift
  start_bg "$name" "$B" simulate --listen 127.0.0.1:0 --seed 11 --time-scale 0.2 --chunk-tokens 4 "$@"
}
URL_A=$(start_sim a --max-running 4 --queue-limit 64 --gpus 2)
URL_B=$(start_sim b --max-running 16 --queue-limit 64 --gpus 2)
echo "preset a at $URL_A, preset b at $URL_B"
# The simulator computes its accelerators' readings on every scrape, so they
# are at most 0 s old (--gpu-metrics-max-age 0s); a real DCGM exporter
# serves what it last collected (every 30 s unless run with -c). The energy
# bounds are about two scrape periods of full power apart, so they close only
# when a point's window spans many periods: scrapes every 20 ms and 48
# requests a point give windows of about 0.25 s (b at c16) to 0.9 s, and
# a's lowest bound stays above b's highest (0.163 against 0.113 J per good
# token at load 12). At the default 1 s every lower bound is 0 (capture warns);
# at 100 ms with 24 requests the bounds still overlap and decide ranks on
# central values.
for cfg in a b; do
  url=$URL_A; [ "$cfg" = b ] && url=$URL_B
  run "$B" capture --endpoint "$url" --model benchseal-sim --out "$OUT/config-$cfg" --gpu-metrics "$url/gpu-metrics" --gpu-metrics-max-age 0s \
    --gpu-metrics-interval 20ms --concurrency 4,16 --requests 48 --warmup-requests 4 --repeats 5 --seed 3 --output-tokens 32 \
    --set slo.ttft=500ms --set slo.e2e=3s --set engine.name="simulator preset $cfg" --location same-host --progress never
done
kill $(cat "$OUT"/sim-*.pid) 2>/dev/null || true
run "$B" compare "$OUT/config-a" "$OUT/config-b" --output html --out "$OUT/compare.html"
run "$B" decide "$OUT/config-a" "$OUT/config-b" --objective max-goodput --slo ttft=500ms,e2e=3s --out "$OUT/decision.txt"
sed -n '/^decision table/,$p' "$OUT/decision.txt"
run "$B" decide "$OUT/config-a" "$OUT/config-b" --objective max-goodput --slo ttft=500ms,e2e=3s --output html --out "$OUT/decision.html"
grep -q '^ANSWER: .* wins on goodput' "$OUT/decision.txt" || { echo "the faster configuration did not win"; exit 1; }
# The same runs on energy: joules per good token from the simulated
# accelerators' scrapes (board energy, not wall power: docs/energy.md).
run "$B" decide "$OUT/config-a" "$OUT/config-b" --objective min-energy-per-good-token --slo ttft=500ms,e2e=3s --out "$OUT/decision-energy.txt"
sed -n '/^decision table/,$p' "$OUT/decision-energy.txt"
grep -q 'Accelerator energy per good token (J)' "$OUT/decision-energy.txt" || { echo "the decision table shows no energy per good token"; exit 1; }
echo "HTML decision report: $OUT/decision.html (comparison: $OUT/compare.html)"

step "12. Reviewer: re-run the publisher's pre-registered bundle against a server of the same preset, then a 3x faster one"
# The reviewer starts the publisher's preset (step 9's flags, its own jitter draws) and one three times
# as fast, and reproduces with the original's 12 repeats, so the reproduction executes the
# pre-registered plan itself.
URL_SAME=$(start_preset same --jitter-seed 2)
URL_FAST=$(start_preset fast --time-scale 0.333 --jitter-seed 3)
echo "same preset at $URL_SAME, 3x faster at $URL_FAST"
# reproduce_on runs the reproduction NAME against the simulator SIM (name, URL), its report into REPORT
# (then extra reproduce flags), and sets rc to its exit code. Its messages are kept in $OUT/NAME.log
# as well as shown: one that stops without a verdict (its report is written only with one) stops the
# demo with them and the simulator's log last, where a log's tail shows them.
reproduce_on() {
  local sim=$1 url=$2 name=$3 report=$4; shift 4
  set +e
  run "$B" reproduce "$T/run.oci.tar" --key "$OUT/keys/publisher.pub" --endpoint "$url" --model benchseal-sim \
    --out "$OUT/$name" --progress never --margin 50% "$@" --report "$report" 2>"$OUT/$name.log"
  rc=$?
  set -e
  cat "$OUT/$name.log" >&2
  [ -s "$report" ] && return
  echo "benchseal reproduce against the $sim simulator stopped without a verdict (exit code $rc); its messages, then the simulator's log:"
  tail -n 20 "$OUT/$name.log"; tail -n 20 "$OUT/sim-$sim.log"; exit 1
}
reproduce_on same "$URL_SAME" reproduction "$OUT/reproduction.txt"; rc_same=$rc
reproduce_on fast "$URL_FAST" reproduction-fast "$OUT/reproduction-fast.html" --output html; rc_fast=$rc
kill $(cat "$OUT"/sim-same.pid "$OUT"/sim-fast.pid) 2>/dev/null || true
echo "excerpt of the claim rows of $OUT/reproduction.txt (same preset, run with --margin 50%, not the default 10%: a claim is reproduced when the interval of reproduction over original lies within [1/1.5, 1.5]):"
grep -E '^claim|ttft_ns.p50|e2e_ns.p50|request_throughput' "$OUT/reproduction.txt" | head -5
sed -n '/^comparability limits/,$p' "$OUT/reproduction.txt"
verdict_of() { case $1 in 0) echo REPRODUCED;; 3) echo "NOT REPRODUCED";; 4) echo INCONCLUSIVE;; *) echo "an error";; esac; }
echo "same preset: $(verdict_of "$rc_same") (exit code $rc_same); 3x faster: $(verdict_of "$rc_fast") (exit code $rc_fast)"
# Same preset, same HTTP path: the reviewer's reproduction must be REPRODUCED.
[ "$rc_same" -eq 0 ] || { echo "the same preset did not reproduce the bundle ($(verdict_of "$rc_same")): see $OUT/reproduction.txt"; exit 1; }
[ "$rc_fast" -eq 3 ] || { echo "a 3x faster server reproduced the bundle"; exit 1; }
echo "HTML reproduction report of the faster server: $OUT/reproduction-fast.html"

printf '\nDemo finished: everything is under %s\n' "$OUT"
