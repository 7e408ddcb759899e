#!/usr/bin/env bash
# make bench: the goals (scripts/bench.d/goals.sh: peaks and CPU ratios to
# floors measured in the same run, at BENCH_SIZES requests), then every other
# area's large-run measurement (scripts/bench.d/*.sh; BENCH_GOALS_ONLY=1
# skips them). Everything printed also goes to BENCH_OUT (default
# bin/bench.txt), headed by the date, the machine and the load average at
# the start and at the end, so a figure copied from it carries the
# conditions it was measured under; scripts/bench-doc.py turns it into the
# performance sections of README.md and docs/performance.md. Exits 1 when a
# goal was missed or a script failed, after running them all.
set -euo pipefail
cd "$(dirname "$0")/.."
make build >/dev/null
out=${BENCH_OUT:-bin/bench.txt}
mkdir -p "$(dirname "$out")"
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }
status=$(mktemp)
trap 'rm -f "$status"' EXIT
{
  echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(uname -srm), $(getconf _NPROCESSORS_ONLN) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo 2>/dev/null)"
  echo "load:    $(load) (1, 5, 15 min) at the start"
  scripts=(scripts/bench.d/goals.sh)
  if [ "${BENCH_GOALS_ONLY:-0}" != 1 ]; then
    for s in scripts/bench.d/*.sh; do
      [ "$s" = scripts/bench.d/goals.sh ] || scripts+=("$s")
    done
  fi
  for s in "${scripts[@]}"; do
    echo "== $s"
    bash "$s" || { echo "== $s: FAILED"; echo "$s" >>"$status"; }
  done
  echo "load:    $(load) (1, 5, 15 min) at the end"
} 2>&1 | tee "$out"
if [ -s "$status" ]; then
  echo "bench: failed: $(tr '\n' ' ' <"$status")(output in $out)"
  exit 1
fi
