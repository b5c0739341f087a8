//! `widget-apiserver`, the widget as an extension API server, registered
//! with a kapi (the workspace's `kapi` binary) through an APIService, as
//! sample-apiserver is registered with kube-apiserver: it learns its users
//! from the cluster (the front proxy's headers, checked against the
//! cluster's extension-apiserver-authentication ConfigMap, and TokenReviews)
//! and asks the cluster what they may do (SubjectAccessReviews).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kapi_test_support::{Server, http_exchange, require::require};
use serde_json::{Value, json};

/// The workspace's `kapi` binary, built beside this crate's by
/// `cargo test --workspace`.
fn kapi_binary() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_widget-apiserver")).with_file_name("kapi")
}

fn until<T>(what: &str, mut done: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(value) = done() {
            return value;
        }
        assert!(Instant::now() < deadline, "waited 60 s for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn curl(url: &str, ca: &Path, token: Option<&str>) -> (u16, Value) {
    let mut command = std::process::Command::new("curl");
    command
        .args([
            "-sS",
            "--max-time",
            "20",
            "-w",
            "\n%{http_code}",
            "--cacert",
        ])
        .arg(ca);
    if let Some(token) = token {
        command.args(["-H", &format!("Authorization: Bearer {token}")]);
    }
    let out = command.arg(url).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = stdout.rsplit_once('\n').unwrap_or(("", "0"));
    (
        code.trim().parse().unwrap_or(0),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

#[test]
fn the_widget_is_served_as_an_extension_of_a_cluster() {
    let kapi = kapi_binary();
    if !require(
        kapi.exists(),
        &kapi.display().to_string(),
        "build the workspace's kapi binary: cargo test --workspace builds it",
    ) {
        return;
    }
    let tokens = tempfile::tempdir().unwrap();
    let token_file = tokens.path().join("tokens.csv");
    std::fs::write(&token_file, "carol-token,carol,carol-uid,devs\n").unwrap();
    let cluster = Server::start_args(&kapi, &["--token-auth-file", token_file.to_str().unwrap()]);
    let kubeconfig = cluster.kubeconfig();
    let extension = Server::start_args(
        Path::new(env!("CARGO_BIN_EXE_widget-apiserver")),
        &[
            "--authentication-kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--authorization-kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--tls-san",
            "widget-apiserver.default.svc",
        ],
    );
    // It serves its own group alone.
    let (code, groups) = {
        let answer = http_exchange(extension.address, "GET", "/apis", &[], b"").unwrap();
        (
            answer.code,
            serde_json::from_str::<Value>(&answer.body).unwrap(),
        )
    };
    assert_eq!(code, 200);
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["example.kapi.dev"]);

    // Registered with the cluster.
    let port = extension.address.port();
    let ca = std::fs::read(extension.data_dir().join("ca.crt")).unwrap();
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    let registration = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "widget-apiserver", "namespace": "default"},
            "spec": {"type": "ExternalName", "externalName": "127.0.0.1",
                "ports": [{"port": port}]}},
        {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": "v1.example.kapi.dev"},
            "spec": {"group": "example.kapi.dev", "version": "v1", "caBundle": ca,
                "groupPriorityMinimum": 1000, "versionPriority": 15,
                "service": {"namespace": "default", "name": "widget-apiserver", "port": port}}}]});
    cluster.kubectl_stdin_ok(&["apply", "-f", "-"], &registration.to_string());
    until("the APIService available and its kind discovered", || {
        let out = cluster.kubectl(&["api-resources", "--api-group", "example.kapi.dev"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.success() && text.contains("widgets")).then_some(())
    });
    let available = cluster.kubectl_ok(&[
        "get",
        "apiservice",
        "v1.example.kapi.dev",
        "-o",
        "jsonpath={.status.conditions[0].message}",
    ]);
    assert_eq!(available, "all checks passed");

    // kubectl through the cluster.
    let explained = cluster.kubectl_ok(&["explain", "widgets.spec.color"]);
    assert!(explained.contains("FIELD: color <string>"), "{explained}");
    let mut watch = cluster
        .kubectl_command(&[
            "get",
            "widgets",
            "--watch",
            "--output-watch-events",
            "-o",
            "jsonpath={.type} {.object.metadata.name}{\"\\n\"}",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = watch.stdout.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let widget = r#"{"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"}, "spec": {"color": "red", "size": 3}}"#;
    let applied = cluster.kubectl_stdin_ok(&["apply", "-f", "-"], widget);
    assert!(
        applied.contains("widget.example.kapi.dev/w1 created"),
        "{applied}"
    );
    assert_eq!(
        lines.recv_timeout(Duration::from_secs(20)).unwrap(),
        "ADDED w1"
    );
    let created = cluster.kubectl_stdin_ok(
        &["create", "-f", "-"],
        r#"{"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
            "metadata": {"name": "w2", "namespace": "default"}, "spec": {"color": "blue"}}"#,
    );
    assert!(
        created.contains("widget.example.kapi.dev/w2 created"),
        "{created}"
    );
    assert_eq!(
        lines.recv_timeout(Duration::from_secs(20)).unwrap(),
        "ADDED w2"
    );
    // The extension's defaults and validation hold through the cluster.
    let size = cluster.kubectl_ok(&["get", "widget", "w2", "-o", "jsonpath={.spec.size}"]);
    assert_eq!(size, "1");
    let refused = cluster.kubectl_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
            "metadata": {"name": "w3", "namespace": "default"}, "spec": {"color": "pink"}}"#,
    );
    assert!(!refused.status.success());
    let listed = cluster.kubectl_ok(&["get", "wd"]);
    assert!(listed.contains("w1") && listed.contains("red"), "{listed}");
    // The extension's own store holds it, and it knows who wrote it.
    let (code, stored) = {
        let answer = http_exchange(
            extension.address,
            "GET",
            "/apis/example.kapi.dev/v1/namespaces/default/widgets/w1",
            &[],
            b"",
        )
        .unwrap();
        (
            answer.code,
            serde_json::from_str::<Value>(&answer.body).unwrap(),
        )
    };
    assert_eq!(code, 200);
    assert_eq!(stored["spec"]["color"], "red");
    cluster.kubectl_ok(&["delete", "widget", "w1"]);
    assert_eq!(
        lines.recv_timeout(Duration::from_secs(20)).unwrap(),
        "DELETED w1"
    );
    let _ = watch.kill();
    let _ = watch.wait();

    // An APIService whose Service is not there: upstream's condition, and
    // upstream's plain-text 503 to its requests.
    cluster.kubectl_stdin_ok(
        &["apply", "-f", "-"],
        r#"{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": "v1.nowhere.kapi.dev"},
            "spec": {"group": "nowhere.kapi.dev", "version": "v1", "insecureSkipTLSVerify": true,
                "groupPriorityMinimum": 1000, "versionPriority": 15,
                "service": {"namespace": "default", "name": "nowhere", "port": 443}}}"#,
    );
    let message = until("the APIService judged", || {
        let out = cluster.kubectl(&[
            "get",
            "apiservice",
            "v1.nowhere.kapi.dev",
            "-o",
            "jsonpath={.status.conditions[0].reason}/{.status.conditions[0].message}",
        ]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.starts_with("ServiceNotFound/").then_some(text)
    });
    assert_eq!(
        message,
        "ServiceNotFound/service/nowhere in \"default\" is not present"
    );
    let answer = http_exchange(
        cluster.address,
        "GET",
        "/apis/nowhere.kapi.dev/v1/things",
        &[],
        b"",
    )
    .unwrap();
    assert_eq!(
        (answer.code, answer.body.as_str()),
        (503, "service unavailable\n")
    );

    // A user the cluster knows but has not allowed: refused by the
    // extension itself (a TokenReview and a SubjectAccessReview at the
    // cluster), in kube-apiserver's words.
    let url =
        format!("https://127.0.0.1:{port}/apis/example.kapi.dev/v1/namespaces/default/widgets");
    let ca_file = extension.data_dir().join("ca.crt");
    let (code, refusal) = curl(&url, &ca_file, Some("carol-token"));
    assert_eq!(code, 403, "{refusal}");
    assert_eq!(
        refusal["message"],
        "widgets.example.kapi.dev is forbidden: User \"carol\" cannot list resource \"widgets\" \
         in API group \"example.kapi.dev\" in the namespace \"default\""
    );
    // A service account token of the cluster is the cluster's to review,
    // although this server checks service account tokens of its own too.
    cluster.kubectl_ok(&["create", "serviceaccount", "robot"]);
    let token = cluster.kubectl_ok(&["create", "token", "robot"]);
    let (code, refusal) = curl(&url, &ca_file, Some(token.trim()));
    assert_eq!(code, 403, "{refusal}");
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .contains("User \"system:serviceaccount:default:robot\" cannot list"),
        "{refusal}"
    );
    // A token the cluster does not know: 401.
    let (code, _) = curl(&url, &ca_file, Some("nobody"));
    assert_eq!(code, 401);
    // Allowed in the cluster, allowed here.
    cluster.kubectl_ok(&[
        "create",
        "clusterrole",
        "widgets",
        "--verb=list",
        "--resource=widgets.example.kapi.dev",
    ]);
    cluster.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "widgets",
        "--clusterrole=widgets",
        "--user=carol",
    ]);
    until("carol allowed", || {
        let (code, _) = curl(&url, &ca_file, Some("carol-token"));
        (code == 200).then_some(())
    });
    // Health is open to everyone.
    let (code, _) = curl(&format!("https://127.0.0.1:{port}/readyz"), &ca_file, None);
    assert_eq!(code, 200);
}
