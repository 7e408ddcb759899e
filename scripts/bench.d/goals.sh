#!/usr/bin/env bash
# The goals of docs/performance.md, measured at each run size in
# BENCH_SIZES (default "1000002 5000004"; make bench-large: 20000004):
#   memory: validate, pack --key, verify (claims recomputed), replay of the
#     run directory and of the bundle, compare and decide of two signed
#     bundles each under 256 MiB peak RSS (/usr/bin/time %M); replay
#     --definitions guidellm of the run directory too, at BENCH_CPU_SIZE
#     only (its rate distributions take an event per chunk, about 38 a
#     request, spilled past a fixed budget: replay/guidellm_spill.go);
#   CPU (user + sys) within 1.5x of the floor, the standard tools doing the
#     work no reader can skip over the same bytes, timed in the same run:
#     pack --key, verify, replay (dir) and replay (bundle), at 1M requests
#     (BENCH_CPU_SIZE; printed at every size);
#   compare within the time of verifying and replaying both bundles one
#     after the other (plus 10 %).
# The runs are synthetic (benchseal synth, 3 points x 2 repeats, records
# zstd) with claims as the tour writes them (replay --write-claims). Every
# figure is printed with the load average (1 min) at the moment it was taken
# and every floor with its command; each line checked against a goal ends in
# "ok" or "MISS", and the script exits 1 after the last size when any goal
# was missed. Lines starting "goal:" are what scripts/bench-doc.sh copies
# into README.md and docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZES=${BENCH_SIZES:-"1000002 5000004"}
CPU_SIZE=${BENCH_CPU_SIZE:-1000002}
PEAK_MIB=${BENCH_PEAK_MIB:-256}
CPU_RATIO=${BENCH_CPU_RATIO:-1.5}
BIN=${BIN:-bin/benchseal}
[ -x "$BIN" ] || go build -trimpath -o "$BIN" ./cmd/benchseal
BIN=$(realpath "$BIN")
if ! command -v zstd >/dev/null || ! command -v openssl >/dev/null || [ ! -x /usr/bin/time ]; then
  apt-get install -y time zstd openssl >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time zstd openssl >/dev/null; }
fi
export BENCHSEAL_PASSWORD=bench SOURCE_DATE_EPOCH=1767225600
work=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/bench-goals.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The Go reader floor (internal/benchfloor), printed beside the replay
# (dir) floor with no goal of its own: what the least reader of the JSON
# text takes, so the part of replay's ratio that parsing alone costs is
# measured, not argued.
go build -trimpath -o "$work/benchfloor" ./internal/benchfloor
missed=0
load1() { cut -d' ' -f1 /proc/loadavg; }

# measure NAME CMD...: runs CMD (stdout to $work/NAME.out) under
# /usr/bin/time; sets NAME_cpu (user + sys s), NAME_wall (s), NAME_mib
# (peak RSS) and NAME_load (1-min load average when it ended).
measure() {
  local name=$1
  shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" || {
    tail -n 5 "$work/$name.out" "$work/$name.err" || true
    echo "bench goals: $name failed: $*"
    exit 1
  }
  local e u s k
  read -r e u s k <"$work/$name.time"
  printf -v "${name}_wall" '%s' "$e"
  printf -v "${name}_cpu" '%s' "$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u + s}')"
  printf -v "${name}_mib" '%s' "$((k / 1024))"
  printf -v "${name}_load" '%s' "$(load1)"
}

# verdict OK: "ok", or "MISS" (remembered in $work/missed: verdict runs
# in a command substitution, whose variables do not come back).
verdict() {
  if [ "$1" = 1 ]; then echo ok; else
    echo x >>"$work/missed"
    echo MISS
  fi
}

# peak LABEL NAME N: the peak-RSS line of measurement NAME.
peak() {
  local mib wall cpu load
  eval "mib=\$${2}_mib wall=\$${2}_wall cpu=\$${2}_cpu load=\$${2}_load"
  printf 'goal: %-8s %-16s peak RSS %5d MiB (goal < %d)   cpu %7.2fs  wall %7.2fs  load %5s  %s\n' \
    "$3" "$1" "$mib" "$PEAK_MIB" "$cpu" "$wall" "$load" "$(verdict "$((mib < PEAK_MIB))")"
}

# ratio LABEL NAME FLOOR N: the CPU-ratio line of NAME to floor FLOOR.
ratio() {
  local c f l lf r ok
  eval "c=\$${2}_cpu f=\$${3}_cpu l=\$${2}_load lf=\$${3}_load"
  r=$(awk -v c="$c" -v f="$f" 'BEGIN{printf "%.2f", (f > 0 ? c / f : 0)}')
  if [ "$4" = "$CPU_SIZE" ]; then
    ok=$(verdict "$(awk -v r="$r" -v g="$CPU_RATIO" 'BEGIN{print (r <= g) ? 1 : 0}')")
  else
    ok="(goal at $CPU_SIZE requests)"
  fi
  printf 'goal: %-8s %-16s cpu %7.2fs / floor %7.2fs = %5.2fx (goal <= %s)   load %s / %s  %s\n' \
    "$4" "$1" "$c" "$f" "$r" "$CPU_RATIO" "$l" "$lf" "$ok"
}

for N in $SIZES; do
  need=$((N * 2200))
  avail=$(($(df -Pk "$work" | awk 'NR==2{print $4}') * 1024))
  if [ "$avail" -lt "$need" ]; then
    echo "bench goals: $N requests need about $((need >> 30)) GiB free under $work, $((avail >> 30)) GiB are: not measured"
    missed=1
    continue
  fi
  d=$work/$N
  mkdir -p "$d"
  echo "bench goals: $N requests: synthesizing the run, claims as the tour writes them (load $(load1))"
  "$BIN" synth --requests "$N" --zstd --out "$d/run" >/dev/null
  "$BIN" replay "$d/run" --write-claims "$d/run/claims.json" >/dev/null
  "$BIN" keygen --out "$d/key" >/dev/null
  mapfile -t records < <(find "$d/run" -name '*.jsonl.zst' | sort)
  [ "${#records[@]}" -gt 0 ] || { echo "bench goals: synth wrote no records.jsonl.zst"; exit 1; }

  measure validate "$BIN" validate "$d/run"
  measure pack "$BIN" pack "$d/run" --out "$d/a" --key "$d/key.key"
  measure verify "$BIN" verify "$d/a" --key "$d/key.pub"
  grep -q '^VERIFIED' "$work/verify.out" || { cat "$work/verify.out"; echo "bench goals: verify did not say VERIFIED"; exit 1; }
  measure replay_dir "$BIN" replay "$d/run" --output json
  measure replay_bundle "$BIN" replay "$d/a" --output json
  if [ "$N" = "$CPU_SIZE" ]; then
    measure replay_guidellm "$BIN" replay "$d/run" --definitions guidellm --output json
  fi

  # The floors over the same bytes: the bundle's blobs (a directory bundle).
  blobs=("$d"/a/blobs/sha256/*)
  zst=()
  for f in "${blobs[@]}"; do
    [ "$(head -c4 "$f" | od -An -tx1 | tr -d ' \n')" = "28b52ffd" ] && zst+=("$f")
  done
  # The hashing floor is the fastest standard SHA-256 tool here.
  measure h_openssl openssl dgst -sha256 "${blobs[@]}"
  measure h_sha256sum sha256sum "${blobs[@]}"
  if awk -v a="$h_openssl_cpu" -v b="$h_sha256sum_cpu" 'BEGIN{exit !(a <= b)}'; then HASH="openssl dgst -sha256"; else HASH="sha256sum"; fi
  echo "floor: $N requests: hashing $(du -cb "${blobs[@]}" | tail -1 | cut -f1) bytes of blobs: openssl dgst -sha256 cpu ${h_openssl_cpu}s, sha256sum cpu ${h_sha256sum_cpu}s: the floor hashes with $HASH"
  export HASH
  # What a bundle reader cannot skip: every stored blob hashed, every zstd
  # layer decompressed and its uncompressed content hashed.
  bundle_floor='$HASH "$@" >/dev/null && for z in $ZST; do zstd -dc -q "$z" | $HASH >/dev/null; done'
  # What pack cannot skip: the records decompressed, their uncompressed
  # content hashed, compressed again (zstd -3: the pinned encoder level)
  # and the result hashed.
  pack_floor='mkfifo "$W/u"; $HASH <"$W/u" >/dev/null & zstd -dc -q "$@" | tee "$W/u" | zstd -3 -q | $HASH >/dev/null; wait; rm -f "$W/u"'
  replay_floor='zstd -dc -q "$@" | wc -l >/dev/null'
  export ZST="${zst[*]}" W="$work"
  measure bundle_floor sh -c "$bundle_floor" sh "${blobs[@]}"
  measure pack_floor sh -c "$pack_floor" sh "${records[@]}"
  measure replay_floor sh -c "$replay_floor" sh "${records[@]}"
  echo "floor: $N requests: verify, replay (bundle): $bundle_floor   (\$@ every blob, \$ZST the zstd ones; cpu ${bundle_floor_cpu}s)"
  echo "floor: $N requests: pack --key: $pack_floor   (\$@ the records files; cpu ${pack_floor_cpu}s)"
  echo "floor: $N requests: replay (dir): $replay_floor   (\$@ the records files; cpu ${replay_floor_cpu}s)"
  measure reader_floor "$work/benchfloor" "${records[@]}"
  echo "floor: $N requests: the least Go reader of the records (no goal): internal/benchfloor \"\$@\" (klauspost/compress decompression and a digit loop over every integer, $(cut -d' ' -f1 "$work/reader_floor.out") of them, nothing checked or kept; cpu ${reader_floor_cpu}s): $(awk -v a="$reader_floor_cpu" -v b="$replay_floor_cpu" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}')x the replay (dir) floor, replay (dir) $(awk -v a="$replay_dir_cpu" -v b="$reader_floor_cpu" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}')x it"

  # compare and decide: two bundles of two runs of the same workload
  # (compare refuses runs whose workloads differ, and synth's workload
  # follows its seed; it refuses one run given twice, and synth's run_id
  # names its request count): the second run has one more request per
  # point and repeat, packed with the same key. Both are verified and
  # replayed in full.
  "$BIN" synth --requests "$((N + 6))" --zstd --out "$d/run2" >/dev/null
  "$BIN" replay "$d/run2" --write-claims "$d/run2/claims.json" >/dev/null
  "$BIN" pack "$d/run2" --out "$d/b" --key "$d/key.key" >/dev/null
  measure compare "$BIN" compare "$d/a" "$d/b" --key "$d/key.pub" --output json
  measure decide "$BIN" decide "$d/a" "$d/b" --key "$d/key.pub" --objective max-goodput --output json

  size=$(du -sb "$d/a" | cut -f1)
  echo "bench goals: $N requests: $(du -cb "${records[@]}" | tail -1 | cut -f1) bytes of zstd records, bundle $((size >> 20)) MiB, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  peak validate validate "$N"
  peak "pack --key" pack "$N"
  peak verify verify "$N"
  peak "replay (dir)" replay_dir "$N"
  peak "replay (bundle)" replay_bundle "$N"
  [ "$N" != "$CPU_SIZE" ] || peak "replay guidellm" replay_guidellm "$N"
  peak compare compare "$N"
  peak decide decide "$N"
  ratio "pack --key" pack pack_floor "$N"
  ratio verify verify bundle_floor "$N"
  ratio "replay (dir)" replay_dir replay_floor "$N"
  ratio "replay (bundle)" replay_bundle bundle_floor "$N"
  budget=$(awk -v a="$verify_wall" -v c="$replay_bundle_wall" 'BEGIN{printf "%.2f", 2 * (a + c)}')
  printf 'goal: %-8s %-16s wall %7.2fs, verify+replay of both one after the other %7.2fs (goal <= 1.10x)   load %s  %s\n' \
    "$N" compare "$compare_wall" "$budget" "$compare_load" "$(verdict "$(awk -v c="$compare_wall" -v b="$budget" 'BEGIN{print (c <= b * 1.10) ? 1 : 0}')")"
  rm -rf "$d"
done
if [ "$missed" != 0 ] || [ -s "$work/missed" ]; then
  echo "bench goals: FAIL: goals missed (the lines marked MISS)"
  exit 1
fi
echo "bench goals: every goal met"
