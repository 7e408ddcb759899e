#!/usr/bin/env bash
# crashtest: kill pack (directory, tar, --key), sign (directory, tar) and
# capture with SIGKILL at random instants, KILLS times each (default 20), and
# check after every kill that the output path holds nothing, the previous
# good bundle, or a complete new one that verifies; then that the next run
# succeeds and leaves no staging entry (.<out>.benchseal-*) behind.
# Usage: scripts/crashtest.sh [KILLS] [SCENARIOS]   (make crashtest)
# SCENARIOS: a regexp over "pack", "sign", "capture" (default: all).
set -u
KILLS=${1:-${KILLS:-20}}
ONLY=${2:-${CRASHTEST_ONLY:-.}}
want() { grep -Eq "$ONLY" <<<"$1"; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/bin/benchseal}
[ -x "$BIN" ] || { echo "crashtest: build $BIN first (make build)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/benchseal-crashtest.XXXXXX")
trap 'rm -rf "$W"' EXIT
export BENCHSEAL_PASSWORD= SOURCE_DATE_EPOCH=1767225600
cd "$W"
fail=0
bad() { echo "  FAIL: $*"; fail=$((fail + 1)); }

"$BIN" synth --out run --requests 9996 --zstd >/dev/null || exit 1
"$BIN" keygen --out k1 --no-password >/dev/null 2>&1 && "$BIN" keygen --out k2 --no-password >/dev/null 2>&1 || exit 1

# ms: wall time of a command in milliseconds.
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
# killat CMD...: run CMD, SIGKILL it after a random delay in [0, 1.2 T].
killat() {
	local t=$1; shift
	"$@" >/dev/null 2>&1 &
	local pid=$!
	local d=$((RANDOM * 12 * t / 327670))
	sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
	kill -KILL "$pid" 2>/dev/null && killed=$((killed + 1))
	wait "$pid" 2>/dev/null
}
staging() { ls -a "$(dirname "$1")" | grep -c "^\.$(basename "$1")\.benchseal-" ; }

# check_bundle PATH VERIFYARGS...: absent, or verifies.
check_bundle() {
	local p=$1; shift
	if [ ! -e "$p" ]; then absent=$((absent + 1)); return; fi
	if "$BIN" verify "$p" "$@" >/dev/null 2>&1; then complete=$((complete + 1)); else bad "$p present but does not verify after kill $i"; fi
}

scenario() { # name out verifyargs... -- cmd...
	local name=$1 out=$2; shift 2
	local vargs=() cmd=()
	while [ "$1" != -- ]; do vargs+=("$1"); shift; done
	shift
	cmd=("$@")
	rm -rf "$out" "$out.sigstore.json"
	local t; t=$(ms "${cmd[@]}")
	rm -rf "$out" "$out.sigstore.json"
	killed=0 absent=0 complete=0
	for i in $(seq "$KILLS"); do
		killat "$t" "${cmd[@]}"
		check_bundle "$out" "${vargs[@]}"
		rm -rf "$out" "$out.sigstore.json"
		# The next run must succeed and reclaim every leftover.
		"${cmd[@]}" >/dev/null 2>"$W/err" || bad "run after kill $i failed: $(cat "$W/err")"
		[ "$(staging "$out")" = 0 ] || bad "staging left after the run following kill $i: $(ls -a "$(dirname "$out")")"
		"$BIN" verify "$out" "${vargs[@]}" >/dev/null 2>&1 || bad "$out does not verify after the run following kill $i"
		rm -rf "$out" "$out.sigstore.json"
	done
	printf '%-22s run %5d ms  kills %2d (SIGKILL landed %2d)  after kill: absent %2d, complete+verified %2d\n' "$name" "$t" "$KILLS" "$killed" "$absent" "$complete"
}

mkdir -p out
if want pack; then
scenario "pack dir" out/b --allow-unsigned -- "$BIN" pack run --out out/b
scenario "pack tar" out/b.tar --allow-unsigned -- "$BIN" pack run --out out/b.tar
scenario "pack --key dir" out/s --key k1.pub -- "$BIN" pack run --out out/s --key k1.key
scenario "pack --key tar" out/s.tar --key k1.pub -- "$BIN" pack run --out out/s.tar --key k1.key
fi

# sign: the path holds the previous good bundle (signed by k1) or the new
# one (signed by k1 and k2), never anything else.
for kind in dir tar; do
	want sign || break
	good=good-$kind; [ $kind = tar ] && good=good.tar
	"$BIN" pack run --out "$good" --key k1.key >/dev/null || exit 1
	out=out/g; [ $kind = tar ] && out=out/g.tar
	cp -a "$good" "$out"
	t=$(ms "$BIN" sign "$out" --key k2.key)
	killed=0 old=0 new=0
	for i in $(seq "$KILLS"); do
		rm -rf "$out" "$out.sigstore.json"; cp -a "$good" "$out"
		if [ $((i % 2)) = 0 ] && command -v strace >/dev/null; then
			# Kill at the k-th rename (renameat / renameat2), as the issue did.
			k=$(((i / 2) % 4 + 1))
			strace -f -o /dev/null -e trace=renameat,renameat2 -e inject=renameat,renameat2:signal=SIGKILL:when=$k \
				"$BIN" sign "$out" --key k2.key >/dev/null 2>&1 && : || killed=$((killed + 1))
		else
			killat "$t" "$BIN" sign "$out" --key k2.key
		fi
		if "$BIN" verify "$out" --key k1.pub --key k2.pub >/dev/null 2>&1; then new=$((new + 1))
		elif "$BIN" verify "$out" --key k1.pub >/dev/null 2>&1; then old=$((old + 1))
		else bad "sign $kind: $out verifies neither old nor new after kill $i"; fi
		"$BIN" sign "$out" --key k2.key >/dev/null 2>"$W/err" || bad "sign after kill $i failed: $(cat "$W/err")"
		[ "$(staging "$out")" = 0 ] || bad "sign $kind: staging left after the sign following kill $i"
		"$BIN" verify "$out" --key k1.pub --key k2.pub >/dev/null 2>&1 || bad "sign $kind: not verified after the sign following kill $i"
	done
	printf '%-22s run %5d ms  kills %2d (landed %2d)  after kill: old bundle %2d, new bundle %2d\n' "sign $kind" "$t" "$KILLS" "$killed" "$old" "$new"
done

# capture writes its run directory as it goes (by design: a killed capture
# leaves the records of every finished request and a manifest saying the
# capture was in progress), and refuses to write into a non-empty directory,
# so there is no previous run at the path to keep. After a kill the path
# holds nothing or a run that validate accepts as INCOMPLETE or rejects with
# a reason (exit 3); never a finished-looking run it did not finish, and no
# temporary file beside or inside it. The next capture to the same path
# (after removing the killed run) finishes a complete run.
if want capture; then
cap=("$BIN" capture --simulate --concurrency 4 --requests 400 --output-tokens 64 --input-tokens 8 --progress never)
t=$(ms "${cap[@]}" --out c0)
killed=0 absent=0 incomplete=0 rejected=0 complete=0
leftovers() { { ls -a . | grep '^\.c\.'; [ -d c ] && ls -a c | grep -v '^\.\.\?$' | grep '^\.'; } | wc -l; }
for i in $(seq "$KILLS"); do
	rm -rf c
	killat "$t" "${cap[@]}" --out c
	if [ ! -e c ]; then absent=$((absent + 1))
	else
		outp=$("$BIN" validate c 2>&1); rc=$?
		if [ $rc = 0 ] && grep -q INCOMPLETE <<<"$outp"; then incomplete=$((incomplete + 1))
		elif [ $rc = 0 ]; then
			complete=$((complete + 1)) # finished before the kill
			grep -q '"incomplete": *true' c/manifest.json && bad "capture: validate passed a run marked incomplete without saying so after kill $i"
		elif [ $rc = 3 ]; then rejected=$((rejected + 1))
		else bad "capture: validate exit $rc after kill $i: $outp"; fi
	fi
	[ "$(leftovers)" = 0 ] || bad "capture: temporary files left after kill $i: $(ls -a . c 2>/dev/null | tr '\n' ' ')"
	rm -rf c
	"${cap[@]}" --out c >/dev/null 2>"$W/err" || bad "capture after kill $i failed: $(cat "$W/err")"
	outp=$("$BIN" validate c 2>&1) || bad "capture: the run after kill $i does not validate: $outp"
	grep -q INCOMPLETE <<<"$outp" && bad "capture: the run after kill $i is incomplete: $outp"
	[ "$(leftovers)" = 0 ] || bad "capture: temporary files left after the run following kill $i"
done
printf '%-22s run %5d ms  kills %2d (landed %2d)  after kill: absent %2d, valid-incomplete %2d, rejected with a reason %2d, finished %2d\n' "capture" "$t" "$KILLS" "$killed" "$absent" "$incomplete" "$rejected" "$complete"
fi

if [ $fail -gt 0 ]; then echo "crashtest: $fail violation(s)"; exit 1; fi
echo "crashtest: every kill left nothing, the old bundle or a complete new one; no staging left"
