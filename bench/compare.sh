#!/usr/bin/env bash
# bench/compare.sh: the same kapi-bench scenarios against the reference
# kube-apiserver 1.32 (on its own etcd), kapi on its embedded store and kapi on a
# fresh etcd, one after another on this machine, then a table of the ratios.
#
# Environment (all optional):
#   OUT=dir             where JSONs, logs and the table go (default target/bench-compare/<date>)
#   BENCH_SECONDS=N     length of each timed phase (default 10)
#   CLIENTS=N           concurrent clients (default 32)
#   PODS=N              pods of the pods50k scenario (default 50000)
#   SCENARIOS=a,b       kapi-bench scenarios (default: all)
#   SERVERS="..."       which of kube-apiserver kapi-embedded kapi-etcd to run (default: all three)
#   KAPI_BIN=path       the kapi binary (default target/release/kapi, built unless SKIP_BUILD=1;
#                       when set, only the bench is built)
#   KAPI_ARGS="..."     extra `kapi serve` flags (default --controllers=-* : kube-apiserver
#                       runs here without kube-controller-manager, so kapi runs without its
#                       built-in controllers too)
#   BENCH_BIN=path      the kapi-bench binary (default target/release/kapi-bench)
#   CARGO_TARGET_DIR    where both are built and looked for (default target/)
#   BENCH_ARGS="..."    extra kapi-bench flags
#   SKIP_BUILD=1        use the binaries as they are
#   SHARED=dir          ../shared beside the repository (the reference kube-apiserver)
#   ETCD_BIN=path       etcd (default /usr/bin/etcd)
#   KEEP_DATA=1         keep the stores' data directories (over a GiB with 50,000 pods)
# Everything listens on 127.0.0.1 only; every process started is stopped by PID on exit.
set -euo pipefail
# No globbing: KAPI_ARGS and BENCH_ARGS are split into words and hold `*`.
set -f

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
SHARED=${SHARED:-$REPO/../shared}
SHARED=$(cd "$SHARED" && pwd)
REFERENCE=$SHARED/reference
# free_ports, start_bg, alive, stop_pids: the helpers the reference scripts use.
source "$REFERENCE/lib.sh"

OUT=${OUT:-$REPO/target/bench-compare/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BENCH_SECONDS=${BENCH_SECONDS:-10}
CLIENTS=${CLIENTS:-32}
PODS=${PODS:-50000}
SERVERS=${SERVERS:-kube-apiserver kapi-embedded kapi-etcd}
KAPI_ARGS=${KAPI_ARGS:---controllers=-*}
ETCD_BIN=${ETCD_BIN:-/usr/bin/etcd}
# Where cargo puts both binaries (the usual target/, or $CARGO_TARGET_DIR).
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
BENCH_BIN=${BENCH_BIN:-$TARGET_DIR/release/kapi-bench}
KAPI_BIN=${KAPI_BIN:-}

# ------------------------------------------------------------------ build
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  if [ -z "$KAPI_BIN" ]; then (cd "$REPO" && cargo build --release --bin kapi); fi
  (cd "$REPO" && cargo build --release -p kapi-bench)
fi
KAPI_BIN=${KAPI_BIN:-$TARGET_DIR/release/kapi}
KAPI_BIN=$(readlink -f "$KAPI_BIN")
for bin in "$KAPI_BIN" "$BENCH_BIN" "$ETCD_BIN"; do
  [ -x "$bin" ] || { echo "missing $bin (build it, or set KAPI_BIN / BENCH_BIN / ETCD_BIN)" >&2; exit 1; }
done

# ------------------------------------------------------------------ cleanup
# Each server runs in its own run directory whose `pids` file lists what it started;
# on exit every such directory still holding a `pids` file is stopped.
RUN_DIRS=()
BENCH_PID=
cleanup() {
  local dir
  if [ -n "$BENCH_PID" ]; then kill -TERM "$BENCH_PID" 2>/dev/null || true; fi
  for dir in "${RUN_DIRS[@]}"; do
    [ -f "$dir/pids" ] && stop_pids "$dir" || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# drop_data DIR: removes the data directories of a stopped server unless KEEP_DATA=1.
drop_data() {
  [ "${KEEP_DATA:-0}" = 1 ] || rm -rf "$1/data" "$1/etcd-data"
}

# wait_http URL SECONDS PID: until URL answers 200, the process dies, or time runs out.
wait_http() { # URL SECONDS PID [CURL_ARGS...]
  local url=$1 deadline=$(( $(date +%s) + $2 )) pid=$3; shift 3
  while [ "$(date +%s)" -lt "$deadline" ]; do
    if curl -sf --max-time 2 -o /dev/null "$@" "$url"; then return 0; fi
    alive "$pid" || { echo "process $pid exited before $url answered" >&2; return 1; }
    sleep 0.1
  done
  echo "$url did not answer within $2 s" >&2
  return 1
}

# bench NAME ARGS...: runs kapi-bench into $OUT/NAME.{json,txt}; a failure is recorded, not fatal.
bench() {
  local name=$1 scenarios=${SCENARIOS:-}; shift
  [ "$name" = etcd-put ] && scenarios=etcd-put
  echo "== $name"
  # In the background and waited for, so that a signal stops the run at once (bash
  # runs traps only between foreground commands).
  # shellcheck disable=SC2086
  "$BENCH_BIN" --seconds "$BENCH_SECONDS" --clients "$CLIENTS" --pods "$PODS" \
    ${scenarios:+--scenario "$scenarios"} --json "$OUT/$name.json" ${BENCH_ARGS:-} "$@" \
    > >(tee "$OUT/$name.txt") 2>&1 &
  BENCH_PID=$!
  if ! wait "$BENCH_PID"; then
    echo "kapi-bench against $name failed (see $OUT/$name.txt)" >&2
  fi
  BENCH_PID=
}

# start_etcd DIR: a fresh single-member etcd on free loopback ports; sets ETCD_URL and ETCD_PID.
start_etcd() {
  local dir=$1 client peer
  read -r client peer <<<"$(free_ports 2 | tr '\n' ' ')"
  ETCD_URL=http://127.0.0.1:$client
  ETCD_PID=$(start_bg "$(basename "$ETCD_BIN")" "$dir/etcd.log" "$dir/pids" "$ETCD_BIN" \
    --name bench --data-dir "$dir/etcd-data" \
    --listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "bench=http://127.0.0.1:$peer" --initial-cluster-state new \
    --logger zap --log-outputs stderr)
  wait_http "$ETCD_URL/health" 30 "$ETCD_PID"
}

# start_kapi DIR ARGS...: kapi serve on a free loopback port with a static admin token (group
# system:masters, as the reference's), over TLS with its own CA; sets KAPI_URL, KAPI_CA and
# KAPI_PID.
KAPI_TOKEN=kapi-bench-admin-token
start_kapi() {
  local dir=$1 port; shift
  port=$(free_ports 1)
  KAPI_URL=https://127.0.0.1:$port
  KAPI_CA=$dir/data/ca.crt
  echo "$KAPI_TOKEN,bench-admin,bench-admin,system:masters" >"$dir/tokens.csv"
  # shellcheck disable=SC2086
  KAPI_PID=$(start_bg "$(basename "$KAPI_BIN")" "$dir/kapi.log" "$dir/pids" "$KAPI_BIN" serve \
    --data-dir "$dir/data" --listen "127.0.0.1:$port" --token-auth-file "$dir/tokens.csv" \
    $KAPI_ARGS "$@")
  # The CA is written before the listener opens.
  wait_http "$KAPI_URL/readyz" 60 "$KAPI_PID" --insecure
}

# The run_* functions are called in `||` lists, where bash ignores `set -e`: each
# step that must not fail says `|| return 1`.
run_kube_apiserver() {
  local dir=$OUT/kube-apiserver
  RUN_DIRS+=("$dir")
  "$REFERENCE/start-kube-apiserver" "$dir" >"$OUT/kube-apiserver-start.txt" 2>&1 \
    || { cat "$OUT/kube-apiserver-start.txt" >&2; return 1; }
  # KAS_URL, ADMIN_TOKEN, KAS_PID, ETCD_PID, ETCD_CLIENT_PORT
  source "$dir/env" || return 1
  bench kube-apiserver --server "$KAS_URL" --token "$ADMIN_TOKEN" --ca-file "$dir/pki/ca.crt" \
    --pid "$KAS_PID" --etcd-pid "$ETCD_PID"
  "$REFERENCE/stop-kube-apiserver" "$dir"
  drop_data "$dir"
}

run_kapi_embedded() {
  local dir=$OUT/kapi-embedded
  mkdir -p "$dir"; RUN_DIRS+=("$dir")
  start_kapi "$dir" || return 1
  echo "kapi $("$KAPI_BIN" --version 2>/dev/null || true) ($KAPI_BIN) on $KAPI_URL, pid $KAPI_PID" \
    >"$OUT/kapi-embedded-start.txt"
  bench kapi-embedded --server "$KAPI_URL" --token "$KAPI_TOKEN" --ca-file "$KAPI_CA" \
    --pid "$KAPI_PID"
  stop_pids "$dir"
  drop_data "$dir"
}

run_kapi_etcd() {
  # What etcd alone accepts, on a member of its own: kapi on an etcd that has just
  # taken (and deleted) tens of thousands of keys was measured 4-5x slower.
  local put=$OUT/etcd-put
  mkdir -p "$put"; RUN_DIRS+=("$put")
  start_etcd "$put" || return 1
  bench etcd-put --server "$ETCD_URL" --pid "$ETCD_PID"
  stop_pids "$put"
  drop_data "$put"

  local dir=$OUT/kapi-etcd
  mkdir -p "$dir"; RUN_DIRS+=("$dir")
  start_etcd "$dir" || return 1
  start_kapi "$dir" --etcd-servers "$ETCD_URL" || return 1
  bench kapi-etcd --server "$KAPI_URL" --token "$KAPI_TOKEN" --ca-file "$KAPI_CA" \
    --pid "$KAPI_PID" --etcd-pid "$ETCD_PID"
  stop_pids "$dir"
  drop_data "$dir"
}

{
  echo "date: $(date -Is)"
  echo "host: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
  echo "kapi: $KAPI_BIN, built $(date -r "$KAPI_BIN" -Is)"
  echo "repository: $(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo '?') ($(cd "$REPO" && git log -1 --format=%cI 2>/dev/null || true)), $(cd "$REPO" && git status --porcelain 2>/dev/null | grep -c . || true) paths changed"
  echo "etcd: $("$ETCD_BIN" --version 2>/dev/null | head -1)"
  echo "settings: BENCH_SECONDS=$BENCH_SECONDS CLIENTS=$CLIENTS PODS=$PODS SCENARIOS=${SCENARIOS:-all} KAPI_ARGS=$KAPI_ARGS"
} >"$OUT/environment.txt"
cat "$OUT/environment.txt"

for server in $SERVERS; do
  case $server in
    kube-apiserver|kapi-embedded|kapi-etcd) ;;
    *) echo "unknown server $server in SERVERS" >&2; exit 2 ;;
  esac
  # A server that does not start (or stop) is recorded for the table, not fatal.
  if ! "run_${server//-/_}"; then
    echo "starting or stopping $server failed; logs in $OUT/$server/" | tee "$OUT/$server.failed" >&2
  fi
done

python3 "$REPO/bench/table.py" "$OUT" | tee "$OUT/table.md"
echo "figures in $OUT"
