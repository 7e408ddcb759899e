#!/usr/bin/env bash
# Large-run measurements (wall time, peak RSS) for each area: scripts/bench.d/*.sh.
# Everything printed also goes to BENCH_OUT (default bin/bench.txt), headed by the
# date, the machine and the load average at the start and at the end, so a figure
# copied from it carries the conditions it was measured under (docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."
make build >/dev/null
out=${BENCH_OUT:-bin/bench.txt}
mkdir -p "$(dirname "$out")"
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime; }
{
  echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine: $(uname -srm), $(getconf _NPROCESSORS_ONLN) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo 2>/dev/null)"
  echo "load:    $(load) (1, 5, 15 min) at the start"
  for s in scripts/bench.d/*.sh; do
    [ -e "$s" ] || continue
    echo "== $s"
    bash "$s"
  done
  echo "load:    $(load) (1, 5, 15 min) at the end"
} 2>&1 | tee "$out"
