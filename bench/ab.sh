#!/usr/bin/env bash
# bench/ab.sh A B: two kapi builds measured alternately in one run (A, B, A, B, ...), each on a
# fresh embedded store through bench/compare.sh, then the median of each figure per build.
# For a change's cost or gain: A is the build before it, B the build with it, both release.
#
#   bench/ab.sh /tmp/before/release/kapi target/release/kapi
#
# Environment (all optional): ROUNDS (default 3), SCENARIOS (default create,pods50k), PODS
# (default 5000), BENCH_SECONDS, CLIENTS, KAPI_ARGS, BENCH_BIN, OUT, as compare.sh reads them.
# Everything listens on 127.0.0.1; compare.sh stops what it starts by PID.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 KAPI_BINARY_A KAPI_BINARY_B" >&2; exit 2; }
REPO=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
A=$(readlink -f "$1") B=$(readlink -f "$2")
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-$REPO/target/bench-ab/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
export BENCH_BIN=${BENCH_BIN:-$TARGET_DIR/release/kapi-bench}
[ -x "$BENCH_BIN" ] || (cd "$REPO" && cargo build --release -p kapi-bench)
for round in $(seq "$ROUNDS"); do
  for label in A B; do
    if [ "$label" = A ]; then bin=$A; else bin=$B; fi
    echo "== round $round, build $label ($bin)"
    SERVERS=kapi-embedded KAPI_BIN=$bin SKIP_BUILD=1 SCENARIOS=${SCENARIOS:-create,pods50k} \
      PODS=${PODS:-5000} OUT="$OUT/$round-$label" "$REPO/bench/compare.sh" >"$OUT/$round-$label.log" 2>&1 \
      || echo "round $round of $label failed: see $OUT/$round-$label.log" >&2
  done
done
python3 - "$OUT" "$A" "$B" <<'PY'
import glob, json, os, statistics, sys
out, a, b = sys.argv[1:4]
figures = {}  # (scenario, figure) -> label -> [values]
for path in sorted(glob.glob(os.path.join(out, "*-[AB]", "kapi-embedded.json"))):
    label = os.path.basename(os.path.dirname(path)).split("-")[1]
    for scenario, result in json.load(open(path)).get("scenarios", {}).items():
        for figure in ("server_cpu_ms_per_create", "creates_per_s"):
            value = result.get(figure) if isinstance(result, dict) else None
            if isinstance(value, (int, float)):
                figures.setdefault((scenario, figure), {}).setdefault(label, []).append(value)
print(f"A = {a}\nB = {b}\nmedians of {out}:")
print(f"{'scenario':10} {'figure':26} {'A':>10} {'B':>10} {'B/A':>6}")
for (scenario, figure), by in sorted(figures.items()):
    ma, mb = (statistics.median(by[l]) if by.get(l) else None for l in "AB")
    ratio = f"{mb / ma:.2f}" if ma and mb else "-"
    show = lambda v: "-" if v is None else f"{v:.3f}"
    print(f"{scenario:10} {figure:26} {show(ma):>10} {show(mb):>10} {ratio:>6}")
PY
