#!/usr/bin/env python3
"""kapi in envtest's place: how fast it starts and stops, and what twenty cost.

Starts kapi as controller-runtime's envtest starts kube-apiserver (the binary
under the name kube-apiserver, envtest's sorted flags, ECDSA P-256 PKCS#8
certificates made with openssl as its TinyCA makes them, a real etcd of its
own for each instance, anonymous /healthz polls) and measures:

  start   spawning kube-apiserver to the first 200 from /healthz (polled every
          10 ms here; envtest polls every 100 ms, so it sees up to 100 ms more)
  stop    SIGTERM to the process's exit, with a watch open
  twenty  INSTANCES instances (each with its etcd) started at once, as parallel
          test packages start them: the time until all answer, and the resident
          memory (VmRSS) of the kapi processes and of the etcds once all are up

Every process it starts is stopped by its PID; every directory is removed.

    bench/startup/envtest.py target/release/kapi [--etcd /usr/bin/etcd] [--runs 5] [--instances 20] [--json OUT]
"""
import argparse
import json
import os
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import http.client


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except FileNotFoundError:
        return None
    return None


def openssl(cwd, *args):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def tiny_ca(cwd, name):
    openssl(cwd, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "3650",
            "-subj", "/CN=envtest-environment/O=envtest",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,digitalSignature,keyEncipherment")


def tiny_leaf(cwd, ca, name, subject, sans=None):
    """A serving leaf when `sans` is given, else a client one."""
    extensions = ["-addext", "basicConstraints=critical,CA:FALSE"]
    if sans:
        extensions += ["-addext", f"subjectAltName={sans}",
                       "-addext", "extendedKeyUsage=serverAuth"]
    else:
        extensions += ["-addext", "extendedKeyUsage=clientAuth"]
    openssl(cwd, "req", "-x509", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-newkey", "ec",
            "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.crt", "-days", "7", "-subj", subject, *extensions)


class Instance:
    """One envtest control plane: an etcd and kapi as kube-apiserver."""

    def __init__(self, binary, etcd, certs):
        self.dir = tempfile.mkdtemp(prefix="k8s_test_framework_")
        for name in os.listdir(certs):
            shutil.copy(os.path.join(certs, name), self.dir)
        self.binary, self.etcd_binary = binary, etcd
        self.port = free_port()
        self.etcd_port, self.peer_port = free_port(), free_port()
        self.etcd = self.server = None

    def start_etcd(self):
        self.etcd = subprocess.Popen(
            [self.etcd_binary, f"--data-dir={self.dir}/etcd",
             f"--listen-client-urls=http://127.0.0.1:{self.etcd_port}",
             f"--advertise-client-urls=http://127.0.0.1:{self.etcd_port}",
             f"--listen-peer-urls=http://127.0.0.1:{self.peer_port}",
             f"--initial-advertise-peer-urls=http://127.0.0.1:{self.peer_port}",
             f"--initial-cluster=default=http://127.0.0.1:{self.peer_port}",
             "--unsafe-no-fsync=true"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def etcd_healthy(self):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.etcd_port, timeout=1)
            conn.request("GET", "/health")
            return conn.getresponse().status == 200
        except OSError:
            return False

    def start_server(self):
        d, p = self.dir, self.port
        args = sorted([
            "--allow-privileged=true",
            "--authorization-mode=RBAC",
            "--bind-address=127.0.0.1",
            f"--cert-dir={d}",
            f"--client-ca-file={d}/client-cert-auth-ca.crt",
            "--disable-admission-plugins=ServiceAccount",
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            f"--secure-port={p}",
            f"--service-account-issuer=https://127.0.0.1:{p}/",
            f"--service-account-key-file={d}/sa-signer.crt",
            f"--service-account-signing-key-file={d}/sa-signer.key",
            "--service-cluster-ip-range=10.0.0.0/24",
        ])
        self.spawned = time.monotonic()
        self.server = subprocess.Popen([self.binary, *args], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)

    def healthy(self):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        try:
            conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=1, context=context)
            conn.request("GET", "/healthz")
            return conn.getresponse().status == 200
        except OSError:
            return False

    def stop(self):
        for process in (self.server, self.etcd):
            if process and process.poll() is None:
                process.kill()
                process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait(check, limit, every=0.01):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(every)
    return False


def one_run(binary, etcd, certs):
    instance = Instance(binary, etcd, certs)
    try:
        instance.start_etcd()
        if not wait(instance.etcd_healthy, 20):
            sys.exit("etcd did not start")
        instance.start_server()
        if not wait(instance.healthy, 30):
            sys.exit("kapi did not become healthy")
        start = time.monotonic() - instance.spawned
        rss = rss_mib(instance.server.pid)
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        # A watch held open by the admin (a client certificate in
        # system:masters, as envtest's users are).
        context.load_cert_chain(os.path.join(instance.dir, "admin.crt"),
                                os.path.join(instance.dir, "admin.key"))
        watch = socket.create_connection(("127.0.0.1", instance.port))
        watch = context.wrap_socket(watch)
        watch.sendall(b"GET /api/v1/namespaces?watch=true HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.2)
        stopping = time.monotonic()
        instance.server.send_signal(signal.SIGTERM)
        instance.server.wait(timeout=30)
        stop = time.monotonic() - stopping
        watch.close()
        return start, stop, rss
    finally:
        instance.stop()


def twenty(binary, etcd, certs, count):
    instances = [Instance(binary, etcd, certs) for _ in range(count)]
    try:
        began = time.monotonic()
        for i in instances:
            i.start_etcd()
        for i in instances:
            if not wait(i.etcd_healthy, 60):
                sys.exit("an etcd did not start")
        servers_began = time.monotonic()
        for i in instances:
            i.start_server()
        for i in instances:
            if not wait(i.healthy, 120):
                sys.exit("a kapi did not become healthy")
        all_ready = time.monotonic() - servers_began
        time.sleep(1)
        kapi = [rss_mib(i.server.pid) or 0 for i in instances]
        etcds = [rss_mib(i.etcd.pid) or 0 for i in instances]
        return {"instances": count, "all_ready_s": round(all_ready, 3),
                "with_etcd_start_s": round(time.monotonic() - began - 1, 3),
                "kapi_rss_mib_total": round(sum(kapi), 1),
                "kapi_rss_mib_each_median": round(statistics.median(kapi), 1),
                "etcd_rss_mib_total": round(sum(etcds), 1)}
    finally:
        for i in instances:
            i.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kapi")
    parser.add_argument("--etcd", default="/usr/bin/etcd")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--instances", type=int, default=20)
    parser.add_argument("--json")
    args = parser.parse_args()
    assets = tempfile.mkdtemp(prefix="kapi-assets-")
    certs = tempfile.mkdtemp(prefix="envtest-certs-")
    try:
        binary = os.path.join(assets, "kube-apiserver")
        os.symlink(os.path.abspath(args.kapi), binary)
        tiny_ca(certs, "serving-ca")
        tiny_leaf(certs, "serving-ca", "apiserver", "/CN=localhost/O=envtest",
                  "DNS:localhost,IP:127.0.0.1")
        tiny_ca(certs, "sa-signer")
        tiny_ca(certs, "client-cert-auth-ca")
        tiny_leaf(certs, "client-cert-auth-ca", "admin", "/CN=admin/O=system:masters")
        runs = []
        for n in range(args.runs):
            start, stop, rss = one_run(binary, args.etcd, certs)
            runs.append((start, stop, rss))
            print(f"run {n + 1}: healthy {start * 1000:.1f} ms after the spawn, "
                  f"{rss:.1f} MiB; exited {stop * 1000:.1f} ms after SIGTERM")
        result = {
            "start_ms_median": round(statistics.median(r[0] for r in runs) * 1000, 1),
            "stop_ms_median": round(statistics.median(r[1] for r in runs) * 1000, 1),
            "rss_mib_at_healthy_median": round(statistics.median(r[2] for r in runs), 1),
        }
        print(f"median: healthy {result['start_ms_median']} ms, exit {result['stop_ms_median']} ms")
        if args.instances:
            result["parallel"] = twenty(binary, args.etcd, certs, args.instances)
            print(json.dumps(result["parallel"]))
        if args.json:
            with open(args.json, "w") as out:
                json.dump(result, out, indent=2)
    finally:
        shutil.rmtree(assets, ignore_errors=True)
        shutil.rmtree(certs, ignore_errors=True)


if __name__ == "__main__":
    main()
