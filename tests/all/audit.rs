//! The audit log against kube-apiserver 1.32: the same policy and the same
//! requests (kubectl's protobuf creates, a JSON create, a missing object,
//! an impersonated refusal, a watch, a refused token) on kapi, and its
//! events compared field by field with the ones kube-apiserver wrote
//! (recorded), less what differs by nature (IDs, times, the admin's name,
//! object uids and versions, the clients' versions).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use kapi_test_support::Server;
use serde_json::Value;

use crate::rbac::kubectl;
use crate::recorded;

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  resources: [{group: "", resources: ["events"]}]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
- level: Request
  verbs: ["create"]
  resources: [{group: "", resources: ["secrets"]}]
- level: Metadata
  omitStages: []
"#;

/// The requests, as kubectl and curl make them.
fn requests(kubeconfig: &Path) {
    let ok = |args: &[&str]| {
        let (ok, _, err) = kubectl(kubeconfig, args, None);
        assert!(ok, "{args:?}: {err}");
    };
    ok(&[
        "create",
        "configmap",
        "c1",
        "--from-literal=a=b",
        "-n",
        "default",
    ]);
    ok(&[
        "create",
        "secret",
        "generic",
        "s1",
        "--from-literal=a=b",
        "-n",
        "default",
    ]);
    ok(&["get", "pods", "-n", "default"]);
    let _ = kubectl(
        kubeconfig,
        &["get", "secret", "nope", "-n", "default"],
        None,
    );
    let _ = kubectl(
        kubeconfig,
        &[
            "get",
            "pods",
            "-n",
            "default",
            "--as=alice",
            "--as-group=devs",
        ],
        None,
    );
    let (ok, _, err) = kubectl(
        kubeconfig,
        &[
            "get",
            "configmaps",
            "-n",
            "default",
            "--watch",
            "--request-timeout=2s",
        ],
        None,
    );
    let _ = (ok, err);
    // A JSON create, and a refused token.
    let body = r#"{"metadata":{"name":"c2"},"data":{"x":"y"}}"#;
    let (ok, _, err) = kubectl(
        kubeconfig,
        &[
            "create",
            "--raw",
            "/api/v1/namespaces/default/configmaps",
            "-f",
            "-",
        ],
        Some(body),
    );
    assert!(ok, "{err}");
    let server = recorded::server_url(kubeconfig);
    let status = Command::new("curl")
        .args([
            "-sk",
            "-o",
            "/dev/null",
            "-H",
            "Authorization: Bearer wrong",
        ])
        .arg(format!("{server}/api/v1/namespaces"))
        .status()
        .unwrap();
    assert!(status.success());
}

/// The events of the requests above, normalized and sorted.
fn events(log: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut events: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| {
            let user = &event["user"];
            let admin = matches!(user["username"].as_str(), Some("admin" | "kapi-admin"));
            let refused = user.as_object().is_some_and(|u| u.is_empty());
            // Discovery differs with kubectl's caches; objects are compared.
            (admin && event.get("objectRef").is_some()) || refused
        })
        .map(|mut event| {
            let map = event.as_object_mut().unwrap();
            for key in [
                "auditID",
                "requestReceivedTimestamp",
                "stageTimestamp",
                "user",
            ] {
                map.remove(key);
            }
            if let Some(object) = map.get_mut("responseObject") {
                let meta = object["metadata"].as_object_mut().unwrap();
                for key in [
                    "uid",
                    "resourceVersion",
                    "creationTimestamp",
                    "managedFields",
                ] {
                    meta.remove(key);
                }
                // kubectl's list asks for a Table: its rows' objects are
                // compared by name (kapi's column descriptions are shorter
                // than upstream's, a gap of its tables, not of auditing).
                if object["kind"] == "Table" {
                    let names: Vec<Value> = object["rows"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|row| row["object"]["metadata"]["name"].clone())
                        .collect();
                    object["rows"] = Value::Array(names);
                    object.as_object_mut().unwrap().remove("columnDefinitions");
                }
            }
            // The clients' versions are the machine's, not the server's.
            if let Some(agent) = map.get_mut("userAgent") {
                let text = agent.as_str().unwrap_or_default();
                let client = text.split('/').next().unwrap_or_default();
                *agent = Value::from(format!("{client}/<version>"));
            }
            // A watch starts from the list's version, each server's own.
            if let Some(uri) = map.get_mut("requestURI") {
                let text = uri.as_str().unwrap_or_default();
                if let Some((head, tail)) = text.split_once("resourceVersion=") {
                    let rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
                    *uri = Value::from(format!("{head}resourceVersion=N{rest}"));
                }
            }
            event
        })
        .collect();
    events.sort_by_key(|e| e.to_string());
    events
}

/// The same policy and requests on kapi as on kube-apiserver 1.32: the same
/// events, recorded (normalized) in `tests/fixtures/reference/audit-events.json`.
#[test]
fn audit_events_match_kube_apiserver() {
    let upstream = recorded::answers("audit-events", |kubeconfig| {
        let log = recorded::reference_audit_log();
        requests(kubeconfig);
        // The watch's last event is written as it ends.
        std::thread::sleep(std::time::Duration::from_millis(500));
        Value::Array(events(&log))
    });
    if recorded::recording() {
        return;
    }
    let upstream = upstream.as_array().expect("recorded events");
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let our_log = dir.path().join("kapi/audit.log");
    let kapi = Server::start_args(
        Path::new(env!("CARGO_BIN_EXE_kapi")),
        &[
            // kube-apiserver ran without kube-controller-manager: no
            // controller adds kube-root-ca.crt to the lists.
            "--controllers=-*",
            &format!("--audit-policy-file={}", policy.display()),
            &format!("--audit-log-path={}", our_log.display()),
        ],
    );
    requests(&kapi.kubeconfig());
    // The watch's last event is written as it ends.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let ours = events(&our_log);
    let show = |events: &[Value]| {
        events
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        ours.len(),
        upstream.len(),
        "kapi:\n{}\nkube-apiserver:\n{}",
        show(&ours),
        show(upstream)
    );
    for (ours, upstream) in ours.iter().zip(upstream) {
        assert_eq!(ours, upstream);
    }
    assert!(upstream.len() >= 8, "{}", show(upstream));
}
