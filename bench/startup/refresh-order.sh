#!/usr/bin/env bash
# Regenerates bench/startup/order.txt: the functions a fresh kapi runs while it
# starts, bootstraps its objects and idles, by their linker names. The release
# link (build.rs) places them side by side, so an idle server keeps a few MiB of
# its code resident instead of touching one function in nearly every 64 KiB of
# it. Functions renamed since are skipped by the linker: the layout only
# degrades, and this script brings it back. Needs valgrind (callgrind).
#
#     bench/startup/refresh-order.sh            # 30 s of start and idle
#     SECONDS_RUN=60 bench/startup/refresh-order.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "refresh-order.sh needs valgrind" >&2; exit 1; }
cargo build --release --bin kapi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
valgrind --tool=callgrind --demangle=no --compress-strings=no \
    --callgrind-out-file="$work/callgrind.out" \
    target/release/kapi serve --data-dir "$work/data" --listen "127.0.0.1:$port" \
    >"$work/log" 2>&1 &
server=$!
# What a first client does: wait for readiness, then discovery and a list,
# over HTTP/1.1 as kubectl's first requests go.
python3 - "$port" "${SECONDS_RUN:-30}" "$work/data" <<'PY'
import http.client, os, ssl, sys, time
port, seconds, data = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
start = time.monotonic()
# Over TLS with the admin certificate, as kubectl with the written kubeconfig.
while not os.path.exists(os.path.join(data, "admin.key")) and time.monotonic() - start < 60:
    time.sleep(0.1)
context = ssl.create_default_context(cafile=os.path.join(data, "ca.crt"))
context.load_cert_chain(os.path.join(data, "admin.crt"), os.path.join(data, "admin.key"))
paths = ["/readyz", "/livez", "/version", "/api", "/apis", "/api/v1/namespaces",
         "/api/v1/namespaces/default/configmaps", "/metrics"]
while time.monotonic() - start < seconds:
    for path in paths:
        try:
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=5, context=context)
            conn.request("GET", path)
            conn.getresponse().read()
            conn.close()
        except OSError:
            break
    time.sleep(1)
PY
# SIGINT makes kapi shut down cleanly, and callgrind then writes its profile.
kill -INT "$server"
wait "$server" || true
nm --defined-only target/release/kapi | awk '$2 ~ /^[tTwW]$/ {print $3}' | sort -u >"$work/symbols"
sed -n 's/^c\{0,1\}fn=\(([0-9]*) \)\{0,1\}//p' "$work/callgrind.out" | sort -u >"$work/ran"
comm -12 "$work/symbols" "$work/ran" >bench/startup/order.txt
echo "bench/startup/order.txt: $(wc -l <bench/startup/order.txt) functions"
