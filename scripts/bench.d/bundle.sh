#!/usr/bin/env bash
# Bundles of a 1,000,000-request synthetic run: bundle size, pack, sign and
# verify wall time and peak RSS (/usr/bin/time -v), next to sha256sum and
# zstd -t over the same blob files. verify must stream: peak RSS < 256 MB.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${BUNDLE_BENCH_REQUESTS:-1000002}
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
if ! command -v zstd >/dev/null || [ ! -x /usr/bin/time ]; then
  apt-get install -y time zstd >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time zstd >/dev/null; }
fi
if ! "$BIN" synth --help >/dev/null 2>&1; then
  echo "bundle bench: 'benchseal synth' is not available yet; skipped"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export BENCHSEAL_PASSWORD=bench SOURCE_DATE_EPOCH=1767225600

# measure NAME CMD...: runs CMD under /usr/bin/time -v; sets NAME_s and NAME_mb.
measure() {
  local name=$1
  shift
  /usr/bin/time -v -o "$work/$name.time" "$@" >"$work/$name.out" 2>&1 || {
    cat "$work/$name.out" "$work/$name.time"
    echo "bundle bench: $name failed"
    exit 1
  }
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$work/$name.time")
  rss=$(awk -F': ' '/Maximum resident set size/{print $2}' "$work/$name.time")
  printf -v "${name}_s" '%s' "$(awk -v t="$wall" 'BEGIN{n=split(t,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; printf "%.2f", s}')"
  printf -v "${name}_mb" '%s' "$((rss / 1024))"
}

"$BIN" synth --requests "$N" --out "$work/run" >/dev/null
"$BIN" keygen --out "$work/key" >/dev/null
measure pack "$BIN" pack "$work/run" --out "$work/run.tar"
measure sign "$BIN" sign "$work/run.tar" --key "$work/key.key"
measure verify "$BIN" verify "$work/run.tar" --key "$work/key.pub"
grep -q '^VERIFIED$' "$work/verify.out" || { cat "$work/verify.out"; exit 1; }

# The same blobs as files (a directory bundle of the same run).
"$BIN" pack "$work/run" --out "$work/dir" >/dev/null
blobs=("$work"/dir/blobs/sha256/*)
zst=()
for f in "${blobs[@]}"; do
  [ "$(head -c4 "$f" | od -An -tx1 | tr -d ' \n')" = "28b52ffd" ] && zst+=("$f")
done
measure sha sha256sum "${blobs[@]}"
measure zstdt zstd -t -q "${zst[@]}"

size=$(stat -c %s "$work/run.tar")
runsize=$(du -sb "$work/run" | cut -f1)
layers=$(grep -c 'jsonl.zst' <("$BIN" inspect "$work/run.tar") || true)
echo "bundle: $N requests, run dir $((runsize / 1048576)) MiB -> bundle $((size / 1048576)) MiB ($size bytes, $layers zstd layers)"
echo "bundle: pack ${pack_s}s (peak RSS ${pack_mb} MB); sign ${sign_s}s (${sign_mb} MB); verify ${verify_s}s (peak RSS ${verify_mb} MB)"
echo "bundle: floor over the same blobs: sha256sum ${sha_s}s, zstd -t ${zstdt_s}s"
if [ "$verify_mb" -ge 256 ]; then
  echo "bundle bench: verify peak RSS ${verify_mb} MB is not under 256 MB"
  exit 1
fi
