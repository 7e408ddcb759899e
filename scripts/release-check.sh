#!/usr/bin/env bash
# make release-check: builds the release twice from the same commit into
# two directories, the second with an empty Go build cache (every package
# compiled again, nothing reused), and requires identical SHA256SUMS,
# provenance statements and files. TARGETS narrows the targets (default
# all six, as make release).
# Usage: scripts/release-check.sh VERSION
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:-v0.0.0}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Both builds are of the commit HEAD is at the start, even if it moves
# while they run.
REV=$(git rev-parse HEAD)
export REV
VERSION=$VERSION DIST=$WORK/a bash scripts/release.sh >/dev/null
GOCACHE=$WORK/gocache VERSION=$VERSION DIST=$WORK/b bash scripts/release.sh >/dev/null
if diff -r "$WORK/a" "$WORK/b" && cmp "$WORK/a/SHA256SUMS" "$WORK/b/SHA256SUMS"; then
  echo "release-check: two builds of $REV (the second with an empty build cache) are identical:"
  cat "$WORK/a/SHA256SUMS"
else
  echo "release-check: the two builds differ" >&2
  exit 1
fi
