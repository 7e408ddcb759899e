#!/bin/sh
# generate.sh COMMIT NAME [DEFINITIONS]: make the compatibility bundle NAME.tar (with
# NAME.pub, its publisher's public key) with benchseal as built at COMMIT of
# this repository, the way a publisher of that release would have made it:
# a scratch checkout of COMMIT, its binary, a small capture against its
# simulator (two closed-loop points of 6 requests), its replay writing the claims (under DEFINITIONS,
# default benchseal's), a fresh key and its pack --key, which signs. Run from the repository root; it writes only
# testdata/compat/NAME.tar, NAME.pub and NAME.info (the commit, the Go
# version and the commands, for the README). A capture is measured, so two
# runs never give the same bytes: the committed bundle is the record.
set -eu
commit=$1
name=$2
defs=${3:-}
root=$(pwd)
out=$root/testdata/compat
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add --detach "$work/src" "$commit" >/dev/null
full=$(git -C "$root" rev-parse "$commit")
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath -o "$work/benchseal" ./cmd/benchseal)
b=$work/benchseal
export BENCHSEAL_PASSWORD=compat # a release from before --no-password has no such flag; keygen at HEAD refuses an empty one by omission
export SOURCE_DATE_EPOCH=1764460800
cd "$work"
capture="capture --simulate --out run --concurrency 1,2 --requests 6 --output-tokens 24 --input-tokens 16 --sim-time-scale 0.05 --seed 7 --progress never --title compat-$name"
replay="replay run --write-claims run/claims.json --output json${defs:+ --definitions $defs}"
# shellcheck disable=SC2086
"$b" $capture >capture.log 2>&1 || { cat capture.log; exit 1; }
# shellcheck disable=SC2086
"$b" $replay >/dev/null
"$b" keygen --out publisher >/dev/null
"$b" pack run --out "$out/$name.tar" --key publisher.key >/dev/null
cp publisher.pub "$out/$name.pub"
rm -f "$out/$name.tar.sigstore.json"
"$b" verify "$out/$name.tar" --key "$out/$name.pub" >verify.log 2>&1 || { cat verify.log; exit 1; }
{
	echo "commit: $full"
	echo "go: $(go env GOVERSION)"
	echo "benchseal $capture"
	echo "benchseal $replay"
	echo "BENCHSEAL_PASSWORD=compat benchseal keygen --out publisher"
	echo "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH benchseal pack run --out $name.tar --key publisher.key"
	echo "its own verify: $(tail -n 1 verify.log)"
} >"$out/$name.info"
