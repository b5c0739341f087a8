//! The OpenAPI documents as clients use them, against the real `kapi` binary:
//! `kubectl explain` prints the structs' doc comments, kubectl 1.27 and 1.28
//! validate manifests against `/openapi/v2` in gnostic protobuf before creating
//! them, and the documents carry the validators and caching headers
//! kube-apiserver sends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use kapi_test_support::require::require;
use kapi_test_support::{Server, text};

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
";

#[test]
fn kubectl_explain_prints_the_field_docs() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let out = s.kubectl_ok(&["explain", "deployment.spec.strategy"]);
    assert!(out.contains("KIND:       Deployment"), "{out}");
    // The doc comments of DeploymentSpec.strategy and DeploymentStrategy.
    assert!(out.contains("How a deployment replaces its pods."), "{out}");
    assert!(
        out.contains("rollingUpdate\t<RollingUpdateDeployment>"),
        "{out}"
    );
    let out = s.kubectl_ok(&["explain", "pods.spec.containers", "--recursive"]);
    for field in [
        "image\t<string>",
        "ports\t<[]ContainerPort>",
        "containerPort\t<integer> -required-",
        "livenessProbe\t<Probe>",
    ] {
        assert!(out.contains(field), "{field} in {out}");
    }
    let out = s.kubectl_ok(&["explain", "configmaps"]);
    assert!(out.contains("binaryData\t<map[string]string>"), "{out}");
}

/// A kubectl of another release, or `None` (the skip recorded; a failure
/// under `KAPI_REQUIRE_ALL`) where the machine lacks it.
#[track_caller]
fn kubectl_release(version: &str) -> Option<PathBuf> {
    let path = PathBuf::from(format!("/usr/lib/google-cloud-sdk/bin/kubectl.{version}"));
    require(
        path.exists(),
        &path.display().to_string(),
        "the Google Cloud SDK's `kubectl` package (packages.cloud.google.com) carries it",
    )
    .then_some(path)
}

#[test]
fn older_kubectls_validate_against_the_protobuf_v2_document() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("deployment.yaml");
    std::fs::write(&manifest, DEPLOYMENT).unwrap();
    for version in ["1.27", "1.28"] {
        let Some(kubectl) = kubectl_release(version) else {
            continue;
        };
        let cache = dir.path().join(format!("cache-{version}"));
        let run = |args: &[&str]| {
            Command::new(&kubectl)
                .arg("--kubeconfig")
                .arg(s.kubeconfig())
                .arg("--cache-dir")
                .arg(&cache)
                .args(args)
                .env_remove("KUBECONFIG")
                .output()
                .unwrap()
        };
        // Client-side validation is on by default in these releases: kubectl
        // downloads /openapi/v2 as protobuf and checks the manifest first.
        let path = manifest.to_str().unwrap();
        let out = run(&["create", "-n", "default", "-f", path, "-v=6"]);
        let stderr = text(&out.stderr);
        assert!(
            out.status.success(),
            "kubectl {version} create: {}{stderr}",
            text(&out.stdout)
        );
        assert!(
            stderr.contains("GET") && stderr.contains("/openapi/v2"),
            "{stderr}"
        );
        let out = run(&["delete", "-n", "default", "deployment", "web"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        // `apply` validates too, and its second run sends a strategic merge
        // patch the old kubectl computed from the same document.
        let out = run(&["apply", "-n", "default", "-f", path]);
        assert!(
            out.status.success(),
            "kubectl {version} apply: {}",
            text(&out.stderr)
        );
        let changed = dir.path().join(format!("changed-{version}.yaml"));
        std::fs::write(&changed, DEPLOYMENT.replace("replicas: 2", "replicas: 3")).unwrap();
        let out = run(&["apply", "-n", "default", "-f", changed.to_str().unwrap()]);
        assert!(
            out.status.success() && text(&out.stdout).contains("configured"),
            "kubectl {version} apply again: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let out = run(&[
            "get",
            "-n",
            "default",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas}",
        ]);
        assert_eq!(text(&out.stdout), "3", "kubectl {version}");
        let out = run(&["delete", "-n", "default", "deployment", "web"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
}

/// `curl -sD-`: the status line and headers of a GET, with extra headers;
/// header names lower-cased, values as sent.
/// curl's arguments presenting the kubeconfig's admin certificate.
fn admin(s: &Server) -> [String; 4] {
    let file = |name: &str| s.data_dir().join(name).display().to_string();
    [
        "--cert".to_owned(),
        file("admin.crt"),
        "--key".to_owned(),
        file("admin.key"),
    ]
}

fn head(s: &Server, path: &str, headers: &[&str]) -> String {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "--http1.1", "-o", "/dev/null", "-D", "-", "--cacert"])
        .arg(s.ca_file())
        .args(admin(s));
    for h in headers {
        cmd.args(["-H", h]);
    }
    text(
        &cmd.arg(format!("{}{path}", s.url()))
            .output()
            .expect("curl")
            .stdout,
    )
    .lines()
    .map(|line| match line.split_once(": ") {
        Some((name, value)) => format!("{}: {value}\n", name.to_ascii_lowercase()),
        None => format!("{}\n", line.to_ascii_lowercase()),
    })
    .collect()
}

#[test]
fn documents_carry_validators_and_cache_headers() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let v2 = head(&s, "/openapi/v2", &[]);
    assert!(v2.starts_with("http/1.1 200"), "{v2}");
    let etag = v2
        .lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .expect("an etag")
        .trim()
        .to_owned();
    let again = head(&s, "/openapi/v2", &[&format!("If-None-Match: {etag}")]);
    assert!(again.starts_with("http/1.1 304"), "{again}");
    let proto = head(
        &s,
        "/openapi/v2",
        &["Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf"],
    );
    assert!(
        proto.contains("content-type: application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
        "{proto}"
    );
    assert!(
        !proto.contains(&etag),
        "each form has its own etag: {proto}"
    );

    let index: serde_json::Value = serde_json::from_str(&text(
        &Command::new("curl")
            .args(["-s", "--cacert"])
            .arg(s.ca_file())
            .args(admin(&s))
            .arg(format!("{}/openapi/v3", s.url()))
            .output()
            .unwrap()
            .stdout,
    ))
    .unwrap();
    let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .expect("apps/v1 in the index");
    let current = head(&s, url, &[]);
    assert!(
        current.contains("cache-control: public, immutable"),
        "{current}"
    );
    assert!(current.contains("expires: "), "{current}");
    let plain = head(&s, "/openapi/v3/apis/apps/v1", &[]);
    assert!(
        plain.contains("cache-control: no-cache, private"),
        "{plain}"
    );
    let old = head(&s, "/openapi/v3/apis/apps/v1?hash=0", &[]);
    assert!(old.starts_with("http/1.1 301"), "{old}");
    assert!(old.contains("cache-control: no-cache, private"), "{old}");
    assert!(old.contains(&format!("location: {url}")), "{old}");
}
