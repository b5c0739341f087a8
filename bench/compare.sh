#!/usr/bin/env bash
# bench/compare.sh: the same kapi-bench scenarios against kapi on its embedded store and kapi on
# a fresh etcd, and against kube-apiserver 1.32 on its own etcd when you give its binary
# (KUBE_APISERVER), one after another on this machine, then a table of the ratios.
# Without KUBE_APISERVER, kapi's figures are also printed beside kube-apiserver's as recorded
# in BENCHMARKS.md's last side-by-side runs (bench/kube-apiserver-1.32.tsv).
#
# Environment (all optional):
#   KUBE_APISERVER=path a kube-apiserver 1.32 binary you provide (nothing in this repository
#                       provides or builds one); it runs with TLS, token authentication,
#                       RBAC and the default admission plugins, on an etcd of its own
#   OUT=dir             where JSONs, logs and the table go (default target/bench-compare/<date>)
#   BENCH_SECONDS=N     length of each timed phase (default 10)
#   CLIENTS=N           concurrent clients (default 32)
#   PODS=N              pods of the pods50k scenario (default 50000)
#   SCENARIOS=a,b       kapi-bench scenarios (default: all)
#   SERVERS="..."       which of kube-apiserver kapi-embedded kapi-etcd to run (default: all
#                       three with KUBE_APISERVER, else kapi-embedded kapi-etcd)
#   KAPI_BIN=path       the kapi binary (default target/release/kapi, built unless SKIP_BUILD=1;
#                       when set, only the bench is built)
#   KAPI_ARGS="..."     extra `kapi serve` flags (default --controllers=-* : kube-apiserver
#                       runs here without kube-controller-manager, so kapi runs without its
#                       built-in controllers too)
#   BENCH_BIN=path      the kapi-bench binary (default target/release/kapi-bench)
#   CARGO_TARGET_DIR    where both are built and looked for (default target/)
#   BENCH_ARGS="..."    extra kapi-bench flags
#   SKIP_BUILD=1        use the binaries as they are
#   ETCD_BIN=path       etcd (default /usr/bin/etcd)
#   KEEP_DATA=1         keep the stores' data directories (over a GiB with 50,000 pods)
# Everything listens on 127.0.0.1 only; every process started is stopped by PID on exit.
set -euo pipefail
# No globbing: KAPI_ARGS and BENCH_ARGS are split into words and hold `*`.
set -f

REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
# kube-apiserver's figures of the last side-by-side runs, printed beside kapi's when it does not run.
RECORDED=$REPO/bench/kube-apiserver-1.32.tsv

# ------------------------------------------------------------------ processes
# free_ports N: N free TCP ports on 127.0.0.1, one a line (held together while chosen, so distinct).
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
for s in held:
    print(s.getsockname()[1])
PY
}

# start_bg NAME LOG PIDS_FILE COMMAND...: starts COMMAND in the background with its output in
# LOG, appends "PID NAME" to PIDS_FILE and prints the PID.
start_bg() {
  local name=$1 log=$2 pids=$3 pid; shift 3
  "$@" >"$log" 2>&1 </dev/null &
  pid=$!
  echo "$pid $name" >>"$pids"
  echo "$pid"
}

# alive PID: whether the process still runs.
alive() {
  kill -0 "$1" 2>/dev/null
}

# stop_pids DIR: stops what DIR/pids lists, the last started first (a server before its etcd):
# SIGTERM, up to 30 s to exit, then SIGKILL. Removes DIR/pids.
stop_pids() {
  local file=$1/pids pid name i pids=() names=()
  [ -f "$file" ] || return 0
  while read -r pid name; do pids+=("$pid"); names+=("$name"); done <"$file"
  for (( i = ${#pids[@]} - 1; i >= 0; i-- )); do
    pid=${pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 300); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then
      echo "${names[i]} ($pid) did not stop within 30 s: killed" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  rm -f "$file"
}

OUT=${OUT:-$REPO/target/bench-compare/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BENCH_SECONDS=${BENCH_SECONDS:-10}
CLIENTS=${CLIENTS:-32}
PODS=${PODS:-50000}
KUBE_APISERVER=${KUBE_APISERVER:-}
if [ -n "$KUBE_APISERVER" ]; then
  SERVERS=${SERVERS:-kube-apiserver kapi-embedded kapi-etcd}
else
  SERVERS=${SERVERS:-kapi-embedded kapi-etcd}
fi
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
for server in $SERVERS; do
  case $server in
    kube-apiserver)
      if [ -z "$KUBE_APISERVER" ]; then
        echo "SERVERS names kube-apiserver: set KUBE_APISERVER to the path of a kube-apiserver 1.32 binary" >&2
        exit 2
      fi
      [ -x "$KUBE_APISERVER" ] || { echo "KUBE_APISERVER=$KUBE_APISERVER is not an executable file" >&2; exit 2; }
      ;;
    kapi-embedded|kapi-etcd) ;;
    *) echo "unknown server $server in SERVERS" >&2; exit 2 ;;
  esac
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
# system:masters, as kube-apiserver's below), over TLS with its own CA; sets KAPI_URL, KAPI_CA
# and KAPI_PID.
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

# make_pki DIR: a CA, kube-apiserver's serving certificate for 127.0.0.1 and localhost signed by
# it, and an RSA key for service account tokens.
make_pki() {
  local dir=$1
  mkdir -p "$dir"
  openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj /CN=kapi-bench-ca \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" || return 1
  openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver \
    -keyout "$dir/apiserver.key" -out "$dir/apiserver.csr" || return 1
  printf '%s\n' basicConstraints=CA:FALSE keyUsage=critical,digitalSignature,keyEncipherment \
    extendedKeyUsage=serverAuth subjectAltName=IP:127.0.0.1,DNS:localhost >"$dir/apiserver.ext"
  openssl x509 -req -in "$dir/apiserver.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 7 -extfile "$dir/apiserver.ext" -out "$dir/apiserver.crt" || return 1
  openssl genrsa -out "$dir/sa.key" 2048 || return 1
  openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" || return 1
}

# The run_* functions are called in `||` lists, where bash ignores `set -e`: each
# step that must not fail says `|| return 1`.
KAS_TOKEN=kapi-bench-admin-token
run_kube_apiserver() {
  local dir=$OUT/kube-apiserver port
  mkdir -p "$dir"; RUN_DIRS+=("$dir")
  make_pki "$dir/pki" >"$dir/pki.log" 2>&1 || { cat "$dir/pki.log" >&2; return 1; }
  echo "$KAS_TOKEN,bench-admin,bench-admin,system:masters" >"$dir/tokens.csv"
  start_etcd "$dir" || return 1
  port=$(free_ports 1)
  KAS_URL=https://127.0.0.1:$port
  KAS_PID=$(start_bg "$(basename "$KUBE_APISERVER")" "$dir/kube-apiserver.log" "$dir/pids" \
    "$KUBE_APISERVER" --etcd-servers="$ETCD_URL" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$port" \
    --tls-cert-file="$dir/pki/apiserver.crt" --tls-private-key-file="$dir/pki/apiserver.key" \
    --client-ca-file="$dir/pki/ca.crt" --token-auth-file="$dir/tokens.csv" \
    --service-account-key-file="$dir/pki/sa.pub" \
    --service-account-signing-key-file="$dir/pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range=10.0.0.0/24 \
    --authorization-mode=Node,RBAC)
  # Ready once its post-start hooks are done (the bootstrap RBAC policy among them).
  wait_http "$KAS_URL/readyz" 120 "$KAS_PID" --cacert "$dir/pki/ca.crt" \
    -H "Authorization: Bearer $KAS_TOKEN" || return 1
  echo "kube-apiserver $("$KUBE_APISERVER" --version 2>/dev/null || true) ($KUBE_APISERVER) on $KAS_URL, pid $KAS_PID; etcd pid $ETCD_PID" \
    >"$OUT/kube-apiserver-start.txt"
  bench kube-apiserver --server "$KAS_URL" --token "$KAS_TOKEN" --ca-file "$dir/pki/ca.crt" \
    --pid "$KAS_PID" --etcd-pid "$ETCD_PID"
  stop_pids "$dir"
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
  if [ -n "$KUBE_APISERVER" ]; then
    echo "kube-apiserver: $KUBE_APISERVER, $("$KUBE_APISERVER" --version 2>/dev/null || echo 'version unknown')"
  else
    echo "kube-apiserver: not run (no KUBE_APISERVER); its recorded figures: $RECORDED"
  fi
  echo "settings: BENCH_SECONDS=$BENCH_SECONDS CLIENTS=$CLIENTS PODS=$PODS SCENARIOS=${SCENARIOS:-all} KAPI_ARGS=$KAPI_ARGS"
} >"$OUT/environment.txt"
cat "$OUT/environment.txt"

for server in $SERVERS; do
  # A server that does not start (or stop) is recorded for the table, not fatal.
  if ! "run_${server//-/_}"; then
    echo "starting or stopping $server failed; logs in $OUT/$server/" | tee "$OUT/$server.failed" >&2
  fi
done

python3 "$REPO/bench/table.py" "$OUT" | tee "$OUT/table.md"

# recorded_figures: kapi's figures of this run beside kube-apiserver's recorded ones.
# A row of the TSV is "scenario/metric <TAB> value <TAB> unit"; the metric is the path of the
# figure in the scenario's JSON (dots between keys), or server_etcd_cpu_us_per_op: the server's
# and etcd's CPU time over the scenario's operations. The ratio is kapi's advantage, as in the
# table: kapi / kube-apiserver for units per second; kube-apiserver / kapi for ms, s, MiB,
# us/op and us/update; none for other units.
recorded_figures() {
  python3 - "$OUT" "$RECORDED" <<'PY'
import json, os, sys

out, tsv = sys.argv[1], sys.argv[2]
rows, notes, settings = [], [], {}
with open(tsv) as f:
    for line in f:
        line = line.rstrip("\n")
        if line.startswith("# settings:"):
            settings = dict(word.split("=", 1) for word in line.split(":", 1)[1].split())
        elif line.startswith("#"):
            if "\t" not in line:
                notes.append(line.lstrip("# "))
        elif line.strip():
            key, value, unit = line.split("\t")
            rows.append((key, int(value) if value.isdigit() else float(value), unit))

def fmt(v):
    if isinstance(v, int) or abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"

def figure(run, key):
    scenario, metric = key.split("/", 1)
    result = (run.get("scenarios") or {}).get(scenario)
    if result is None:
        return None, "-"
    if "error" in result:
        return None, "FAILED"
    if metric == "server_etcd_cpu_us_per_op":
        if not result.get("ops") or result.get("server_cpu_s") is None:
            return None, "-"
        v = (result["server_cpu_s"] + (result.get("etcd_cpu_s") or 0)) / result["ops"] * 1e6
        return v, fmt(v)
    v = result
    for part in metric.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    if v is None:
        return None, "-"
    return v, fmt(v)

def ratio(kas, kapi, unit):
    if kas is None or kapi is None or kas <= 0 or kapi <= 0:
        return "-"
    if unit.endswith("/s"):
        return f"×{kapi / kas:.2f}"
    if unit in ("ms", "s", "MiB", "us/op", "us/update"):
        return f"×{kas / kapi:.2f}"
    return "-"

printed = False
for name in ("kapi-embedded", "kapi-etcd"):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            run = json.load(f)
    except (OSError, ValueError):
        continue
    if not printed:
        print("\nNo figures of kube-apiserver in this run: kapi's beside its recorded ones, from another")
        print("run on another day (ratio = kapi's advantage, > 1: kapi better).")
        for note in notes:
            print(note)
        printed = True
    print(f"\n{name} ({run.get('seconds', '?')} s phases, {run.get('clients', '?')} clients, "
          f"{run.get('pods', '?')} pods):")
    differ = [f"{k}={v}" for k, v in settings.items() if str(run.get(k)) != v]
    if differ:
        print("(the recorded run had " + " ".join(f"{k}={v}" for k, v in settings.items())
              + ": compare with more care)")
    for key, value, unit in rows:
        v, text = figure(run, key)
        scenario, metric = key.split("/", 1)
        if v is not None:
            text += " " + unit
        print(f"{scenario} {metric}: kapi {text}, kube-apiserver (recorded) {fmt(value)} {unit}, "
              f"{ratio(value, v, unit)}")
if not printed:
    print("\nno kapi figures to set beside kube-apiserver's recorded ones")
PY
}
if [ ! -s "$OUT/kube-apiserver.json" ]; then
  recorded_figures | tee "$OUT/recorded.txt"
fi
echo "figures in $OUT"
