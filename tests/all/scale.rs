//! The `/scale` subresource of deployments, replica sets, stateful sets and
//! replication controllers: an autoscaling/v1 Scale read from the object and
//! written back into it, as `kubectl scale` and autoscalers use it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kapi_test_support::{Server, http_request};
use serde_json::{Value, json};

const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: In, values: [front, back]}]
  template:
    metadata:
      labels: {app: web, tier: front}
    spec:
      containers: [{name: web, image: nginx:1.27}]
";

fn request(s: &Server, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let (code, body) = http_request(s.address, method, path, body).unwrap();
    (code, serde_json::from_str(&body).unwrap_or(Value::Null))
}

#[test]
fn kubectl_scale_writes_through_the_scale_subresource() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    s.kubectl_stdin_ok(&["create", "-f", "-"], DEPLOYMENT);
    let path = "/apis/apps/v1/namespaces/default/deployments/web/scale";

    let (code, scale) = request(&s, "GET", path, None);
    assert_eq!(code, 200, "{scale}");
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["metadata"]["name"], "web");
    assert!(scale["metadata"]["uid"].is_string());
    assert_eq!(scale["spec"], json!({"replicas": 2}));
    assert_eq!(
        scale["status"],
        json!({"replicas": 0, "selector": "app=web,tier in (back,front)"})
    );

    assert!(
        s.kubectl_ok(&["scale", "deployment", "web", "--replicas=5"])
            .contains("deployment.apps/web scaled")
    );
    let deployment: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "deployment", "web", "-o", "json"])).unwrap();
    assert_eq!(deployment["spec"]["replicas"], 5);
    assert_eq!(deployment["metadata"]["generation"], 2);

    // PUT with a stale resourceVersion conflicts; a negative count is invalid.
    let mut stale = scale.clone();
    stale["spec"]["replicas"] = json!(7);
    let (code, conflict) = request(&s, "PUT", path, Some(&stale.to_string()));
    assert_eq!(code, 409, "{conflict}");
    let (_, current) = request(&s, "GET", path, None);
    let mut negative = current.clone();
    negative["spec"]["replicas"] = json!(-1);
    let (code, invalid) = request(&s, "PUT", path, Some(&negative.to_string()));
    assert_eq!(code, 422, "{invalid}");
    assert_eq!(
        invalid["message"],
        "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    );
    let mut fresh = current.clone();
    fresh["spec"]["replicas"] = json!(3);
    let (code, answer) = request(&s, "PUT", path, Some(&fresh.to_string()));
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["spec"]["replicas"], 3);

    // Discovery lists the subresource with its autoscaling/v1 kind.
    let apps: Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "--raw", "/apis/apps/v1"])).unwrap();
    let sub = apps["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments/scale")
        .expect("deployments/scale");
    assert_eq!(
        (&sub["group"], &sub["version"], &sub["kind"]),
        (&json!("autoscaling"), &json!("v1"), &json!("Scale"))
    );
    let (code, _) = request(
        &s,
        "GET",
        "/api/v1/namespaces/default/configmaps/x/scale",
        None,
    );
    assert_eq!(code, 404, "no scale on a ConfigMap");
}
