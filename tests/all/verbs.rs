//! Kinds that serve fewer than all eight verbs, as kube-apiserver routes them:
//! ComponentStatus (read-only, probed on every read, never stored) and the
//! create-only review kinds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kapi_test_support::{Server, http_request, text};
use serde_json::Value;

fn start() -> Server {
    Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")))
}

fn status(body: &str) -> Value {
    serde_json::from_str(body).expect("a Status")
}

#[test]
fn componentstatuses_report_the_store_and_refuse_writes() {
    let s = start();
    let out = s.kubectl(&["get", "componentstatuses"]);
    let table = text(&out.stdout);
    let warnings = text(&out.stderr);
    assert!(out.status.success(), "{warnings}");
    assert!(
        warnings.contains("v1 ComponentStatus is deprecated in v1.19+"),
        "{warnings}"
    );
    let names: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        names,
        ["controller-manager", "scheduler", "embedded-0"],
        "{table}"
    );
    let row: Vec<&str> = table.lines().nth(3).unwrap().split_whitespace().collect();
    assert_eq!(row, ["embedded-0", "Healthy", "ok"], "{table}");
    // What kube-apiserver answered with no kube-scheduler running (kube-rs's
    // event recorder reads it), when nothing listens on its port here.
    let scheduler_port_free = std::net::TcpStream::connect("127.0.0.1:10259").is_err();
    let recorded = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/recorded/kube-apiserver-1.32-componentstatus-scheduler.json"
    ));
    if let (true, Ok(recorded)) = (scheduler_port_free, recorded) {
        let (code, body) = http_request(
            s.address,
            "GET",
            "/api/v1/componentstatuses/scheduler",
            None,
        )
        .unwrap();
        assert_eq!(code, 200, "{body}");
        let ours: Value = serde_json::from_str(&body).unwrap();
        let theirs: Value = serde_json::from_str(&recorded).unwrap();
        assert_eq!(ours, theirs);
    }

    let one: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "cs", "embedded-0", "-o", "json"])).unwrap();
    assert_eq!(one["conditions"][0]["status"], "True");

    let (code, body) =
        http_request(s.address, "GET", "/api/v1/componentstatuses/nope", None).unwrap();
    assert_eq!(code, 500);
    assert_eq!(status(&body)["message"], "Component not found: nope");

    for (method, path) in [
        ("POST", "/api/v1/componentstatuses"),
        ("DELETE", "/api/v1/componentstatuses/embedded-0"),
        ("PUT", "/api/v1/componentstatuses/embedded-0"),
        ("GET", "/api/v1/componentstatuses?watch=true"),
    ] {
        let (code, body) = http_request(s.address, method, path, Some("{}")).unwrap();
        assert_eq!(code, 405, "{method} {path}: {body}");
        assert_eq!(status(&body)["reason"], "MethodNotAllowed");
    }
}

fn post(s: &Server, path: &str, body: &str) -> (u16, Value) {
    let (code, body) = http_request(s.address, "POST", path, Some(body)).unwrap();
    (code, serde_json::from_str(&body).expect("JSON"))
}

#[test]
fn reviews_are_answered_and_never_stored() {
    let s = start();
    let (code, review) = post(
        &s,
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"bob","resourceAttributes":{"verb":"get","resource":"pods","namespace":"x"}}}"#,
    );
    assert_eq!(code, 201, "{review}");
    // RBAC grants bob nothing.
    assert_eq!(
        review["status"],
        serde_json::json!({"allowed": false}),
        "{review}"
    );
    assert_eq!(review["spec"]["user"], "bob");

    let (code, body) = http_request(
        s.address,
        "GET",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        None,
    )
    .unwrap();
    assert_eq!(code, 405, "listing a review kind: {body}");
    let (code, _) = http_request(
        s.address,
        "GET",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews/x",
        None,
    )
    .unwrap();
    assert_eq!(code, 404, "a review kind has no object paths");

    // kubectl's own use of the reviews.
    assert_eq!(
        s.kubectl_ok(&["auth", "can-i", "delete", "nodes"]).trim(),
        "yes"
    );
    let whoami = s.kubectl_ok(&["auth", "whoami", "-o", "json"]);
    let whoami: Value = serde_json::from_str(&whoami).unwrap();
    assert_eq!(whoami["status"]["userInfo"]["username"], "kapi-admin");
    let rules = s.kubectl_ok(&["auth", "can-i", "--list"]);
    assert!(rules.contains("*.*"), "{rules}");

    let (code, token) = post(
        &s,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"abc"}}"#,
    );
    assert_eq!(code, 201);
    assert!(token["status"].get("authenticated").is_none(), "{token}");
    assert!(token["status"]["error"].is_string(), "{token}");

    // A namespaced review is posted in its namespace.
    let (code, invalid) = post(
        &s,
        "/apis/authorization.k8s.io/v1/localsubjectaccessreviews",
        r#"{"apiVersion":"authorization.k8s.io/v1","kind":"LocalSubjectAccessReview","metadata":{"namespace":"other"},"spec":{"user":"bob"}}"#,
    );
    assert_eq!(code, 404, "no namespace in the path: {invalid}");
    let discovery = s.kubectl_ok(&["get", "--raw", "/apis/authorization.k8s.io/v1"]);
    let discovery: Value = serde_json::from_str(&discovery).unwrap();
    for r in discovery["resources"].as_array().unwrap() {
        assert_eq!(r["verbs"], serde_json::json!(["create"]), "{r}");
    }
}

const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: default
spec:
  containers:
  - name: web
    image: nginx:1.27
";

#[test]
fn binding_a_pod_sets_its_node_once() {
    let s = start();
    s.kubectl_ok(&["create", "serviceaccount", "default"]);
    s.kubectl_stdin_ok(&["create", "-f", "-"], POD);
    s.kubectl_stdin_ok(
        &["create", "-f", "-"],
        &POD.replace("name: web\n  namespace", "name: api\n  namespace"),
    );
    let (code, answer) = post(
        &s,
        "/api/v1/namespaces/default/bindings",
        r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web","annotations":{"scheduled-by":"test"}},"target":{"kind":"Node","name":"node-1"}}"#,
    );
    assert_eq!(code, 201, "{answer}");
    assert_eq!(answer["kind"], "Status");
    assert_eq!(answer["status"], "Success");
    assert_eq!(answer["code"], 201);
    let pod: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "pod", "web", "-o", "json"])).unwrap();
    assert_eq!(pod["spec"]["nodeName"], "node-1");
    assert_eq!(pod["metadata"]["annotations"]["scheduled-by"], "test");
    let scheduled = pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "PodScheduled")
        .expect("PodScheduled");
    assert_eq!(scheduled["status"], "True");

    let (code, again) = post(
        &s,
        "/api/v1/namespaces/default/pods/web/binding",
        r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web"},"target":{"kind":"Node","name":"node-2"}}"#,
    );
    assert_eq!(code, 409, "{again}");
    assert_eq!(
        again["message"],
        "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to node \"node-1\""
    );
    let (code, mismatch) = post(
        &s,
        "/api/v1/namespaces/default/pods/api/binding",
        r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"other"},"target":{"kind":"Node","name":"node-2"}}"#,
    );
    assert_eq!(code, 400, "{mismatch}");
    let (code, missing) = post(
        &s,
        "/api/v1/namespaces/default/bindings",
        r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"nope"},"target":{"kind":"Node","name":"node-2"}}"#,
    );
    assert_eq!(code, 404, "{missing}");
    assert_eq!(missing["message"], "pods \"nope\" not found");
    // A target that is no named node is refused before the pod is read, as
    // kube-apiserver 1.32 answers: a 500 joining the problems.
    let (code, bad) = post(
        &s,
        "/api/v1/namespaces/default/pods/api/binding",
        r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"api"},"target":{"kind":"Pod"}}"#,
    );
    assert_eq!(code, 500, "{bad}");
    assert_eq!(
        bad["message"],
        "[target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\", target.name: Required value]"
    );
    let (code, unnamed) = post(
        &s,
        "/api/v1/namespaces/default/pods/api/binding",
        r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"api"},"target":{"kind":"Node"}}"#,
    );
    assert_eq!(code, 500, "{unnamed}");
    assert_eq!(unnamed["message"], "target.name: Required value");
    let (code, _) = post(
        &s,
        "/api/v1/namespaces/default/pods/api/binding",
        r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"api"},"target":{"kind":"Node","name":"node-2"}}"#,
    );
    assert_eq!(code, 201);
    assert_eq!(
        s.kubectl_ok(&["get", "pod", "api", "-o", "jsonpath={.spec.nodeName}"]),
        "node-2"
    );
}
