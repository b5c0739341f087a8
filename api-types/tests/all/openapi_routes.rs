//! kapi's OpenAPI routes against Kubernetes 1.32's
//! (`../shared/upstream/openapi-v2-k8s-1.32.json`): every path upstream has for
//! a kind kapi serves must be there, with the same operations, each with the
//! same id, action, group-version-kind, tag, parameters (where declared, in
//! order, with their types), body and answer schemas, status codes and media
//! types, except for what kapi does not serve, listed below; and kapi has no
//! path of its own.

use std::collections::BTreeMap;

use kapi_runtime::scheme::Scheme;
use serde_json::Value;

use crate::common;

/// Query parameters kapi does not act on: no pretty printing, no unsafe
/// deletion of corrupt objects.
const UNSERVED_PARAMETERS: &[&str] =
    &["pretty", "ignoreStoreReadErrorWithClusterBreakingPotential"];

/// Media types kapi does not speak (CBOR).
fn served_media_type(media_type: &str) -> bool {
    !media_type.contains("cbor")
}

/// Subresources that need a node agent (logs, exec, attach, port forwarding,
/// proxies) or a kubelet feature (in-place resize).
fn needs_a_node(path: &str) -> bool {
    [
        "/log",
        "/exec",
        "/attach",
        "/portforward",
        "/proxy",
        "/resize",
    ]
    .iter()
    .any(|s| path.ends_with(s) || path.contains(&format!("{s}/")))
}

/// A parameter as (name, location, type, required), `$ref`s resolved.
fn parameter(up: &Value, p: &Value) -> (String, String, String, bool) {
    let p = match p["$ref"].as_str() {
        Some(r) => &up["parameters"][r.rsplit('/').next().unwrap_or_default()],
        None => p,
    };
    let text = |k: &str| p[k].as_str().unwrap_or_default().to_owned();
    let type_ = if p["in"] == "body" {
        p["schema"]["$ref"].as_str().unwrap_or_default().to_owned()
    } else {
        text("type")
    };
    (text("name"), text("in"), type_, p["required"] == true)
}

fn parameters(up: &Value, list: &Value) -> Vec<(String, String, String, bool)> {
    list.as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|p| parameter(up, p))
        .filter(|(name, ..)| !UNSERVED_PARAMETERS.contains(&name.as_str()))
        .collect()
}

fn strings(v: &Value, keep: impl Fn(&str) -> bool) -> Vec<String> {
    v.as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .filter(|s| keep(s))
        .map(str::to_owned)
        .collect()
}

/// The comparable facts of one operation.
fn operation(up: &Value, op: &Value) -> BTreeMap<&'static str, String> {
    let mut facts = BTreeMap::new();
    for key in [
        "operationId",
        "x-kubernetes-action",
        "x-kubernetes-group-version-kind",
        "tags",
    ] {
        facts.insert(key, op[key].to_string());
    }
    facts.insert(
        "parameters",
        format!("{:?}", parameters(up, &op["parameters"])),
    );
    facts.insert(
        "consumes",
        format!("{:?}", strings(&op["consumes"], served_media_type)),
    );
    facts.insert(
        "produces",
        format!("{:?}", strings(&op["produces"], served_media_type)),
    );
    let responses: Vec<(String, String)> = op["responses"]
        .as_object()
        .into_iter()
        .flatten()
        // No authentication yet: never a 401.
        .filter(|(code, _)| *code != "401")
        .map(|(code, r)| (code.clone(), r["schema"]["$ref"].to_string()))
        .collect();
    facts.insert("responses", format!("{responses:?}"));
    facts
}

#[test]
fn every_route_of_the_served_kinds_is_upstreams() {
    let Some(text) = common::upstream("openapi-v2-k8s-1.32.json") else {
        return;
    };
    let upstream: Value = serde_json::from_str(&text).expect("JSON");
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let ours = kapi_runtime::openapi_documents::documents(&scheme).v2;
    let ours_paths = ours["paths"].as_object().expect("paths");
    let up_paths = upstream["paths"].as_object().expect("paths");
    // The group versions kapi serves, as path prefixes.
    let served: Vec<String> = scheme
        .entries()
        .map(|e| {
            let i = e.info;
            if i.group.is_empty() {
                format!("/api/{}/", i.version)
            } else {
                format!("/apis/{}/{}/", i.group, i.version)
            }
        })
        .collect();
    let mut problems = Vec::new();
    let mut compared = 0;
    for (path, item) in up_paths {
        let in_served = served
            .iter()
            .any(|p| path.starts_with(p) && path.len() > p.len());
        if !in_served || needs_a_node(path) {
            continue;
        }
        let Some(ours) = ours_paths.get(path) else {
            problems.push(format!("{path}: missing"));
            continue;
        };
        compared += 1;
        let shared = (
            parameters(&upstream, &item["parameters"]),
            parameters(&upstream, &ours["parameters"]),
        );
        if shared.0 != shared.1 {
            problems.push(format!(
                "{path}: path parameters {:?}, upstream {:?}",
                shared.1, shared.0
            ));
        }
        for (method, op) in item.as_object().into_iter().flatten() {
            if method == "parameters" {
                continue;
            }
            let Some(our_op) = ours.get(method) else {
                problems.push(format!("{path} {method}: missing"));
                continue;
            };
            let (theirs, mine) = (operation(&upstream, op), operation(&upstream, our_op));
            for (key, value) in &theirs {
                if mine.get(key) != Some(value) {
                    problems.push(format!(
                        "{path} {method} {key}: {:?}, upstream {value}",
                        mine.get(key)
                    ));
                }
            }
        }
        for method in ours.as_object().into_iter().flatten().map(|(m, _)| m) {
            if item.get(method).is_none() {
                problems.push(format!("{path} {method}: not upstream's"));
            }
        }
    }
    for path in ours_paths.keys() {
        if !up_paths.contains_key(path) {
            problems.push(format!("{path}: not an upstream path"));
        }
    }
    println!("{compared} paths compared with upstream");
    assert!(compared > 300, "the served kinds' routes were compared");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The OpenAPI 3 document of a group version carries the same routes, with
/// its parameters' types as schemas, bodies as request bodies and every media
/// type of an answer.
#[test]
fn openapi_v3_routes_mirror_v2() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let docs = kapi_runtime::openapi_documents::documents(&scheme);
    let core = &docs.v3["api/v1"];
    let eviction = &core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"];
    assert_eq!(eviction["operationId"], "createCoreV1NamespacedPodEviction");
    assert_eq!(
        eviction["requestBody"]["content"]["*/*"]["schema"]["$ref"],
        "#/components/schemas/io.k8s.api.policy.v1.Eviction"
    );
    assert!(
        core["components"]["schemas"]
            .get("io.k8s.api.policy.v1.Eviction")
            .is_some(),
        "the body's schema is in the document"
    );
    let list = &core["paths"]["/api/v1/namespaces/{namespace}/pods"]["get"];
    let content = list["responses"]["200"]["content"].as_object().unwrap();
    assert!(content.contains_key("application/vnd.kubernetes.protobuf;stream=watch"));
    let limit = list["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "limit")
        .unwrap();
    assert_eq!(limit["schema"]["type"], "integer");
    for (gv, doc) in &docs.v3 {
        let v2_paths = docs.v2["paths"].as_object().unwrap();
        for path in doc["paths"].as_object().unwrap().keys() {
            assert!(v2_paths.contains_key(path), "{gv}: {path}");
        }
    }
}
