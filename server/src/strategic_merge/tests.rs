//! The semantics Kubernetes documents for strategic merge patch, case by
//! case, on the real Pod and Deployment schemas.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use kapi_runtime::Resource;
use kapi_runtime::openapi::{Definitions as Defs, OpenApi};
use serde_json::{Value, json};

use super::{Definitions, apply};

fn schema<T: Resource + OpenApi>() -> (Definitions, Value) {
    let mut defs = Defs::new();
    let root = T::schema(&mut defs);
    (defs.into_inner(), root)
}

fn patched<T: Resource + OpenApi>(doc: Value, patch: Value) -> Result<Value, String> {
    let (defs, root) = schema::<T>();
    let mut doc = doc;
    apply(&mut doc, &patch, &defs, &root)?;
    Ok(doc)
}

type Pod = kapi_api_types::core::v1::Pod;
type Deployment = kapi_api_types::apps::v1::Deployment;

fn pod() -> Value {
    json!({
        "metadata": {"name": "p", "labels": {"app": "web", "tier": "front"},
            "finalizers": ["a.example.com/x", "b.example.com/y"]},
        "spec": {
            "containers": [
                {"name": "web", "image": "nginx:1", "args": ["-a", "-b"],
                 "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 443}],
                 "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                {"name": "sidecar", "image": "busybox"}
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "nodeSelector": {"disk": "ssd", "zone": "a"}
        }
    })
}

#[test]
fn lists_with_a_merge_key_merge_element_by_element() {
    let out = patched::<Pod>(
        pod(),
        json!({"spec": {"containers": [
            {"name": "web", "image": "nginx:2"},
            {"name": "new", "image": "redis"}
        ]}}),
    )
    .unwrap();
    let containers = &out["spec"]["containers"];
    assert_eq!(containers[0]["image"], "nginx:2");
    assert_eq!(
        containers[0]["args"],
        json!(["-a", "-b"]),
        "untouched fields stay"
    );
    assert_eq!(
        containers[1]["name"], "sidecar",
        "unmentioned elements stay"
    );
    assert_eq!(containers[2]["name"], "new", "new elements are appended");
}

#[test]
fn nested_lists_merge_by_their_own_keys() {
    let out = patched::<Pod>(
        pod(),
        json!({"spec": {"containers": [{"name": "web",
            "ports": [{"containerPort": 8080}],
            "env": [{"name": "B", "value": "two"}, {"name": "C", "value": "3"}]}]}}),
    )
    .unwrap();
    let web = &out["spec"]["containers"][0];
    assert_eq!(
        web["ports"],
        json!([{"containerPort": 80, "name": "http"}, {"containerPort": 443}, {"containerPort": 8080}])
    );
    assert_eq!(
        web["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "two"}, {"name": "C", "value": "3"}])
    );
}

#[test]
fn lists_without_a_strategy_are_replaced() {
    let out = patched::<Pod>(
        pod(),
        json!({"spec": {"containers": [{"name": "web", "args": ["-c"]}]}}),
    )
    .unwrap();
    assert_eq!(out["spec"]["containers"][0]["args"], json!(["-c"]));
}

#[test]
fn null_deletes_a_field_and_maps_merge() {
    let out = patched::<Pod>(
        pod(),
        json!({"metadata": {"labels": {"tier": null, "track": "stable"}},
            "spec": {"nodeSelector": {"zone": "b"}}}),
    )
    .unwrap();
    assert_eq!(
        out["metadata"]["labels"],
        json!({"app": "web", "track": "stable"})
    );
    assert_eq!(
        out["spec"]["nodeSelector"],
        json!({"disk": "ssd", "zone": "b"})
    );
}

#[test]
fn patch_delete_removes_one_element() {
    let out = patched::<Pod>(
        pod(),
        json!({"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}),
    )
    .unwrap();
    let names: Vec<&str> = out["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["web"]);
}

#[test]
fn patch_replace_replaces_a_list_or_a_map() {
    let out = patched::<Pod>(
        pod(),
        json!({"spec": {
            "containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}],
            "nodeSelector": {"$patch": "replace", "gpu": "yes"}
        }}),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "only", "image": "x"}])
    );
    assert_eq!(out["spec"]["nodeSelector"], json!({"gpu": "yes"}));
}

#[test]
fn patch_delete_on_a_map_removes_it() {
    let out = patched::<Pod>(
        pod(),
        json!({"spec": {"nodeSelector": {"$patch": "delete"}}}),
    )
    .unwrap();
    assert!(out["spec"].get("nodeSelector").is_none(), "{out}");
}

#[test]
fn primitive_lists_with_merge_are_united_and_values_deleted() {
    let out = patched::<Pod>(
        pod(),
        json!({"metadata": {"finalizers": ["c.example.com/z", "a.example.com/x"]}}),
    )
    .unwrap();
    assert_eq!(
        out["metadata"]["finalizers"],
        json!(["a.example.com/x", "b.example.com/y", "c.example.com/z"])
    );
    let out = patched::<Pod>(
        pod(),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/x"]}}),
    )
    .unwrap();
    assert_eq!(out["metadata"]["finalizers"], json!(["b.example.com/y"]));
}

#[test]
fn set_element_order_orders_the_merged_list() {
    let out = patched::<Pod>(
        pod(),
        json!({"spec": {
            "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "web"}],
            "containers": [{"name": "web", "image": "nginx:3"}]
        }}),
    )
    .unwrap();
    let names: Vec<&str> = out["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sidecar", "web"]);
    assert_eq!(out["spec"]["containers"][1]["image"], "nginx:3");
}

#[test]
fn retain_keys_clears_the_fields_it_does_not_list() {
    // Deployment.spec.strategy declares retainKeys: switching to Recreate
    // drops rollingUpdate.
    let deployment = json!({"spec": {"strategy": {"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1}}}});
    let out = patched::<Deployment>(
        deployment,
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
    )
    .unwrap();
    assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
    // Pod volumes merge by name and retain keys: a volume changes its source.
    let out = patched::<Pod>(
        pod(),
        json!({"spec": {"volumes": [{"name": "data", "$retainKeys": ["name", "hostPath"],
            "hostPath": {"path": "/srv"}}]}}),
    )
    .unwrap();
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "data", "hostPath": {"path": "/srv"}}])
    );
}

#[test]
fn bad_patches_are_refused_with_upstreams_messages() {
    let missing_key = patched::<Pod>(pod(), json!({"spec": {"containers": [{"image": "x"}]}}));
    assert_eq!(
        missing_key.unwrap_err(),
        "map: map[image:x] does not contain declared merge key: name"
    );
    let unknown = patched::<Pod>(pod(), json!({"spec": {"$patch": "explode"}}));
    assert_eq!(
        unknown.unwrap_err(),
        "unknown patch type: explode in map: map[$patch:explode]"
    );
    let not_listed = patched::<Deployment>(
        json!({"spec": {"strategy": {}}}),
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}),
    );
    assert!(not_listed.is_err());
    let (defs, root) = schema::<Pod>();
    let schema = super::PatchSchema { defs, root };
    assert_eq!(
        schema.apply(&mut pod(), &json!([1])),
        Err(super::PatchError::NotAnObject("array"))
    );
}
