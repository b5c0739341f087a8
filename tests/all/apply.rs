//! `kubectl apply` (client-side: a three-way strategic merge patch computed by
//! kubectl from the OpenAPI documents) and the everyday commands that patch,
//! against the real `kapi` binary; the applied Deployment must come out as
//! kube-apiserver 1.32 made it from the same manifests
//! (`tests/fixtures/apply/v2.expected.json`, recorded from the reference
//! server).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kapi_test_support::{Server, text};
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/apply");

fn server() -> Server {
    Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")))
}

/// The object without what the server makes up (uid, times, versions) or
/// computes elsewhere (status).
fn comparable(mut object: Value) -> Value {
    if let Some(meta) = object["metadata"].as_object_mut() {
        for key in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "generation",
        ] {
            meta.remove(key);
        }
    }
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    object
}

#[test]
fn apply_twice_then_a_changed_manifest_gives_upstreams_object() {
    let s = server();
    let v1 = format!("{FIXTURES}/v1.yaml");
    let v2 = format!("{FIXTURES}/v2.yaml");
    assert!(s.kubectl_ok(&["apply", "-f", &v1]).contains("created"));
    assert!(s.kubectl_ok(&["apply", "-f", &v1]).contains("unchanged"));
    // A changed image, a removed env var, an added port, a removed label.
    assert!(s.kubectl_ok(&["apply", "-f", &v2]).contains("configured"));
    let got: Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "deployment",
        "web",
        "-n",
        "default",
        "-o",
        "json",
    ]))
    .unwrap();
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{FIXTURES}/v2.expected.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(comparable(got), comparable(expected));
    assert!(s.kubectl_ok(&["apply", "-f", &v2]).contains("unchanged"));
}

#[test]
fn everyday_commands_patch_strategically() {
    let s = server();
    s.kubectl_ok(&["apply", "-f", &format!("{FIXTURES}/v1.yaml")]);
    let jsonpath = |path: &str| {
        s.kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-n",
            "default",
            "-o",
            &format!("jsonpath={path}"),
        ])
    };
    s.kubectl_ok(&[
        "set",
        "image",
        "deployment/web",
        "web=nginx:1.28",
        "-n",
        "default",
    ]);
    assert_eq!(
        jsonpath("{.spec.template.spec.containers[*].image}"),
        "nginx:1.28 busybox"
    );
    s.kubectl_ok(&[
        "label",
        "deployment",
        "web",
        "team=b",
        "--overwrite",
        "-n",
        "default",
    ]);
    s.kubectl_ok(&[
        "annotate",
        "deployment",
        "web",
        "note=x",
        "--overwrite",
        "-n",
        "default",
    ]);
    assert_eq!(
        jsonpath("{.metadata.labels.team}/{.metadata.annotations.note}"),
        "b/x"
    );
    let out = s.kubectl(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "default",
        "--type=strategic",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}}"#,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(jsonpath("{.spec.template.spec.containers[*].name}"), "web");
    s.kubectl_ok(&["rollout", "restart", "deployment/web", "-n", "default"]);
    assert!(
        !jsonpath("{.spec.template.metadata.annotations.kubectl\\.kubernetes\\.io/restartedAt}")
            .is_empty()
    );
    s.kubectl_ok(&["rollout", "pause", "deployment/web", "-n", "default"]);
    assert_eq!(jsonpath("{.spec.paused}"), "true");
    s.kubectl_ok(&["rollout", "resume", "deployment/web", "-n", "default"]);
    assert_eq!(jsonpath("{.spec.paused}"), "");
    s.kubectl_ok(&["scale", "deployment/web", "--replicas=5", "-n", "default"]);
    assert_eq!(jsonpath("{.spec.replicas}"), "5");
    // A strategic merge patch that does not follow the schema is a 400.
    let out = s.kubectl(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "default",
        "--type=strategic",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"image":"no-name"}]}}}}"#,
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr)
            .contains("map: map[image:no-name] does not contain declared merge key: name"),
        "{}",
        text(&out.stderr)
    );
}
