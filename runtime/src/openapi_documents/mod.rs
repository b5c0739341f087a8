//! The OpenAPI documents of a scheme, as kube-apiserver serves them: Swagger 2.0
//! with every route and definition, and one OpenAPI 3.0 document per group
//! version with the schemas it reaches. Pure data: the server serves them (with
//! hashes, validators and the protobuf form), and `build.rs` writes them under
//! `generated/openapi/` for review.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::openapi::referenced;
use crate::resource_info::ResourceInfo;
use crate::scheme::Scheme;

mod definitions;
mod routes;

pub use definitions::{scheme_definitions, v3_definitions};

/// The title and version every document carries.
const INFO_VERSION: &str = concat!("v1.32.0-kapi.", env!("CARGO_PKG_VERSION"));

/// The documents of one scheme.
#[derive(Debug)]
pub struct Documents {
    /// Swagger 2.0 (`/openapi/v2`).
    pub v2: Value,
    /// OpenAPI 3.0 by group version path (`api/v1`, `apis/apps/v1`).
    pub v3: BTreeMap<String, Value>,
}

/// The documents as files under `generated/` (pretty JSON, deterministic):
/// `openapi/v2.json` and `openapi/v3/<api__v1|apis__<group>__<version>>.json`.
pub fn files(scheme: &Scheme) -> Vec<(String, String)> {
    let docs = documents(scheme);
    let pretty = |v: &Value| {
        let mut text = serde_json::to_string_pretty(v).unwrap_or_default();
        text.push('\n');
        text
    };
    let mut out = vec![("openapi/v2.json".to_owned(), pretty(&docs.v2))];
    for (gv, doc) in &docs.v3 {
        out.push((
            format!("openapi/v3/{}.json", gv.replace('/', "__")),
            pretty(doc),
        ));
    }
    out
}

/// Every document of `scheme`: Swagger 2.0, and OpenAPI 3.0 per group version
/// (keyed `api/v1`, `apis/apps/v1`).
pub fn documents(scheme: &Scheme) -> Documents {
    let definitions = scheme_definitions(scheme).into_inner();
    let v3_own = v3_definitions(scheme);
    let gvs = group_versions(scheme);
    let mut v2_paths = Map::new();
    let mut v3 = BTreeMap::new();
    for (gv, infos) in &gvs {
        v2_paths.extend(paths(&definitions, infos, false));
        let paths = paths(&definitions, infos, true);
        let roots = infos.iter().flat_map(|info| {
            let name = kind_definition(&definitions, info);
            let bodies = info.subresources.iter().filter_map(|s| {
                let b = s.body?;
                definition_of(&definitions, b.group, b.version, b.kind)
            });
            let scale = info
                .scale
                .and_then(|_| definition_of(&definitions, "autoscaling", "v1", "Scale"));
            [name.clone(), format!("{name}List")]
                .into_iter()
                .chain(bodies)
                .chain(scale)
                .collect::<Vec<_>>()
        });
        let request_types = ["DeleteOptions", "Status", "Patch", "WatchEvent"]
            .map(|t| format!("io.k8s.apimachinery.pkg.apis.meta.v1.{t}"));
        let schemas = reachable(&definitions, roots.chain(request_types))
            .into_iter()
            .filter_map(|name| {
                let schema = v3_own.get(&name).or_else(|| definitions.get(&name))?;
                Some((name, to_v3(schema)))
            })
            .collect::<Map<String, Value>>();
        let doc = json!({
            "openapi": "3.0.0",
            "info": { "title": "Kubernetes", "version": INFO_VERSION },
            "paths": paths,
            "components": { "schemas": schemas },
        });
        v3.insert(gv.clone(), doc);
    }
    let v2 = json!({
        "swagger": "2.0",
        "info": { "title": "Kubernetes", "version": INFO_VERSION },
        "paths": v2_paths,
        "definitions": definitions,
    });
    Documents { v2, v3 }
}

/// The definition name of a kind (what its schema refers to).
fn kind_definition(definitions: &BTreeMap<String, Value>, info: &ResourceInfo) -> String {
    definition_of(definitions, info.group, info.version, info.kind).unwrap_or_default()
}

/// The definition of the kind `group/version` `kind` (a resource's or a
/// body's), found by its `x-kubernetes-group-version-kind`.
fn definition_of(
    definitions: &BTreeMap<String, Value>,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<String> {
    definitions
        .iter()
        .find(|(_, schema)| {
            schema
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|g| g["group"] == group && g["version"] == version && g["kind"] == kind)
        })
        .map(|(name, _)| name.clone())
}

/// Every definition reachable from `roots` through `$ref`s.
fn reachable(
    definitions: &BTreeMap<String, Value>,
    roots: impl IntoIterator<Item = String>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = roots.into_iter().collect();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = definitions.get(&name) {
            collect_refs(schema, &mut todo);
        }
    }
    seen
}

fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(name) = referenced(schema) {
                out.push(name.to_owned());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// A v2 schema in OpenAPI 3 form: references point into `components/schemas`,
/// and a reference with siblings (a property's description) is wrapped in
/// `allOf`, as kube-apiserver writes them.
fn to_v3(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (key, value) in map {
                if key == "$ref" {
                    continue;
                }
                out.insert(key.clone(), to_v3(value));
            }
            if let Some(name) = referenced(schema) {
                let reference = json!({ "$ref": format!("#/components/schemas/{name}") });
                if out.is_empty() {
                    return reference;
                }
                out.insert("allOf".into(), json!([reference]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(to_v3).collect()),
        other => other.clone(),
    }
}

fn group_versions(scheme: &Scheme) -> BTreeMap<String, Vec<&'static ResourceInfo>> {
    let mut out: BTreeMap<String, Vec<&'static ResourceInfo>> = BTreeMap::new();
    for entry in scheme.entries() {
        let info = entry.info;
        let path = if info.group.is_empty() {
            format!("api/{}", info.version)
        } else {
            format!("apis/{}/{}", info.group, info.version)
        };
        out.entry(path).or_default().push(info);
    }
    out
}

/// The routes of `infos` as path items, in OpenAPI 2 or 3 form.
fn paths(
    definitions: &BTreeMap<String, Value>,
    infos: &[&'static ResourceInfo],
    v3: bool,
) -> Map<String, Value> {
    let body =
        |group: &str, version: &str, kind: &str| definition_of(definitions, group, version, kind);
    let mut paths = Map::new();
    for info in infos {
        let kind = kind_definition(definitions, info);
        let refs = routes::Refs {
            kind: &kind,
            body: &body,
        };
        paths.extend(routes::kind_paths(info, &refs, v3));
    }
    paths
}
