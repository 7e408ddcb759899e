#!/bin/sh
# arm64-check.sh: benchseal prints the same bytes on linux/arm64 as on
# linux/amd64. Go may fuse x*y+z into one FMA instruction on arm64 (the
# spec allows it; an explicit float64(...) conversion prevents it), which
# rounds once instead of twice and changes the last digit of a float.
#  1. benchseal's own code in the linux/arm64 binary holds no fused
#     multiply-add (go tool objdump: FMADDD, FMSUBD, FNMADDD, FNMSUBD and
#     their single-precision forms), each one found named by file:line;
#  2. the arm64 binary run under qemu-user (Debian qemu-user-static,
#     installed when missing) gives byte for byte the amd64 binary's
#     replay (every definitions, JSON and text), compare and decide outputs
#     over a fixed corpus: testdata/compat's bundles and two seeded
#     synthetic runs (closed and open loop, three repeats).
set -eu
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CGO_ENABLED=0
GOOS=linux GOARCH=amd64 go build -o "$work/amd64" ./cmd/benchseal
GOOS=linux GOARCH=arm64 go build -o "$work/arm64" ./cmd/benchseal

go tool objdump -s 'github.com/benchseal/benchseal' "$work/arm64" >"$work/objdump"
if grep -E '[[:space:]](FMADD|FMSUB|FNMADD|FNMSUB)[DS][[:space:]]' "$work/objdump" >"$work/fused"; then
	echo "arm64-check: fused multiply-add in benchseal's code (make the product explicit: float64(x*y) + z):" >&2
	awk '{print $1}' "$work/fused" | sort | uniq -c >&2
	exit 1
fi

qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if [ -z "$qemu" ]; then
	apt-get install -y -qq qemu-user-static >/dev/null 2>&1 || {
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null
	}
	qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64)
fi

"$work/amd64" synth --out "$work/closed" --mode concurrency --points 2,8 --repeats 3 --requests 600 --seed 3 >/dev/null
"$work/amd64" synth --out "$work/open" --mode rate --points 8,24,48 --repeats 3 --requests 900 --seed 5 >/dev/null
runs="$work/closed $work/open"
for b in testdata/compat/*.tar; do runs="$runs $b"; done
defs=$("$work/amd64" replay --help | sed -n 's/^  \([a-z-]*\) — .*/\1/p')

# outputs ARCH: every output of the corpus under the binary of ARCH, in
# $work/out-ARCH.
outputs() {
	bin="$work/$1"
	run=""
	[ "$1" = arm64 ] && run=$qemu
	out="$work/out-$1"
	mkdir -p "$out"
	i=0
	for r in $runs; do
		i=$((i + 1))
		for d in $defs; do
			for o in json text; do
				$run "$bin" replay "$r" --definitions "$d" --output "$o" --slo ttft=20ms,e2e=2s,tpot=20ms >"$out/replay-$i-$d.$o" 2>&1 || echo "exit $?" >>"$out/replay-$i-$d.$o"
			done
		done
	done
	for o in json text; do
		$run "$bin" compare "$work/closed" "$work/open" --allow-different-workload --output "$o" >"$out/compare.$o" 2>&1 || echo "exit $?" >>"$out/compare.$o"
		$run "$bin" decide "$work/closed" "$work/open" --allow-different-workload --objective max-goodput --slo ttft=20ms,e2e=2s --output "$o" >"$out/decide.$o" 2>&1 || echo "exit $?" >>"$out/decide.$o"
	done
}
outputs amd64
outputs arm64
if ! diff -r "$work/out-amd64" "$work/out-arm64" >"$work/diff"; then
	echo "arm64-check: linux/arm64 output differs from linux/amd64's:" >&2
	head -n 60 "$work/diff" >&2
	exit 1
fi
echo "arm64-check: $(ls "$work/out-amd64" | wc -l) outputs identical on linux/amd64 and linux/arm64 (under $(basename "$qemu")); no fused multiply-add in benchseal's arm64 code"
