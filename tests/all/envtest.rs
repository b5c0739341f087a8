//! kapi started exactly as controller-runtime's envtest starts kube-apiserver,
//! read from its source at v0.20.4 (commit 0f7927c52ef41f261195054ec7f01902357e2c33,
//! the line built on k8s.io 1.32; v0.24.1 passes the same flags):
//! `pkg/internal/testing/controlplane/{apiserver,auth,plane}.go`,
//! `pkg/internal/testing/{certs/tinyca.go,process/process.go}`,
//! `pkg/envtest/{server,crd,webhook}.go`. The binary is found as envtest
//! finds it, `$KUBEBUILDER_ASSETS/kube-apiserver` (here a symlink to `kapi`),
//! probed with `--help`, started beside a real etcd with envtest's sorted
//! `--name=value` flags and ECDSA P-256 PKCS#8 certificates, polled
//! anonymously on `/healthz` every 100 ms; then a client certificate user in
//! system:masters, the `default` namespace, a CRD waited for through
//! discovery, a webhook rewritten to a `url` (double slash and all) with the
//! server's leaf certificate as `caBundle`, and SIGTERM with a watch open.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use kapi_test_support::etcd::{EtcdCluster, etcd_available};
use serde_json::json;

use crate::custom_resources::webhook_tools;

fn kapi() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_kapi"))
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A TinyCA: a self-signed ECDSA P-256 CA `<name>.crt`/`<name>.key`
/// (PKCS#8), `CN=envtest-environment, O=envtest`, as tinyca.go makes one.
fn tiny_ca(dir: &Path, name: &str) {
    let (crt, key) = (format!("{name}.crt"), format!("{name}.key"));
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &key,
            "-out",
            &crt,
            "-days",
            "3650",
            "-subj",
            "/CN=envtest-environment/O=envtest",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,digitalSignature,keyEncipherment",
        ],
    );
}

/// A leaf `<name>.crt`/`<name>.key` of the TinyCA `ca`, valid a week:
/// `subject` and, for a serving certificate, `sans` (serverAuth), else
/// clientAuth.
fn tiny_leaf(dir: &Path, ca: &str, name: &str, subject: &str, sans: Option<&str>) {
    let (crt, key) = (format!("{name}.crt"), format!("{name}.key"));
    let (ca_crt, ca_key) = (format!("{ca}.crt"), format!("{ca}.key"));
    let usage = if sans.is_some() {
        "extendedKeyUsage=serverAuth"
    } else {
        "extendedKeyUsage=clientAuth"
    };
    let mut args = vec![
        "req",
        "-x509",
        "-CA",
        &ca_crt,
        "-CAkey",
        &ca_key,
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        &key,
        "-out",
        &crt,
        "-days",
        "7",
        "-subj",
        subject,
        "-addext",
        usage,
        "-addext",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        "-addext",
        "basicConstraints=critical,CA:FALSE",
    ];
    let san;
    if let Some(sans) = sans {
        san = format!("subjectAltName={sans}");
        args.extend(["-addext", &san]);
    }
    openssl(dir, &args);
}

/// A free loopback port, as envtest's addr.Suggest finds one.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An anonymous GET without checking the certificate, as envtest's poller.
fn anonymous_status(port: u16, path: &str) -> Option<u16> {
    let out = Command::new("curl")
        .args([
            "-sk",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--max-time",
            "2",
        ])
        .arg(format!("https://127.0.0.1:{port}{path}"))
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> std::process::Output {
    Command::new(kapi_test_support::kubectl_path())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .output()
        .unwrap()
}

fn kubectl_ok(kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new(kapi_test_support::kubectl_path())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Polls `check` every `every` until it holds or `limit` passes.
fn poll(what: &str, every: Duration, limit: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        std::thread::sleep(every);
    }
}

#[test]
fn kapi_runs_as_envtests_kube_apiserver() {
    if !etcd_available() || !webhook_tools() {
        return;
    }
    // KUBEBUILDER_ASSETS: a directory holding `kube-apiserver`.
    let assets = tempfile::tempdir().unwrap();
    let binary = assets.path().join("kube-apiserver");
    std::os::unix::fs::symlink(kapi(), &binary).unwrap();

    // process.CheckFlag: `--help` must exit 0; a line starting with
    // `--insecure-port` would make envtest pass that removed flag.
    let help = Command::new(&binary).arg("--help").output().unwrap();
    assert!(help.status.success(), "--help exits {:?}", help.status);
    let help_text = String::from_utf8_lossy(&help.stdout);
    assert!(help_text.contains("--service-account-signing-key-file"));
    assert!(
        !help_text
            .lines()
            .any(|l| l.trim_start().starts_with("--insecure-port")),
        "{help_text}"
    );

    let etcd = EtcdCluster::start(1);
    // envtest's DIR, with its certificates written before the start.
    let dir_holder = tempfile::Builder::new()
        .prefix("k8s_test_framework_")
        .tempdir()
        .unwrap();
    let dir = dir_holder.path();
    tiny_ca(dir, "serving-ca");
    tiny_leaf(
        dir,
        "serving-ca",
        "apiserver",
        "/CN=localhost/O=envtest",
        Some("DNS:localhost,IP:127.0.0.1"),
    );
    tiny_ca(dir, "sa-signer");
    tiny_ca(dir, "client-cert-auth-ca");
    tiny_leaf(
        dir,
        "client-cert-auth-ca",
        "admin",
        "/CN=admin/O=system:masters",
        None,
    );
    assert!(
        std::fs::read_to_string(dir.join("apiserver.key"))
            .unwrap()
            .starts_with("-----BEGIN PRIVATE KEY-----")
    );

    let port = free_port();
    let dir_text = dir.to_str().unwrap();
    let mut args = vec![
        "--allow-privileged=true".to_owned(),
        "--authorization-mode=RBAC".to_owned(),
        "--bind-address=127.0.0.1".to_owned(),
        format!("--cert-dir={dir_text}"),
        format!("--client-ca-file={dir_text}/client-cert-auth-ca.crt"),
        "--disable-admission-plugins=ServiceAccount".to_owned(),
        format!("--etcd-servers={}", etcd.endpoints()),
        format!("--secure-port={port}"),
        format!("--service-account-issuer=https://127.0.0.1:{port}/"),
        format!("--service-account-key-file={dir_text}/sa-signer.crt"),
        format!("--service-account-signing-key-file={dir_text}/sa-signer.key"),
        "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
    ];
    args.sort();
    let log = std::fs::File::create(dir.join("kube-apiserver.log")).unwrap();
    let started = Instant::now();
    let mut server = Process(
        Command::new(&binary)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );
    // pollURLUntilOK: anonymous, every 100 ms, only a 200 counts.
    let deadline = Instant::now() + Duration::from_secs(20);
    while anonymous_status(port, "/healthz") != Some(200) {
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!(
                "kube-apiserver exited {status}: {}",
                std::fs::read_to_string(dir.join("kube-apiserver.log")).unwrap_or_default()
            );
        }
        assert!(Instant::now() < deadline, "not healthy within 20 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    eprintln!("envtest: healthy {:?} after the spawn", started.elapsed());

    // The "admin" user: a client certificate in system:masters, the serving
    // CA trusted.
    let kubeconfig = dir.join("admin.kubecfg");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: https://127.0.0.1:{port}/\n    certificate-authority: {dir_text}/serving-ca.crt\n\
             users:\n- name: envtest\n  user:\n    client-certificate: {dir_text}/admin.crt\n    client-key: {dir_text}/admin.key\n\
             contexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: envtest\ncurrent-context: envtest\n"
        ),
    )
    .unwrap();
    // waitForDefaultNamespace: every 50 ms, 5 s.
    poll(
        "namespace default",
        Duration::from_millis(50),
        Duration::from_secs(5),
        || {
            kubectl(&kubeconfig, &["get", "namespace", "default"])
                .status
                .success()
        },
    );
    assert_eq!(
        kubectl_ok(
            &kubeconfig,
            &["auth", "whoami", "-o", "jsonpath={.status.userInfo.groups}"],
            None
        ),
        "[\"system:masters\",\"system:authenticated\"]"
    );
    // No kube-controller-manager: no default service account appears.
    assert!(
        !kubectl(
            &kubeconfig,
            &["get", "serviceaccount", "default", "-n", "default"]
        )
        .status
        .success()
    );
    // A Pod may be created without one (ServiceAccount admission is off).
    kubectl_ok(
        &kubeconfig,
        &["create", "-f", "-"],
        Some(&json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                "securityContext": {"privileged": true}}]}}).to_string()),
    );

    // InstallCRDs, then WaitForCRDs through discovery (every 100 ms, 10 s).
    kubectl_ok(
        &kubeconfig,
        &["create", "-f", "-"],
        Some(
            &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "frigates.ship.example.com"},
            "spec": {"group": "ship.example.com", "scope": "Namespaced",
                "names": {"plural": "frigates", "singular": "frigate", "kind": "Frigate"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}}]}})
            .to_string(),
        ),
    );
    poll(
        "the CRD in discovery",
        Duration::from_millis(100),
        Duration::from_secs(10),
        || {
            let out = kubectl(&kubeconfig, &["get", "--raw", "/apis/ship.example.com/v1"]);
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("\"frigates\"")
        },
    );

    // A webhook as envtest rewrites it: its server's certificate from a
    // TinyCA of its own, the leaf (not the CA) as caBundle, and a url of
    // `https://host:port/` + the service path, so `//always-deny`.
    let hook_dir = tempfile::tempdir().unwrap();
    tiny_ca(hook_dir.path(), "webhook-ca");
    tiny_leaf(
        hook_dir.path(),
        "webhook-ca",
        "tls",
        "/CN=localhost/O=envtest",
        Some("DNS:localhost,IP:127.0.0.1"),
    );
    let leaf = std::fs::read(hook_dir.path().join("tls.crt")).unwrap();
    let port_file = hook_dir.path().join("port");
    let _webhook = Process(
        Command::new("python3")
            .args([
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/fixtures/admission/webhook.py"
                ),
                port_file.to_str().unwrap(),
                "tls.crt",
                "tls.key",
            ])
            .current_dir(hook_dir.path())
            .spawn()
            .unwrap(),
    );
    poll(
        "the webhook to listen",
        Duration::from_millis(50),
        Duration::from_secs(10),
        || std::fs::read_to_string(&port_file).is_ok_and(|p| !p.is_empty()),
    );
    let hook_port = std::fs::read_to_string(&port_file).unwrap();
    kubectl_ok(
        &kubeconfig,
        &["create", "-f", "-"],
        Some(&json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "envtest-hooks"},
            "webhooks": [{"name": "deny.ship.example.com",
                "clientConfig": {"url": format!("https://127.0.0.1:{hook_port}//always-deny"),
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(&leaf)},
                "rules": [{"operations": ["CREATE"], "apiGroups": ["ship.example.com"],
                    "apiVersions": ["v1"], "resources": ["frigates"]}],
                "sideEffects": "None", "admissionReviewVersions": ["v1"]}]}).to_string()),
    );
    let frigate = json!({"apiVersion": "ship.example.com/v1", "kind": "Frigate",
        "metadata": {"name": "f1", "namespace": "default"}})
    .to_string();
    let refused_by_webhook = || {
        let mut child = Command::new(kapi_test_support::kubectl_path())
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["create", "-f", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(frigate.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stderr).contains("this webhook denies all requests")
    };
    // WaitForWebhooks polls the configuration; kapi reads it within moments.
    poll(
        "the webhook to refuse",
        Duration::from_millis(100),
        Duration::from_secs(10),
        refused_by_webhook,
    );
    let reviews = std::fs::read_to_string(hook_dir.path().join("reviews.jsonl")).unwrap();
    assert!(
        reviews.contains("\"path\": \"/always-deny\"")
            || reviews.contains("\"path\":\"/always-deny\""),
        "{reviews}"
    );

    // Environment.Stop with CleanUpAfterUse: the CRDs are deleted (the
    // definition's finalizer runs in the server).
    kubectl_ok(
        &kubeconfig,
        &[
            "delete",
            "crd",
            "frigates.ship.example.com",
            "--wait=true",
            "--timeout=20s",
        ],
        None,
    );
    assert!(
        !kubectl(&kubeconfig, &["get", "crd", "frigates.ship.example.com"])
            .status
            .success()
    );

    // Stop: SIGTERM with a watch open; kapi is gone well within envtest's
    // 20 s stop timeout.
    let mut watch = Process(
        Command::new(kapi_test_support::kubectl_path())
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["get", "configmaps", "-A", "-w"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(300));
    let pid = server.0.id().to_string();
    let stopping = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if server.0.try_wait().unwrap().is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "still running 5 s after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!("envtest: stopped {:?} after SIGTERM", stopping.elapsed());
    let _ = watch.0.kill();
    // envtest removes DIR afterwards: nothing of kapi's may be needed there.
    drop(dir_holder);
    let _: PathBuf = binary;
}
