#!/usr/bin/env python3
"""Prints the comparison table of a bench/compare.sh run (markdown).

usage: bench/table.py OUT_DIR

Reads OUT_DIR/{kube-apiserver,kapi-embedded,kapi-etcd,etcd-put}.json as kapi-bench
wrote them. A ratio is kapi's advantage: kapi / kube-apiserver for rates,
kube-apiserver / kapi for latencies, times and memory, so > 1 always means kapi
does better. A scenario that failed shows FAILED, a server that did not run "-".
"""

import json
import os
import sys

SERVERS = ["kube-apiserver", "kapi-embedded", "kapi-etcd"]

# (label, scenario, path in its JSON, direction: +1 higher is better, -1 lower, 0 no ratio)
ROWS = [
    ("creates/s (1 KiB ConfigMaps)", "create", ["creates_per_s"], +1),
    ("gets/s", "get", ["gets_per_s"], +1),
    ("updates/s (GET+PUT)", "update", ["updates_per_s"], +1),
    ("list items/s (limit=500)", "list", ["items_per_s"], +1),
    ("watch, 10 watchers: p50 ms", "watch10", ["latency", "p50_ms"], -1),
    ("watch, 10 watchers: p99 ms", "watch10", ["latency", "p99_ms"], -1),
    ("watch, 1000 watchers: p50 ms", "watch1000", ["latency", "p50_ms"], -1),
    ("watch, 1000 watchers: p99 ms", "watch1000", ["latency", "p99_ms"], -1),
    ("watch, 1000 watchers: updates/s achieved", "watch1000", ["updates_per_s"], +1),
    ("watch, 1000 watchers: events missed", "watch1000", ["events_missing"], 0),
    ("watch, 500 node watchers: p99 ms", "watch-nodes", ["latency", "p99_ms"], -1),
    ("watch, 500 node watchers: events missed", "watch-nodes", ["events_missing"], 0),
    ("watch, 500 node watchers: server CPU us/update", "watch-nodes", ["server_cpu_us_per_update"], -1),
    ("mixed: requests/s", "mixed", ["requests_per_s"], +1),
    ("mixed: p99 ms", "mixed", ["latency", "p99_ms"], -1),
    ("pods: creates/s", "pods50k", ["creates_per_s"], +1),
    ("pods: full LIST s", "pods50k", ["list_seconds"], -1),
    ("pods: full LIST MiB of JSON", "pods50k", ["list_mib"], 0),
    ("pods: paged LIST s (limit=500)", "pods50k", ["paged_seconds"], -1),
    ("pods: one node's pods LIST ms (median)", "pods50k", ["node_list_ms"], -1),
    ("pods: server RSS before creates MiB", "pods50k", ["rss_mib_before"], -1),
    ("pods: server RSS after creates MiB", "pods50k", ["rss_mib_after_creates"], -1),
    ("pods: server RSS peak in full LIST MiB", "pods50k", ["rss_mib_peak_during_list"], -1),
    ("pods: etcd RSS at the end MiB", "pods50k", ["etcd_rss_mib"], 0),
]

# Figures of pods50k with their own failure, apart from the scenario's.
ERROR_KEYS = {"list_seconds": "list_error", "list_mib": "list_error", "paged_seconds": "paged_error",
              "node_list_ms": "node_list_error"}

# CPU per operation: the server's, plus etcd's where it has one (what kapi replaces).
CPU_ROWS = [
    ("create: server+etcd CPU us/op", "create"),
    ("get: server+etcd CPU us/op", "get"),
    ("update: server+etcd CPU us/op", "update"),
    ("mixed: server+etcd CPU us/op", "mixed"),
]


def load(out, name):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def dig(value, path):
    for key in path:
        if not isinstance(value, dict) or value.get(key) is None:
            return None
        value = value[key]
    return value


def cell(run, scenario, path):
    """(number or None, text)"""
    if run is None:
        return None, "-"
    result = dig(run, ["scenarios", scenario])
    if result is None:
        return None, "-"
    if "error" in result:
        return None, "FAILED"
    value = dig(result, path)
    if value is None:
        failed = result.get(ERROR_KEYS.get(path[-1], ""))
        return None, "FAILED" if failed else "-"
    text = fmt(value)
    errors = (result.get("errors") or 0) + (result.get("create_errors") or 0) + (
        result.get("update_errors") or 0) + (result.get("watch_errors") or 0)
    if errors:
        text += f" ({errors} err)"
    return value, text


def cpu_cell(run, scenario):
    if run is None:
        return None, "-"
    result = dig(run, ["scenarios", scenario])
    if result is None or "error" in result or not result.get("ops"):
        return None, "-" if result is None or "error" not in result else "FAILED"
    cpu = result.get("server_cpu_s")
    if cpu is None:
        return None, "-"
    cpu += result.get("etcd_cpu_s") or 0
    value = cpu / result["ops"] * 1e6
    return value, fmt(value)


def fmt(value):
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def ratio(kas, kapi, direction):
    if direction == 0 or kas is None or kapi is None or kas <= 0 or kapi <= 0:
        return ""
    return f"×{(kapi / kas if direction > 0 else kas / kapi):.2f}"


def memory_line(name, run):
    if run is None:
        return f"- {name}: no run"
    parts = []
    for key, who in (("rss_mib", "server"), ("etcd_rss_mib", "etcd")):
        m = run.get(key)
        if m:
            parts.append(f"{who} start {fmt(m['start'] or 0)} / end {fmt(m['end'] or 0)}"
                         f" / peak {fmt(m['peak'] or 0)} MiB")
    both = [run.get(k) for k in ("rss_mib", "etcd_rss_mib") if run.get(k)]
    if len(both) == 2:
        parts.append(f"together at the end {fmt(sum(m['end'] or 0 for m in both))} MiB")
    return f"- {name}: " + "; ".join(parts or ["no --pid given"])


def main():
    out = sys.argv[1]
    runs = {name: load(out, name) for name in SERVERS}
    kas, emb, etcd = (runs[n] for n in SERVERS)
    settings = next((r for r in runs.values() if r), {})
    print(f"Phases of {settings.get('seconds', '?')} s, {settings.get('clients', '?')} clients, "
          f"{settings.get('pods', '?')} pods, HTTP {settings.get('protocol', '?')}; ratio = kapi's "
          f"advantage (> 1: kapi better).\n")
    print("| scenario | kube-apiserver | kapi embedded | ratio | kapi on etcd | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, scenario, path, direction in ROWS:
        a, ta = cell(kas, scenario, path)
        b, tb = cell(emb, scenario, path)
        c, tc = cell(etcd, scenario, path)
        print(f"| {label} | {ta} | {tb} | {ratio(a, b, direction)} | {tc} | {ratio(a, c, direction)} |")
    for label, scenario in CPU_ROWS:
        a, ta = cpu_cell(kas, scenario)
        b, tb = cpu_cell(emb, scenario)
        c, tc = cpu_cell(etcd, scenario)
        print(f"| {label} | {ta} | {tb} | {ratio(a, b, -1)} | {tc} | {ratio(a, c, -1)} |")
    print("\nResident memory over the whole run (VmRSS; peak = VmHWM):\n")
    print(memory_line("kube-apiserver (+ its etcd)", kas))
    print(memory_line("kapi embedded", emb))
    print(memory_line("kapi on etcd (+ its etcd)", etcd))
    put = load(out, "etcd-put")
    rate = dig(put, ["scenarios", "etcd-put", "puts_per_s"]) if put else None
    if rate:
        line = f"\netcd alone accepts {fmt(rate)} puts/s of 1 KiB values at the same concurrency"
        shares = []
        for name, run in (("kube-apiserver", kas), ("kapi on etcd", etcd)):
            creates = dig(run, ["scenarios", "create", "creates_per_s"]) if run else None
            if creates:
                shares.append(f"{name} creates at {100 * creates / rate:.0f}% of that")
        print(line + (": " + ", ".join(shares) if shares else "") + ".")
    failures = []
    for name, run in runs.items():
        failed = os.path.join(out, name + ".failed")
        if os.path.exists(failed):
            with open(failed) as f:
                failures.append(f"- {name}: {f.read().strip()}")
        if run is None:
            if os.path.exists(os.path.join(out, name + ".txt")):
                failures.append(f"- {name}: no figures (kapi-bench failed; see {name}.txt)")
            continue
        for scenario, result in run.get("scenarios", {}).items():
            for key in ("error", "first_error", "create_first_error", "update_first_error",
                        "list_error", "paged_error"):
                if result.get(key):
                    failures.append(f"- {name} {scenario}: {result[key]}")
    if failures:
        print("\nFailures and errors:\n")
        print("\n".join(failures))


if __name__ == "__main__":
    main()
