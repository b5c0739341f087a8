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

/// A small deterministic generator (xorshift), for the property tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A random value following `schema`: few distinct strings and numbers, so
/// that two random objects share keys and list elements; list elements with
/// a merge key have distinct keys, merged primitive lists distinct values.
fn random(
    node: super::Node<'_>,
    meta: super::FieldMeta<'_>,
    rng: &mut Rng,
    depth: usize,
) -> Option<Value> {
    const WORDS: [&str; 4] = ["a", "b", "c", "d"];
    let schema = node.schema?;
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        if depth > 5 {
            return None;
        }
        let mut out = serde_json::Map::new();
        for name in properties.keys() {
            if name == "apiVersion" || name == "kind" || !rng.chance(35) {
                continue;
            }
            let (child, child_meta) = node.field(name);
            if let Some(value) = random(child, child_meta, rng, depth + 1) {
                out.insert(name.clone(), value);
            }
        }
        return Some(Value::Object(out));
    }
    match schema["type"].as_str() {
        Some("array") => {
            let items = node.items();
            let mut out: Vec<Value> = Vec::new();
            for _ in 0..rng.below(4) {
                let Some(mut item) = random(items, super::FieldMeta::default(), rng, depth + 1)
                else {
                    continue;
                };
                if let (Some(key), Value::Object(map)) = (meta.merge_key, &mut item) {
                    let id = WORDS[rng.below(4) as usize];
                    if out.iter().any(|o| o[key] == id) {
                        continue;
                    }
                    // Keys that are numbers (containerPort) stay numbers.
                    let value = match items.field(key).0.schema.and_then(|s| s["type"].as_str()) {
                        Some("integer") => json!(rng.below(4) + 1),
                        _ => json!(id),
                    };
                    if out.iter().any(|o| o[key] == value) {
                        continue;
                    }
                    map.insert(key.to_owned(), value);
                } else if meta.merge && out.contains(&item) {
                    continue;
                }
                out.push(item);
            }
            Some(Value::Array(out))
        }
        Some("object") => {
            let values = super::Node::new(node.defs, schema.get("additionalProperties"));
            values.schema?;
            let mut out = serde_json::Map::new();
            for _ in 0..rng.below(3) {
                let key = WORDS[rng.below(4) as usize];
                if let Some(value) = random(values, super::FieldMeta::default(), rng, depth + 1) {
                    out.insert(key.to_owned(), value);
                }
            }
            Some(Value::Object(out))
        }
        Some("string") => Some(json!(WORDS[rng.below(4) as usize])),
        Some("integer") | Some("number") => Some(json!(rng.below(4))),
        Some("boolean") => Some(json!(rng.chance(50))),
        _ => None,
    }
}

/// Runs the property on 300 random pairs of `T`; counts the directives the
/// patches used, by name.
fn property<T: Resource + OpenApi>(
    seed: u64,
    seen: &mut std::collections::BTreeMap<&'static str, usize>,
) {
    let (defs, root) = schema::<T>();
    let schema = super::PatchSchema { defs, root };
    let node = super::Node::new(&schema.defs, Some(&schema.root));
    let mut rng = Rng(seed);
    for round in 0..300 {
        let a = random(node, super::FieldMeta::default(), &mut rng, 0).unwrap();
        let b = random(node, super::FieldMeta::default(), &mut rng, 0).unwrap();
        let patch = schema.diff(&a, &b);
        let text = patch.to_string();
        for directive in [
            "$setElementOrder/",
            "\"$patch\":\"delete\"",
            "$deleteFromPrimitiveList/",
            ":null",
        ] {
            *seen.entry(directive).or_default() += text.matches(directive).count();
        }
        let mut got = a.clone();
        schema
            .apply(&mut got, &patch)
            .unwrap_or_else(|e| panic!("round {round}: {e:?}\nA: {a}\nB: {b}\npatch: {patch}"));
        assert_eq!(got, b, "round {round}\nA: {a}\npatch: {patch}");
        // The patch from an object to itself changes nothing.
        let same = schema.diff(&b, &b);
        let mut again = b.clone();
        schema.apply(&mut again, &same).unwrap();
        assert_eq!(again, b);
    }
}

#[test]
fn the_patch_between_two_objects_turns_one_into_the_other() {
    let mut seen = std::collections::BTreeMap::new();
    property::<Pod>(0x9e37_79b9_7f4a_7c15, &mut seen);
    property::<Deployment>(0x2545_f491_4f6c_dd1d, &mut seen);
    property::<kapi_api_types::core::v1::Service>(0x1234_5678_9abc_def1, &mut seen);
    property::<kapi_api_types::core::v1::Node>(0x0f0f_f0f0_1357_9bdf, &mut seen);
    property::<kapi_api_types::batch::v1::CronJob>(0x7777_3333_5555_1111, &mut seen);
    // The random pairs exercised every kind of change.
    for (directive, count) in &seen {
        assert!(*count > 5, "{directive} used {count} times");
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
}
