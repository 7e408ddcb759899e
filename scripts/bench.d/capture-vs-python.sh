#!/usr/bin/env bash
# capture's CPU per streamed chunk beside a Python asyncio client's
# (scripts/bench.d/pyclient.py: aiohttp doing what vLLM's `bench serve` chat
# request function does per chunk), against the simulator:
#   - the simulator is pinned to CPU 0 (taskset), each client to CPU 1, and
#     the two clients run back to back at each level;
#   - closed loop at each concurrency: CPU ms per 1,000 content chunks
#     (user+sys of the client process from getrusage, via /usr/bin/time,
#     start-up included) and chunks/s;
#   - open loop (poisson): the rate is raised until the client's send-lag
#     p99 reaches 1 ms; the highest rate below is reported with its p99;
#   - where `perf stat` can count tracepoints (root or perf_event_paranoid
#     <= -1): system calls, socket reads (read + recvfrom, whether they
#     return bytes or not) and context switches per 1,000 chunks, which show
#     how many chunks each client takes per wake-up;
#   - the floor: BenchmarkReadFloor (capture/floor_linux_test.go) reads the
#     same streams with nothing else done, through net/http and through one
#     goroutine over a raw epoll, pinned like the clients
#     (CAPTURE_VS_FLOOR=0 skips it).
# The machine's cores may be shared with other work: figures are noisy, so
# every level is measured CAPTURE_VS_REPEATS times.
# Knobs: CAPTURE_VS_SECONDS (per level, default 6), CAPTURE_VS_CONCURRENCY
# ("16 64 256 1024"), CAPTURE_VS_RATES, CAPTURE_VS_REPEATS (default 2),
# CAPTURE_VS_TOKENS (closed loop output tokens, default 128),
# CAPTURE_VS_RATE_TOKENS (open loop, default 64), CAPTURE_VS_FLOOR (1).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
SECS=${CAPTURE_VS_SECONDS:-6}
CONCS=${CAPTURE_VS_CONCURRENCY:-"16 64 256 1024"}
RATES=${CAPTURE_VS_RATES:-"200 400 800 1200 1600 2000 2400 3200 4000"}
REPEATS=${CAPTURE_VS_REPEATS:-2}
TOKENS=${CAPTURE_VS_TOKENS:-128}
RTOKENS=${CAPTURE_VS_RATE_TOKENS:-64}
PY=/usr/bin/python3
AIOHTTP_DEB=${AIOHTTP_DEB:-3.8.4-1+deb12u2} # Debian 12's python3-aiohttp

if [ "$(nproc)" -lt 2 ]; then echo "capture-vs-python: needs 2 CPUs for taskset pinning; skipped"; exit 0; fi
if ! "$PY" -c 'import aiohttp' 2>/dev/null; then
  echo "installing Debian python3-aiohttp=$AIOHTTP_DEB"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  if ! apt-get install -y -qq "python3-aiohttp=$AIOHTTP_DEB" >/dev/null; then
    echo "python3-aiohttp=$AIOHTTP_DEB is no longer in the archive; installing Debian's current one"
    apt-get install -y -qq python3-aiohttp >/dev/null
  fi
fi
echo "python3-aiohttp $("$PY" -c 'import aiohttp; print(aiohttp.__version__)')"
work=$(mktemp -d)
sim_pid=
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# The simulator as in docs/capture.md's comparison (--time-scale 0.1: 1 ms per token, one token
# per chunk), without the per-running slowdown or a queue limit, so the
# offered load reaches the clients.
taskset -c 0 "$BIN" simulate --listen 127.0.0.1:0 --time-scale 0.1 --prefill-per-token 0 \
  --decode-per-running 0 --max-running 100000 --queue-limit 100000 >"$work/sim.out" &
sim_pid=$!
for _ in $(seq 50); do grep -q 'http://' "$work/sim.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*' "$work/sim.out")

# perf stat around each client when it can count system calls.
events=raw_syscalls:sys_enter,context-switches,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom
perfstat=()
if perf stat -x, -o "$work/p" -e "$events" true 2>/dev/null; then perfstat=(perf stat -x, -o "$work/perf" -e "$events" --); fi
# counts prints "syscalls reads ctxsw" of the last client run (-1 without perf).
counts() {
  if [ ${#perfstat[@]} -eq 0 ]; then echo "-1 -1 -1"; return; fi
  awk -F, '$3=="raw_syscalls:sys_enter"{s=$1} $3=="context-switches"{c=$1} $3~/sys_enter_read$|sys_enter_recvfrom$/{r+=$1} END{print s+0, r+0, c+0}' "$work/perf"
}

# run_capture DIR CPUFILE capture-args... ; prints
# "requests ok chunks cpu_s wall_s lag50 lag99 lagmax sys_s syscalls reads ctxsw" (lags in µs)
run_capture() {
  local dir=$1 tf=$2; shift 2
  taskset -c 1 "${perfstat[@]}" /usr/bin/time -f '%U %S' -o "$tf" "$BIN" capture --endpoint "$url" --model benchseal-sim --out "$dir" \
    --input-tokens 16 --no-probe --progress never "$@" >/dev/null
  "$PY" - "$dir" "$(awk '{print $1+$2}' "$tf")" "$(awk '{print $2}' "$tf")" <<'EOF'
import json, sys
d, cpu, sy = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
m = [r for r in map(json.loads, open(d + "/records.jsonl")) if r["phase"] == "measure"]
lags = sorted(r["sent_ns"] - r["scheduled_ns"] for r in m if r.get("scheduled_ns") is not None)
chunks = sum(len(r["chunks_ns"]) for r in m)
ok = sum(r["status"] == "ok" for r in m)
t0 = min(r["sent_ns"] for r in m); t1 = max(r["end_ns"] for r in m)
p = lambda q: lags[max(1, -(-q * len(lags) // 100)) - 1] / 1e3 if lags else 0
print(len(m), ok, chunks, cpu, (t1 - t0) / 1e9, p(50), p(99), lags[-1] / 1e3 if lags else 0, sy, end="")
EOF
  echo " $(counts)"
}

# run_py CPUFILE pyclient-args... ; same columns
run_py() {
  local tf=$1; shift
  taskset -c 1 "${perfstat[@]}" /usr/bin/time -f '%U %S' -o "$tf" "$PY" scripts/bench.d/pyclient.py --url "$url" --model benchseal-sim \
    --input-tokens 16 "$@" >"$work/py.json"
  "$PY" - "$work/py.json" "$(awk '{print $1+$2}' "$tf")" "$(awk '{print $2}' "$tf")" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1])); cpu = float(sys.argv[2]); sy = float(sys.argv[3])
print(j["requests"], j["ok"], j["chunks"], cpu, j["wall_s"], j["lag_p50_us"] or 0, j["lag_p99_us"] or 0, j["lag_max_us"] or 0, sy, end="")
EOF
  echo " $(counts)"
}

row() { # label client "requests ok chunks cpu wall lag50 lag99 lagmax sys syscalls reads ctxsw" [lags]
  echo "$3" | awk -v l="$1" -v c="$2" -v lags="${4:-}" '{k=($3>0?$3:1)/1000
    printf "%8s %-8s %7d %7d %9d %9.0f %10.2f %5.0f%%", l, c, $1, $2, $3, $3/$5, $4*1e3/k, ($4>0?100*$9/$4:0)
    if ($10 >= 0) printf " %9.0f %9.0f %9.0f", $10/k, $11/k, $12/k; else printf " %9s %9s %9s", "-", "-", "-"
    if (lags != "") printf " %9.0f %9.0f", $6, $7; printf "\n"}'
}

echo "capture vs python: simulator on CPU 0, clients on CPU 1; load average $(cut -d' ' -f1-3 /proc/loadavg); ${SECS}s per level"
echo "closed loop, ${TOKENS} tokens per request (1 ms/token, one token per chunk)"
printf '%8s %-8s %7s %7s %9s %9s %10s %6s %9s %9s %9s\n' conc client sent ok chunks chunks/s cpums/1kc sys sysc/1kc reads/1kc ctxsw/1kc
for rep in $(seq "$REPEATS"); do
  for c in $CONCS; do
    out=$(run_capture "$work/c$c-$rep" "$work/t" --concurrency "$c" --duration "${SECS}s" --output-tokens "$TOKENS")
    row "$c" capture "$out"
    out=$(run_py "$work/t" --concurrency "$c" --duration "$SECS" --output-tokens "$TOKENS")
    row "$c" python "$out"
  done
done

if [ "${CAPTURE_VS_FLOOR:-1}" != 0 ]; then
  echo "floor: the same streams read with nothing else done (BenchmarkReadFloor, ${SECS}s not applied: 2 requests per stream)"
  go test -c -o "$work/capture.test" ./capture
  printf '%8s %-14s %9s %10s %9s\n' conc reader chunks/s cpums/1kc reads/1kc
  BENCHSEAL_BENCH_ENDPOINT=$url taskset -c 1 "$work/capture.test" -test.run '^$' -test.benchtime 1x \
    -test.count "$REPEATS" -test.bench "ReadFloor/./^c($(echo $CONCS | tr ' ' '|'))\$" |
    awk '/^BenchmarkReadFloor/{split($1, n, "/"); sub(/-[0-9]+$/, "", n[3]); sub(/^c/, "", n[3])
      for (i = 3; i < NF; i++) v[$(i+1)] = $i
      printf "%8s %-14s %9.0f %10.2f %9.0f\n", n[3], "floor-" n[2], v["chunks/s"], v["cpu-ms/1kchunks"], v["reads/1kchunks"]}'
fi

echo "open loop (poisson), ${RTOKENS} tokens per request: highest rate with send-lag p99 < 1 ms"
printf '%8s %-8s %7s %7s %9s %9s %10s %6s %9s %9s %9s %9s %9s\n' rate/s client sent ok chunks chunks/s cpums/1kc sys sysc/1kc reads/1kc ctxsw/1kc lag50µs lag99µs
for rep in $(seq "$REPEATS"); do
  for client in capture python; do
    best= first=
    for r in $RATES; do
      if [ "$client" = capture ]; then
        n=$(awk -v r="$r" -v s="$SECS" 'BEGIN{printf "%d", r*s}')
        out=$(run_capture "$work/r$r-$rep" "$work/t" --rate "$r" --requests "$n" --output-tokens "$RTOKENS")
        rm -rf "$work/r$r-$rep"
      else
        out=$(run_py "$work/t" --rate "$r" --duration "$SECS" --output-tokens "$RTOKENS" --seed "$rep")
      fi
      p99=$(echo "$out" | awk '{print $7}')
      [ -n "$first" ] || first="$r $out"
      if awk -v p="$p99" 'BEGIN{exit !(p < 1000)}'; then best="$r $out"; else break; fi
    done
    if [ -n "$best" ]; then
      row "${best%% *}" "$client" "${best#* }" lags
    else
      row "${first%% *}" "$client" "${first#* }" lags
      printf '%8s %-8s (send-lag p99 >= 1 ms already at the lowest rate tried)\n' "" "$client"
    fi
  done
done
