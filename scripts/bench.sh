#!/usr/bin/env bash
# Large-run measurements (wall time, peak RSS) for each area: scripts/bench.d/*.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
make build >/dev/null
for s in scripts/bench.d/*.sh; do
  [ -e "$s" ] || continue
  echo "== $s"
  bash "$s"
done
