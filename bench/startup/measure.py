#!/usr/bin/env python3
"""Start and idle: how fast a fresh kapi is ready and how much memory it then holds.

Starts the server RUNS times, each on a new data directory and a free loopback
port, polls /readyz until it answers 200 (the time from spawning the process is
"ready"), then waits IDLE seconds and reads the process's resident memory:
VmRSS, and its split into anonymous memory (heap, stacks) and file-backed pages
(the binary's code and data read in). Prints one line per run and the medians;
with --json, writes them too. Every process it starts is stopped by its PID.

    bench/startup/measure.py target/release/kapi [--runs 5] [--idle 5] [-- serve flags]
"""
import argparse
import http.client
import ssl
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memory(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) / 1024
    return fields


def ready_after(port, started, timeout):
    # The CA appears in the data directory as the server starts; readiness is
    # all that is asked here, so the certificate is not checked.
    context = ssl._create_unverified_context()
    while time.monotonic() - started < timeout:
        try:
            conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=1, context=context)
            conn.request("GET", "/readyz")
            response = conn.getresponse()
            response.read()
            conn.close()
            if response.status == 200:
                return time.monotonic() - started
        except OSError:
            pass
        time.sleep(0.0005)
    return None


def one_run(binary, idle, extra):
    data = tempfile.mkdtemp(prefix="kapi-start-")
    port = free_port()
    started = time.monotonic()
    log = open(f"{data}.log", "w")
    process = subprocess.Popen(
        [binary, "serve", "--data-dir", data, "--listen", f"127.0.0.1:{port}", *extra],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        ready = ready_after(port, started, 10)
        if ready is None:
            raise SystemExit(f"not ready within 10 s; see {data}.log")
        at_ready = memory(process.pid)
        time.sleep(idle)
        at_idle = memory(process.pid)
    finally:
        process.terminate()
        process.wait()
        log.close()
        shutil.rmtree(data, ignore_errors=True)
    return {
        "ready_ms": ready * 1000,
        "rss_at_ready_mib": at_ready["VmRSS"],
        "rss_idle_mib": at_idle["VmRSS"],
        "anon_idle_mib": at_idle["RssAnon"],
        "file_idle_mib": at_idle["RssFile"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=5.0, help="seconds idle before measuring")
    parser.add_argument("--json", help="write the runs and medians here")
    parser.add_argument("serve_flags", nargs="*", help="after --: more flags for `kapi serve`")
    args = parser.parse_args()
    runs = []
    for _ in range(args.runs):
        run = one_run(args.binary, args.idle, args.serve_flags)
        runs.append(run)
        print(
            f"ready {run['ready_ms']:6.1f} ms   RSS at ready {run['rss_at_ready_mib']:5.1f} MiB   "
            f"idle {run['rss_idle_mib']:5.1f} MiB (anonymous {run['anon_idle_mib']:4.1f}, "
            f"file-backed {run['file_idle_mib']:4.1f})",
            flush=True,
        )
    medians = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(
        f"median: ready {medians['ready_ms']:.1f} ms, idle {medians['rss_idle_mib']:.1f} MiB "
        f"({args.runs} runs, {args.idle:g} s idle)"
    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"runs": runs, "median": medians}, out, indent=2)


if __name__ == "__main__":
    sys.exit(main())
