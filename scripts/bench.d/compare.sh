#!/usr/bin/env bash
# compare and decide of two signed 1,000,000-request synthetic bundles: wall
# time and peak RSS next to what they must not exceed, verifying and
# replaying both bundles one after the other: comparing two
# 1,000,000-request bundles should cost at most the time of verifying and
# replaying both, since compare does nothing else.
set -euo pipefail
cd "$(dirname "$0")/../.."
# A multiple of the 6 point × repeat groups: synth gives an uneven share
# to the first groups, which validation now rejects against the manifest.
N=${COMPARE_BENCH_REQUESTS:-1000002}
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
if [ ! -x /usr/bin/time ]; then
  apt-get install -y time >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export BENCHSEAL_PASSWORD=bench SOURCE_DATE_EPOCH=1767225600

# measure NAME CMD...: wall seconds in NAME_s, peak RSS in NAME_mb.
measure() {
  local name=$1
  shift
  /usr/bin/time -f '%e %M' -o "$work/$name.time" "$@" >"$work/$name.out" 2>&1 || {
    cat "$work/$name.out"
    echo "compare bench: $name failed"
    exit 1
  }
  local s k
  read -r s k <"$work/$name.time"
  printf -v "${name}_s" '%s' "$s"
  printf -v "${name}_mb" '%s' "$((k / 1024))"
}

"$BIN" keygen --out "$work/key" >/dev/null
for x in a b; do
  seed=1
  "$BIN" synth --requests "$N" --seed "$seed" --out "$work/$x" >/dev/null
  "$BIN" pack "$work/$x" --out "$work/$x.tar" --key "$work/key.key" >/dev/null
done
measure verify_a "$BIN" verify "$work/a.tar" --key "$work/key.pub"
measure verify_b "$BIN" verify "$work/b.tar" --key "$work/key.pub"
measure replay_a "$BIN" replay "$work/a.tar" --output json
measure replay_b "$BIN" replay "$work/b.tar" --output json
measure compare "$BIN" compare "$work/a.tar" "$work/b.tar" --key "$work/key.pub" --output json
measure decide "$BIN" decide "$work/a.tar" "$work/b.tar" --key "$work/key.pub" --objective max-goodput --output json
budget=$(awk -v a="$verify_a_s" -v b="$verify_b_s" -v c="$replay_a_s" -v d="$replay_b_s" 'BEGIN{printf "%.2f", a+b+c+d}')
echo "compare: two $N-request signed bundles: compare ${compare_s}s (peak RSS ${compare_mb} MB), decide ${decide_s}s (${decide_mb} MB);" \
  "verify+replay of both one after the other ${budget}s (verify ${verify_a_s}s + ${verify_b_s}s, replay ${replay_a_s}s + ${replay_b_s}s)"
awk -v c="$compare_s" -v b="$budget" 'BEGIN{exit !(c <= b * 1.10)}' || { echo "compare bench: compare slower than verify+replay of both"; exit 1; }
