//! Server-side apply end to end with the real clients: kubectl
//! (`--server-side`, `--field-manager`, `--force-conflicts`, the client-side
//! to server-side migration, `--dry-run=server`), kube-rs `Patch::Apply`, and
//! the Python client's `server_side_apply`. What each object's managedFields
//! hold is compared with kube-apiserver's recorded answers in
//! `custom_resources::server_side_apply_answers_as_kube_apiserver_recorded`;
//! here the clients must work and see what upstream's clients see.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use k8s_openapi::api::core::v1::ConfigMap;
use kapi_test_support::Server;
use kapi_test_support::require::require;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

fn server() -> Server {
    Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")))
}

/// `(manager, operation)` of each managedFields entry, in order.
fn managers(object: &Value) -> Vec<(String, String)> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or_default().to_owned(),
                e["operation"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        env: [{name: A, value: \"1\"}, {name: B, value: \"2\"}]
";

#[test]
fn kubectl_applies_server_side_with_conflicts_and_force() {
    let s = server();
    let out = s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], DEPLOYMENT);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("serverside-applied"));

    // Another manager changing replicas conflicts with kubectl.
    let scaled = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {replicas: 5}\n";
    let out = s.kubectl_stdin(
        &["apply", "--server-side", "--field-manager=ops", "-f", "-"],
        scaled,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas"),
        "{stderr}"
    );
    // Forced, ops takes replicas over.
    let out = s.kubectl_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=ops",
            "--force-conflicts",
            "-f",
            "-",
        ],
        scaled,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // kubectl gives replicas up to ops and stops applying env B, which is
    // removed, as nobody else owns it.
    let without_b = DEPLOYMENT
        .replace(", {name: B, value: \"2\"}", "")
        .replace("  replicas: 2\n", "");
    let out = s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], &without_b);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "deployment",
        "web",
        "-o",
        "json",
        "--show-managed-fields",
    ]))
    .unwrap();
    assert_eq!(got["spec"]["replicas"], 5);
    assert_eq!(
        got["spec"]["template"]["spec"]["containers"][0]["env"],
        json!([{"name": "A", "value": "1"}])
    );
    let mut owners = managers(&got);
    owners.sort();
    assert_eq!(
        owners,
        vec![
            ("kubectl".to_owned(), "Apply".to_owned()),
            ("ops".to_owned(), "Apply".to_owned())
        ]
    );

    // A server dry run changes nothing.
    let dry = without_b.replace("nginx:1.25", "nginx:1.27");
    let out = s.kubectl_stdin(
        &["apply", "--server-side", "--dry-run=server", "-f", "-"],
        &dry,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = s.kubectl_ok(&[
        "get",
        "deployment",
        "web",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].image}",
    ]);
    assert_eq!(image, "nginx:1.25");
}

#[test]
fn kubectl_moves_from_client_side_to_server_side_apply_and_back() {
    let s = server();
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved, namespace: default}\ndata: {a: \"1\", b: \"2\"}\n";
    let out = s.kubectl_stdin(&["apply", "-f", "-"], cm);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The same values server-side: no conflict with the client-side owner.
    let changed = cm.replace("b: \"2\"", "c: \"3\"");
    let out = s.kubectl_stdin(&["apply", "--server-side", "-f", "-"], &changed);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // And back to client-side apply, which reads the annotation the
    // server-side apply kept current.
    let out = s.kubectl_stdin(&["apply", "-f", "-"], cm);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "configmap",
        "moved",
        "-o",
        "json",
        "--show-managed-fields",
    ]))
    .unwrap();
    // The annotation held the server-side configuration (a, c): going back
    // to (a, b) client-side removes c, as upstream.
    assert_eq!(got["data"], json!({"a": "1", "b": "2"}));
    let last = got["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .unwrap();
    assert!(last.contains(r#""b":"2""#), "{last}");
    let owners: Vec<String> = managers(&got).into_iter().map(|(m, _)| m).collect();
    assert!(owners.contains(&"kubectl".to_owned()), "{owners:?}");
    assert!(
        owners.contains(&"kubectl-client-side-apply".to_owned()),
        "{owners:?}"
    );
}

#[tokio::test]
async fn kube_rs_applies_with_patch_apply() {
    let s = server();
    let client = crate::kube_client(&s);
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let config = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kr"},
        "data": {"owner": "kube-rs"},
    });
    let applied = api
        .patch("kr", &PatchParams::apply("kube-rs"), &Patch::Apply(&config))
        .await
        .unwrap();
    let entries = applied.metadata.managed_fields.unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].manager.as_deref(), Some("kube-rs"));
    assert_eq!(entries[0].operation.as_deref(), Some("Apply"));

    let other = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kr"},
        "data": {"owner": "someone else"},
    });
    let refused = api
        .patch("kr", &PatchParams::apply("other"), &Patch::Apply(&other))
        .await
        .unwrap_err();
    match refused {
        kube::Error::Api(status) => {
            assert_eq!(status.code, 409);
            assert_eq!(status.reason, "Conflict");
            assert!(status.message.contains("conflict with \"kube-rs\""));
        }
        other => panic!("expected a 409, got {other:?}"),
    }
    let forced = api
        .patch(
            "kr",
            &PatchParams::apply("other").force(),
            &Patch::Apply(&other),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["owner"], "someone else");
}

/// The Python client's `DynamicClient.server_side_apply`.
const PYTHON_APPLY: &str = r#"
import json, sys
from kubernetes import client, config, dynamic
api = dynamic.DynamicClient(config.new_client_from_config(config_file=sys.argv[1]))
configmaps = api.resources.get(api_version="v1", kind="ConfigMap")
body = {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "py", "namespace": "default"}, "data": {"lang": "python"}}
applied = configmaps.server_side_apply(body=body, field_manager="python-client")
print(json.dumps(applied.to_dict()))
"#;

#[test]
fn python_client_applies_server_side() {
    let has_client = std::process::Command::new("python3")
        .args(["-c", "import kubernetes"])
        .status()
        .is_ok_and(|s| s.success());
    if !require(
        has_client,
        "the Python kubernetes client",
        "python3 -m pip install kubernetes",
    ) {
        return;
    }
    let s = server();
    let out = std::process::Command::new("python3")
        .args(["-c", PYTHON_APPLY])
        .arg(s.kubeconfig())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let applied: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(applied["data"], json!({"lang": "python"}));
    assert_eq!(
        managers(&applied),
        vec![("python-client".to_owned(), "Apply".to_owned())]
    );
}

/// What a create's manager owns is what kube-apiserver 1.32 records: the
/// object as its defaulting and its conversion into the internal version
/// leave it, before admission and the registry's strategy (a Secret's
/// `stringData` recorded as the `data` keys it becomes, a DaemonSet's
/// template generation annotation, a Job's defaulted `manualSelector`),
/// so that two servers sharing one etcd store the same managedFields.
#[test]
fn a_creates_manager_owns_what_upstreams_defaulting_and_conversion_set() {
    let s = server();
    let fields = |kind: &str, name: &str| -> Value {
        let object: Value = serde_json::from_str(&s.kubectl_ok(&[
            "get",
            kind,
            name,
            "-o",
            "json",
            "--show-managed-fields",
        ]))
        .unwrap();
        object["metadata"]["managedFields"][0]["fieldsV1"].clone()
    };
    s.kubectl_stdin_ok(
        &["create", "-f", "-"],
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
            "stringData": {"k": "v"}})
        .to_string(),
    );
    let secret = fields("secret", "s");
    assert!(secret["f:data"]["f:k"].is_object(), "{secret}");
    assert!(secret.get("f:stringData").is_none(), "{secret}");

    let template = json!({"metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    s.kubectl_stdin_ok(
        &["create", "-f", "-"],
        &json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}})
        .to_string(),
    );
    let daemonset = fields("daemonset", "d");
    assert!(
        daemonset["f:metadata"]["f:annotations"]["f:deprecated.daemonset.template.generation"]
            .is_object(),
        "{daemonset}"
    );
    assert_eq!(
        s.kubectl_ok(&[
            "get",
            "daemonset",
            "d",
            "-o",
            "jsonpath={.metadata.annotations.deprecated\\.daemonset\\.template\\.generation}"
        ]),
        "1"
    );

    let mut job_template = template.clone();
    job_template["spec"]["restartPolicy"] = "Never".into();
    s.kubectl_stdin_ok(
        &["create", "-f", "-"],
        &json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
            "spec": {"template": job_template}})
        .to_string(),
    );
    let job = fields("job", "j");
    assert!(job["f:spec"]["f:manualSelector"].is_object(), "{job}");
}
