#!/usr/bin/env bash
# Apply the Jobs 'benchseal k8s job' renders to a real kube-apiserver with a
# server-side dry run, offline, on 127.0.0.1 only:
#   1. build kube-apiserver KUBERNETES_VERSION from the Go module proxy (the
#      k8s.io/kubernetes module with its staging modules pinned to the
#      matching v0.x release) into bin/tools; install Debian's etcd-server
#      when etcd is missing;
#   2. start etcd and kube-apiserver on free loopback ports (static token,
#      self-signed serving certificate, RBAC);
#   3. create a namespace that enforces the "restricted" Pod Security
#      Standard, and its default service account;
#   4. server-side apply (dryRun=All, fieldValidation=Strict) the ConfigMap
#      and the Job of two renderings (every option; the minimum): each must
#      be accepted (201/200) with no warning, the Job returned Indexed with
#      completions = parallelism = N;
#   5. the control: a Job with an unknown field, and one whose parallelism
#      exceeds what the API allows, must be refused.
# Usage: scripts/k8s-dryrun.sh [KUBERNETES_VERSION]   (make k8s-dryrun; default v1.37.2)
set -euo pipefail
KUBERNETES_VERSION=${1:-v1.37.2}
STAGING_VERSION=v0.${KUBERNETES_VERSION#v1.}
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=$ROOT/bin/tools
BENCHSEAL=$ROOT/bin/benchseal
KAS=$TOOLS/kube-apiserver-$KUBERNETES_VERSION
mkdir -p "$TOOLS"
export GOMODCACHE="$(go env GOMODCACHE)" GOCACHE="$(go env GOCACHE)" GOPATH="$(go env GOPATH)"

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  local p i
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null || continue
    for i in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

go build -trimpath -o "$BENCHSEAL" ./cmd/benchseal

# build_apiserver: a throwaway module that requires k8s.io/kubernetes and
# replaces each staging module (k8s.io/api, ...) by its published release,
# as k8s.io/kubernetes' own go.mod points them at ./staging.
build_apiserver() {
  local mod=$WORK/kasbuild gomod
  mkdir -p "$mod"
  gomod=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    printf 'module kasbuild\n\ngo %s\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$(sed -n 's/^go //p' "$gomod")" "$KUBERNETES_VERSION"
    awk -v v="$STAGING_VERSION" '$2 == "=>" && $3 ~ /^\.\/staging\// {printf "\t%s => %s %s\n", $1, $1, v}' "$gomod"
    printf ')\n'
  } >"$mod/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' >"$mod/tools.go"
  local minor=${KUBERNETES_VERSION#v1.}
  minor=${minor%%.*}
  (cd "$mod" && GOFLAGS=-mod=mod go mod tidy && GOFLAGS=-mod=mod go build -o "$KAS.tmp" \
    -ldflags "-X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor" \
    k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$KAS.tmp" "$KAS"
}
if [ ! -x "$KAS" ]; then
  echo "== building kube-apiserver $KUBERNETES_VERSION (staging $STAGING_VERSION) into $TOOLS: long, once"
  build_apiserver
fi
"$KAS" --version 2>&1 | sed -n 1p
if ! command -v etcd >/dev/null; then
  echo "== installing Debian's etcd-server"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends etcd-server >/dev/null
fi
etcd --version 2>&1 | sed -n 1p

free_port() {
  local port
  while :; do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
  done
}
wait_for() { # wait_for WHAT PID CMD...
  local what=$1 pid=$2; shift 2
  for _ in $(seq 1 600); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "$what exited"; return 1; }
    sleep 0.2
  done
  echo "$what did not come up"; return 1
}

echo "== etcd and kube-apiserver on 127.0.0.1"
ETCD_PORT=$(free_port); PEER_PORT=$(free_port)
etcd --name dryrun --data-dir "$WORK/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$PEER_PORT" \
  --initial-cluster "dryrun=http://127.0.0.1:$PEER_PORT" >"$WORK/etcd.log" 2>&1 &
PIDS+=($!)
wait_for etcd "${PIDS[-1]}" curl -fsS "http://127.0.0.1:$ETCD_PORT/health" || { tail -20 "$WORK/etcd.log"; exit 1; }

openssl genrsa -out "$WORK/sa.key" 2048 2>/dev/null
TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$TOKEN,dryrun-admin,1,\"system:masters\"" >"$WORK/tokens.csv"
API_PORT=$(free_port)
"$KAS" --bind-address=127.0.0.1 --secure-port="$API_PORT" --advertise-address=127.0.0.1 \
  --etcd-servers="http://127.0.0.1:$ETCD_PORT" --cert-dir="$WORK/certs" \
  --token-auth-file="$WORK/tokens.csv" --authorization-mode=RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$WORK/sa.key" --service-account-signing-key-file="$WORK/sa.key" \
  --service-cluster-ip-range=10.96.0.0/24 --endpoint-reconciler-type=none >"$WORK/kas.log" 2>&1 &
PIDS+=($!)
API=https://127.0.0.1:$API_PORT
k() { curl -sS -k -H "Authorization: Bearer $TOKEN" "$@"; }
wait_for kube-apiserver "${PIDS[-1]}" sh -c "curl -fsS -k -H 'Authorization: Bearer $TOKEN' '$API/readyz' | grep -q ok" || { tail -30 "$WORK/kas.log"; exit 1; }
k "$API/version" | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/   server \1/p'

failures=0
pass() { echo "PASS  $*"; }
fail() { echo "FAIL  $*"; failures=$((failures + 1)); }

NS=benchseal-dryrun
k -o /dev/null -X POST -H 'Content-Type: application/yaml' "$API/api/v1/namespaces" --data-binary @- <<YML
apiVersion: v1
kind: Namespace
metadata:
  name: $NS
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/warn: restricted
    pod-security.kubernetes.io/audit: restricted
YML
k -o /dev/null -X POST -H 'Content-Type: application/yaml' "$API/api/v1/namespaces/$NS/serviceaccounts" --data-binary @- <<YML
apiVersion: v1
kind: ServiceAccount
metadata: {name: default}
YML

# apply FILE KIND PLURAL APIPATH NAME: server-side apply one document as a
# dry run with strict field validation; prints the HTTP status, keeps the
# response in $WORK/resp and the headers in $WORK/headers.
apply() {
  local file=$1 plural=$2 apipath=$3 name=$4
  k -D "$WORK/headers" -o "$WORK/resp" -w '%{http_code}' -X PATCH \
    -H 'Content-Type: application/apply-patch+yaml' --data-binary @"$file" \
    "$API/$apipath/namespaces/$NS/$plural/$name?dryRun=All&fieldManager=benchseal&fieldValidation=Strict"
}
# split FILE: write each "---" document of FILE to FILE.N (N from 1).
split_docs() { awk -v f="$1" '/^---$/ {n++; next} {print > (f "." n)}' "$1"; }

cd "$WORK"
echo '{"mode": "rate", "points": [{"name": "r800", "rate": 800, "requests": 20000}], "seed": 7}' >load.json
check_rendering() { # check_rendering WHAT SHARDS NAME ARGS...
  local what=$1 n=$2 name=$3; shift 3
  "$BENCHSEAL" k8s job --name "$name" --namespace "$NS" --shards "$n" --out "$name.yaml" "$@"
  split_docs "$name.yaml"
  local doc code
  for doc in "$name".yaml.*; do
    if grep -q '^kind: ConfigMap' "$doc"; then
      code=$(apply "$doc" configmaps api/v1 "$name-plan")
    else
      code=$(apply "$doc" jobs apis/batch/v1 "$name")
    fi
    if [ "$code" != 200 ] && [ "$code" != 201 ]; then fail "$what: $(sed -n 's/^kind: //p' "$doc") refused (HTTP $code)"; cat "$WORK/resp"; echo; continue; fi
    if grep -qi '^warning:' "$WORK/headers"; then fail "$what: warnings"; grep -i '^warning:' "$WORK/headers"; continue; fi
    pass "$what: $(sed -n 's/^kind: //p' "$doc") accepted by a server-side dry run (HTTP $code, strict, restricted pod security, no warning)"
  done
  if grep -Eq '"completionMode": *"Indexed"' "$WORK/resp" && grep -Eq "\"completions\": *$n," "$WORK/resp" && grep -Eq "\"parallelism\": *$n," "$WORK/resp"; then
    pass "$what: the server's Job is Indexed with completions = parallelism = $n"
  else
    fail "$what: the server's Job is not Indexed $n/$n"; head -c 2000 "$WORK/resp"; echo
  fi
}
echo "== server-side dry runs"
check_rendering "every option" 8 bench-full --image registry.example/benchseal:v0.1.0 --image-pull-policy IfNotPresent \
  --endpoint http://vllm.inference.svc:8000 --model meta-llama/Llama-3.1-8B-Instruct --plan load.json \
  --start-at 2026-12-01T10:00:00Z --push registry.example/bench/run:v1 --plain-http --registry-secret regcred \
  --api-key-secret endpoint-key --anti-affinity --cpu 2 --memory 1Gi
check_rendering "the minimum" 2 bench-min --image benchseal:dev --endpoint http://10.0.0.5:8000 --model m \
  --push 10.0.0.9:5000/bench/run:v1 -- --rate 800 --requests 20000

echo "== the control: the server refuses what is wrong"
sed 's/^  completionMode: Indexed$/  completionMode: Indexed\n  completionsMode: Indexed/' bench-min.yaml.1 >unknown.yaml
code=$(apply unknown.yaml jobs apis/batch/v1 bench-min)
# (server-side apply reports a field outside the schema as HTTP 500,
# "failed to create typed patch object ... field not declared in schema")
if [ "$code" != 200 ] && [ "$code" != 201 ] && grep -q 'completionsMode' "$WORK/resp"; then
  pass "an unknown field is refused (HTTP $code, named)"
else
  fail "an unknown field: HTTP $code"; cat "$WORK/resp"
fi
sed 's/^  parallelism: 2$/  parallelism: -1/' bench-min.yaml.1 >negative.yaml
code=$(apply negative.yaml jobs apis/batch/v1 bench-min)
if [ "$code" = 422 ]; then pass "a negative parallelism is refused (HTTP $code)"; else fail "a negative parallelism: HTTP $code"; cat "$WORK/resp"; fi
sed 's/^      securityContext:$/      hostNetwork: true\n      securityContext:/' bench-min.yaml.1 >privileged.yaml
code=$(apply privileged.yaml jobs apis/batch/v1 bench-min)
if grep -qi '^warning:.*restricted' "$WORK/headers"; then pass "restricted pod security warns about hostNetwork (the no-warning checks can fail)"; else fail "no pod security warning for hostNetwork (HTTP $code)"; cat "$WORK/headers"; fi

echo
if [ "$failures" -ne 0 ]; then echo "k8s-dryrun: $failures check(s) FAILED"; exit 1; fi
echo "k8s-dryrun: all checks passed"
