#!/bin/sh
# install-check.sh [VERSION]: docs/install.md's `go install
# github.com/benchseal/benchseal/cmd/benchseal@VERSION` line works. The
# module is not published, so the committed HEAD is served at VERSION
# (default v0.99.0) from a file-based module proxy (releasetool modproxy:
# the zip golang.org/x/mod/zip makes from the commit, as the public proxy
# makes it from a tag), and its dependencies from this machine's module
# download cache, read as a second file proxy into an empty module cache:
# nothing is fetched from the network. The line is run as the page writes
# it (only the version substituted); the installed binary must report the
# module version and, as the page says, no revision (go install from a
# proxy stamps none), and go version -m must name the module at VERSION
# with its zip's hash.
set -eu
cd "$(dirname "$0")/.."
V=${1:-v0.99.0}
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
rev=$(git rev-parse HEAD)
when=$(git log -1 --format=%cI "$rev")
cache=$(go env GOMODCACHE)/cache/download
CGO_ENABLED=0 go build -o "$work/releasetool" ./internal/release/releasetool
# A clone: x/mod/zip reads the commit through git, which it finds only
# in a real .git directory (a git worktree has a .git file).
git clone --quiet --no-checkout . "$work/src"
git -C "$work/src" -c advice.detachedHead=false checkout --quiet "$rev"
(cd "$work/src" && "$work/releasetool" modproxy -dir "$work/proxy" -version "$V" -revision "$rev" -time "$when")

line=$(grep -E '^go install github\.com/benchseal/benchseal/cmd/benchseal@vX\.Y\.Z$' docs/install.md)
[ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || { echo "install-check: docs/install.md has no single go install line" >&2; exit 1; }
cmd=$(printf '%s\n' "$line" | sed "s/@vX\.Y\.Z\$/@$V/")
echo "== $cmd (GOPROXY=file://…, module $rev at $V)"
# go install m@v checks every dependency against sum.golang.org, not the
# module's go.sum; with no network here (and this machine's cache of the
# log holds only some lookups) the log is off (GOSUMDB=off) and the
# check is made afterwards instead: every module the installed binary
# was built from (go version -m) must be in go.sum with that hash.
env -u GOFLAGS GOTOOLCHAIN=local CGO_ENABLED=0 GOPROXY="file://$work/proxy,file://$cache" GOSUMDB=off \
	GONOSUMDB= GOPRIVATE= GONOPROXY= GOMODCACHE="$work/modcache" GOPATH="$work/gopath" \
	GOBIN="$work/bin" GOCACHE="$(go env GOCACHE)" sh -c "$cmd"

bin=$work/bin/benchseal
out=$("$bin" version)
echo "$out"
fail() { echo "install-check: $*" >&2; exit 1; }
printf '%s\n' "$out" | grep -q "$V" || fail "benchseal version does not name $V"
printf '%s\n' "$out" | grep -qi 'revision not stamped\|no revision' || fail "benchseal version claims a revision go install cannot stamp"
sum=$(sha256sum "$bin" | cut -d' ' -f1)
printf '%s\n' "$out" | grep -q "$sum" || fail "benchseal version does not state its executable's sha256 $sum"
m=$(go version -m "$bin")
printf '%s\n' "$m" | grep -Eq "^[[:space:]]+mod[[:space:]]+github.com/benchseal/benchseal[[:space:]]+$V[[:space:]]+h1:" || fail "go version -m does not name the module at $V with its hash:
$m"
n=0
for dep in $(printf '%s\n' "$m" | awk '$1 == "dep" {print $2 "@" $3 "@" $4}'); do
	p=${dep%%@*} rest=${dep#*@}
	v=${rest%%@*} h=${rest#*@}
	grep -qxF "$p $v $h" go.sum || fail "the installed binary's dependency $p $v $h is not in go.sum"
	n=$((n + 1))
done
[ "$n" -gt 10 ] || fail "go version -m lists $n dependencies"
echo "install-check: go install …@$V from the proxy layout installs a benchseal that names $V, no revision and its sha256; its $n dependencies are go.sum's"
