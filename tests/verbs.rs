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
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(row, ["embedded-0", "Healthy", "ok"], "{table}");

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
