#!/usr/bin/env bash
# Runs every Go fuzz target in the module for the given time each, with a
# short minimisation time (Go's default of 60 s per new input left most
# targets minimising instead of fuzzing), and prints the inputs each target
# executed. New interesting inputs stay in the build cache; crashers are
# written under the package's testdata/fuzz/ (commit them).
# Usage: scripts/fuzz.sh [FUZZTIME] [TARGET-REGEXP]
set -euo pipefail
fuzztime=${1:-30s}
only=${2:-.}
minimize=${FUZZMINIMIZETIME:-2s}
cd "$(dirname "$0")/.."
status=0
summary=""
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' | grep -E "$only" || true); do
    echo "== $pkg $target ($fuzztime, minimise $minimize)"
    log=$(mktemp)
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$pkg" 2>&1 | tee "$log" | grep -v '^fuzz: elapsed' || true
    if ! grep -q '^ok' "$log"; then status=1; fi
    execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    summary+=$(printf '%-55s %-28s %12s inputs\n' "$pkg" "$target" "${execs:-?}")$'\n'
    rm -f "$log"
  done
done
echo "== inputs executed per target in $fuzztime"
printf '%s' "$summary"
exit $status
