#!/bin/sh
# generate-import.sh COMMIT NAME TOOL: make the compatibility bundle NAME.tar (with
# NAME.pub and NAME.info) of an import made with benchseal as built at COMMIT:
# a scratch checkout of COMMIT, its binary, `import TOOL` of this repository's
# real fixture of TOOL (testdata/fixtures, provenance in testdata/README.md;
# copied flat, so no directory name adds to what the files state), a fresh
# key and its pack --key. Run from the repository root. An import is
# deterministic, so a rerun gives the same run (the key, and so the
# signature, differ).
set -eu
commit=$1
name=$2
tool=$3
root=$(pwd)
out=$root/testdata/compat
fx=$root/testdata/fixtures
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add --detach "$work/src" "$commit" >/dev/null
full=$(git -C "$root" rev-parse "$commit")
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath -o "$work/benchseal" ./cmd/benchseal)
b=$work/benchseal
export BENCHSEAL_PASSWORD=
export SOURCE_DATE_EPOCH=1764460800
mkdir "$work/in"
case $tool in
llmperf) cp "$fx/llmperf/groq_70b_individual_responses.json" "$fx/llmperf/groq_70b_summary.json" "$work/in/"; set -- ;;
aiperf) cp "$fx/aiperf/run1_profile_export.jsonl" "$fx/aiperf/run1_profile_export_aiperf.json" "$work/in/"; set -- ;;
mlperf) cp "$fx"/mlperf/closed/AMD/results/*/llama2-70b-99.9/Interactive/performance/run_1/mlperf_log_*.txt "$work/in/"; set -- --set model.name=llama2-70b ;;
*) echo "generate-import.sh: no fixture for $tool" >&2; exit 2 ;;
esac
cd "$work"
files=$(ls in/* | sort | tr '\n' ' ')
# shellcheck disable=SC2086
"$b" import "$tool" $files --out run "$@" >import.log 2>&1 || { cat import.log; exit 1; }
"$b" keygen --out publisher >/dev/null
"$b" pack run --out "$out/$name.tar" --key publisher.key >/dev/null
cp publisher.pub "$out/$name.pub"
rm -f "$out/$name.tar.sigstore.json"
"$b" verify "$out/$name.tar" --key "$out/$name.pub" >verify.log 2>&1 || { cat verify.log; exit 1; }
{
	echo "commit: $full"
	echo "go: $(go env GOVERSION)"
	echo "benchseal import $tool $files--out run $*"
	echo "benchseal keygen --out publisher (BENCHSEAL_PASSWORD empty)"
	echo "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH benchseal pack run --out $name.tar --key publisher.key"
	echo "its own verify: $(tail -n 1 verify.log)"
} >"$out/$name.info"
