#!/usr/bin/env bash
# Error rates of benchseal reproduce's equivalence test, measured on
# simulator runs (docs/compare.md, "Reproduction test"). Two simulators with
# the same latency model and seed: preset a (time scale 1) and preset b
# (time scale 0.333, three times as fast). Each trial captures an original
# against preset a under a pre-registered plan with the trial's seed, claims
# and signs it, then reproduces it against preset a (same preset: a NOT
# REPRODUCED verdict is a false rejection) and against preset b (3x faster:
# a REPRODUCED latency or throughput claim is a false acceptance). The
# verdicts at the other margins are recomputed from the JSON report's
# intervals, which do not depend on the margin.
# Knobs: REPRODUCE_BENCH_TRIALS (default 40), REPRODUCE_BENCH_REPEATS
# (default 5), REPRODUCE_BENCH_MARGINS (default "10 25", percent; the
# first is the one reproduce runs with), REPRODUCE_BENCH_ALPHA (0.05),
# REPRODUCE_BENCH_WORK (a directory to keep the runs and reports in).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
BIN=$(realpath "$BIN")
TRIALS=${REPRODUCE_BENCH_TRIALS:-40}
REPEATS=${REPRODUCE_BENCH_REPEATS:-5}
MARGINS=${REPRODUCE_BENCH_MARGINS:-"10 25"}
ALPHA=${REPRODUCE_BENCH_ALPHA:-0.05}
margin=${MARGINS%% *}
work=${REPRODUCE_BENCH_WORK:-$(mktemp -d)}
mkdir -p "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${REPRODUCE_BENCH_WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
export BENCHSEAL_PASSWORD=
"$BIN" keygen --out pub --no-password >/dev/null
"$BIN" simulate --listen 127.0.0.1:0 --seed 5 --time-scale 1 --duration 3600s >a.out 2>&1 &
pids+=($!)
"$BIN" simulate --listen 127.0.0.1:0 --seed 5 --time-scale 0.333 --duration 3600s >b.out 2>&1 &
pids+=($!)
url() { for _ in $(seq 100); do grep -o 'http://[0-9.:]*' "$1" && return; sleep 0.1; done; echo "no simulator in $1" >&2; exit 1; }
A=$(url a.out)
B=$(url b.out)
metrics=counts.sent,counts.ok,request_throughput,output_token_throughput,ttft_ns.p50,e2e_ns.p50,tpot_ns.p50
start=$(date +%s)
for t in $(seq "$TRIALS"); do
  d=t$t
  mkdir "$d"
  "$BIN" plan init --out "$d/plan.json" --concurrency 4 --requests 16 --warmup-requests 2 --repeats "$REPEATS" --seed "$t" \
    --input-tokens 16 --output-tokens 8 --slo ttft=2s,e2e=10s,tpot=1s --metrics "$metrics" >/dev/null
  "$BIN" plan sign "$d/plan.json" --key pub.key >/dev/null
  "$BIN" capture --endpoint "$A" --model benchseal-sim --plan "$d/plan.json" --out "$d/run" --progress never >/dev/null 2>&1
  "$BIN" replay "$d/run" --write-claims "$d/run/claims.json" >/dev/null
  "$BIN" pack "$d/run" --out "$d/pub.tar" --key pub.key >/dev/null
  "$BIN" sign "$d/pub.tar" --sigstore-bundle "$d/plan.json.sigstore.json" >/dev/null
  for side in same:$A fast:$B; do
    name=${side%%:*}
    # Exit 0, 3 or 4 is a verdict; anything else is a failure of the run.
    rc=0
    "$BIN" reproduce "$d/pub.tar" --key pub.pub --endpoint "${side#*:}" --model benchseal-sim --out "$d/$name" \
      --margin "$margin%" --alpha "$ALPHA" --progress never --output json --report "$d/$name.json" >/dev/null 2>"$d/$name.err" || rc=$?
    case $rc in 0 | 3 | 4) ;; *)
      cat "$d/$name.err"
      echo "reproduce bench: trial $t ($name) failed with exit $rc"
      exit 1
      ;;
    esac
  done
done
elapsed=$(($(date +%s) - start))
python3 - "$TRIALS" "$REPEATS" "$ALPHA" "$elapsed" "$MARGINS" <<'EOF'
import json, sys
trials, repeats, alpha, elapsed = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
margins = [float(m) / 100 for m in sys.argv[5].split()]
timed = ("ttft_ns", "e2e_ns", "tpot_ns", "request_throughput", "output_token_throughput")

def verdict(c, m):
    # The report's interval does not depend on the margin; the decision does
    # (stats.EquivalenceRatio: inside [1/(1+m), 1+m] or wholly outside).
    if c["kind"] != "ratio" or c["lo"] is None:
        return c["verdict"]
    lo, hi = c["lo"], c["hi"]
    if lo >= 1 / (1 + m) and hi <= 1 + m:
        return "REPRODUCED"
    if hi < 1 / (1 + m) or lo > 1 + m:
        return "NOT REPRODUCED"
    return "INCONCLUSIVE"

def overall(vs):
    if vs and all(v == "REPRODUCED" for v in vs):
        return "REPRODUCED"
    if "NOT REPRODUCED" in vs:
        return "NOT REPRODUCED"
    return "INCONCLUSIVE"

def pct(k, n):
    return "%d/%d (%.1f %%)" % (k, n, 100.0 * k / n) if n else "0/0"

for m in margins:
    for side, label in (("same", "same preset"), ("fast", "3x faster preset")):
        runs = [json.load(open("t%d/%s.json" % (t, side))) for t in range(1, trials + 1)]
        ov = [overall([verdict(c, m) for c in r["claims"]]) for r in runs]
        claims = [verdict(c, m) for r in runs for c in r["claims"] if c["metric"].startswith(timed)]
        print("reproduce: margin %g %%, alpha %g, %d+%d repeats, %d trials, %s: overall REPRODUCED %s, NOT REPRODUCED %s, INCONCLUSIVE %s;"
              " latency/throughput claims REPRODUCED %s, NOT REPRODUCED %s, INCONCLUSIVE %s" % (
                  100 * m, alpha, repeats, repeats, trials, label,
                  pct(ov.count("REPRODUCED"), trials), pct(ov.count("NOT REPRODUCED"), trials), pct(ov.count("INCONCLUSIVE"), trials),
                  pct(claims.count("REPRODUCED"), len(claims)), pct(claims.count("NOT REPRODUCED"), len(claims)), pct(claims.count("INCONCLUSIVE"), len(claims))))
print("reproduce: %d trials (3 captures each) in %s s" % (trials, elapsed))
EOF
