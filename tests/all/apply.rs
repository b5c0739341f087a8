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
    for (kind, patch) in [
        ("merge", r#"{"metadata":{"labels":{"via":"merge"}}}"#),
        (
            "json",
            r#"[{"op":"replace","path":"/metadata/labels/via","value":"json"}]"#,
        ),
    ] {
        let out = s.kubectl(&[
            "patch",
            "deployment",
            "web",
            "-n",
            "default",
            &format!("--type={kind}"),
            "-p",
            patch,
        ]);
        assert!(out.status.success(), "{kind}: {}", text(&out.stderr));
        assert_eq!(jsonpath("{.metadata.labels.via}"), kind);
    }
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

/// A directory of mixed kinds applied twice: created, then unchanged (but
/// for the Secret, whose `stringData` kubectl sends again every time, as
/// against kube-apiserver); `--prune -l` removes what left the manifests.
#[test]
fn a_directory_of_mixed_kinds_applies_twice_and_prunes() {
    let s = server();
    let dir = format!("{FIXTURES}/mixed");
    let first = s.kubectl_ok(&["apply", "-f", &dir]);
    let expected_first = "\
namespace/shop created
serviceaccount/shop-sa created
role.rbac.authorization.k8s.io/reader created
rolebinding.rbac.authorization.k8s.io/reader created
configmap/settings created
secret/creds created
service/web created
deployment.apps/web created
ingress.networking.k8s.io/web created
";
    assert_eq!(first, expected_first);
    let second = s.kubectl_ok(&["apply", "-f", &dir]);
    let expected_second = "\
namespace/shop unchanged
serviceaccount/shop-sa unchanged
role.rbac.authorization.k8s.io/reader unchanged
rolebinding.rbac.authorization.k8s.io/reader unchanged
configmap/settings unchanged
secret/creds configured
service/web unchanged
deployment.apps/web unchanged
ingress.networking.k8s.io/web unchanged
";
    assert_eq!(second, expected_second);
    // Without the config file, pruning by label removes its objects.
    let work = tempfile::tempdir().unwrap();
    for file in ["01-ns.yaml", "02-rbac.yaml", "04-app.yaml"] {
        std::fs::copy(format!("{dir}/{file}"), work.path().join(file)).unwrap();
    }
    let work_dir = work.path().to_str().unwrap();
    let pruned = s.kubectl_ok(&["apply", "-f", work_dir, "--prune", "-l", "app=x"]);
    assert!(pruned.contains("configmap/settings pruned"), "{pruned}");
    assert!(pruned.contains("secret/creds pruned"), "{pruned}");
    let left = s.kubectl_ok(&[
        "get",
        "configmaps,secrets",
        "-n",
        "shop",
        "-l",
        "app=x",
        "-o",
        "name",
    ]);
    assert!(left.trim().is_empty(), "{left}");
}

/// `kubectl diff` (a server-side dry-run patch) exits 0 when nothing would
/// change and 1 when something would; `edit` patches what the editor changed;
/// `replace --force` deletes and creates; `wait` sees a condition and a
/// deletion.
#[test]
fn diff_edit_replace_and_wait() {
    let s = server();
    let v1 = format!("{FIXTURES}/v1.yaml");
    let v2 = format!("{FIXTURES}/v2.yaml");
    s.kubectl_ok(&["apply", "-f", &v1]);
    let same = s.kubectl(&["diff", "-f", &v1]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stderr));
    let changed = s.kubectl(&["diff", "-f", &v2]);
    assert_eq!(changed.status.code(), Some(1), "{}", text(&changed.stderr));
    let shown = text(&changed.stdout);
    assert!(
        shown.contains("-        image: nginx:1.25")
            && shown.contains("+        image: nginx:1.27"),
        "{shown}"
    );
    let image = || {
        s.kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-n",
            "default",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
    };
    assert_eq!(image(), "nginx:1.25", "diff wrote nothing");

    let work = tempfile::tempdir().unwrap();
    let editor = work.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/replicas: [0-9]*/replicas: 7/' \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = s
        .kubectl_command(&["edit", "deployment", "web", "-n", "default"])
        .env("EDITOR", &editor)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("edited"),
        "{}",
        text(&out.stdout)
    );
    let replicas = s.kubectl_ok(&[
        "get",
        "deployment",
        "web",
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(replicas, "7");

    let uid = || {
        s.kubectl_ok(&[
            "get",
            "deployment",
            "web",
            "-n",
            "default",
            "-o",
            "jsonpath={.metadata.uid}",
        ])
    };
    let before = uid();
    let out = s.kubectl_ok(&["replace", "--force", "-f", &v2]);
    assert!(out.contains("deleted") && out.contains("replaced"), "{out}");
    assert_ne!(uid(), before, "a new object");
    assert_eq!(image(), "nginx:1.27");

    let available =
        r#"{"status":{"conditions":[{"type":"Available","status":"True","reason":"Test"}]}}"#;
    s.kubectl_ok(&[
        "patch",
        "deployment",
        "web",
        "-n",
        "default",
        "--subresource=status",
        "--type=merge",
        "-p",
        available,
    ]);
    let waited = s.kubectl_ok(&[
        "wait",
        "deployment/web",
        "-n",
        "default",
        "--for=condition=Available",
        "--timeout=10s",
    ]);
    assert!(waited.contains("condition met"), "{waited}");
    let mut waiter = s
        .kubectl_command(&[
            "wait",
            "deployment/web",
            "-n",
            "default",
            "--for=delete",
            "--timeout=20s",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    s.kubectl_ok(&[
        "delete",
        "deployment",
        "web",
        "-n",
        "default",
        "--wait=false",
    ]);
    let status = waiter.wait().unwrap();
    assert!(status.success());
}

/// `--dry-run=server` runs a create, an apply, every patch type and a delete
/// (one and all) through the server and writes nothing.
#[test]
fn server_side_dry_runs_write_nothing() {
    let s = server();
    let v1 = format!("{FIXTURES}/v1.yaml");
    let out = s.kubectl_ok(&["apply", "--dry-run=server", "-f", &v1]);
    assert_eq!(out, "deployment.apps/web created (server dry run)\n");
    let none = s.kubectl_ok(&["get", "deployments", "-n", "default", "-o", "name"]);
    assert!(none.trim().is_empty(), "{none}");
    let shown = s.kubectl_ok(&[
        "create",
        "configmap",
        "x",
        "--from-literal=a=b",
        "-n",
        "default",
        "--dry-run=server",
        "-o",
        "yaml",
    ]);
    assert!(
        shown.contains("uid:") && shown.contains("creationTimestamp:"),
        "{shown}"
    );
    assert!(!shown.contains("resourceVersion"), "{shown}");
    let missing = s.kubectl(&["get", "configmap", "x", "-n", "default"]);
    assert!(!missing.status.success());

    s.kubectl_ok(&["apply", "-f", &v1]);
    for (kind, patch) in [
        ("strategic", r#"{"metadata":{"labels":{"dry":"run"}}}"#),
        ("merge", r#"{"metadata":{"labels":{"dry":"run"}}}"#),
        (
            "json",
            r#"[{"op":"add","path":"/metadata/labels/dry","value":"run"}]"#,
        ),
    ] {
        let answer = s.kubectl_ok(&[
            "patch",
            "deployment",
            "web",
            "-n",
            "default",
            "--dry-run=server",
            &format!("--type={kind}"),
            "-p",
            patch,
            "-o",
            "jsonpath={.metadata.labels.dry}",
        ]);
        assert_eq!(answer, "run", "{kind}: the answer shows the change");
    }
    let labels = s.kubectl_ok(&[
        "get",
        "deployment",
        "web",
        "-n",
        "default",
        "-o",
        "jsonpath={.metadata.labels}",
    ]);
    assert!(!labels.contains("dry"), "{labels}");
    let out = s.kubectl_ok(&[
        "delete",
        "deployment",
        "web",
        "-n",
        "default",
        "--dry-run=server",
    ]);
    assert!(out.contains("(server dry run)"), "{out}");
    s.kubectl_ok(&[
        "delete",
        "deployments",
        "--all",
        "-n",
        "default",
        "--dry-run=server",
    ]);
    let still = s.kubectl_ok(&["get", "deployments", "-n", "default", "-o", "name"]);
    assert_eq!(still.trim(), "deployment.apps/web");
}
