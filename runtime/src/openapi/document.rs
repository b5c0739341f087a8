//! The OpenAPI documents of a scheme, as kube-apiserver serves them: Swagger 2.0
//! with every route and definition, and one OpenAPI 3.0 document per group
//! version with the schemas it reaches. Pure data: the server serves them (with
//! hashes, validators and the protobuf form), and `build.rs` writes them under
//! `generated/openapi/` for review.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::{referenced, scheme_definitions};
use crate::ResourceInfo;
use crate::scheme::Scheme;

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
    let gvs = group_versions(scheme);
    let mut v2_paths = Map::new();
    let mut v3 = BTreeMap::new();
    for (gv, infos) in &gvs {
        v2_paths.extend(paths(&definitions, infos, false));
        let paths = paths(&definitions, infos, true);
        let roots = infos.iter().flat_map(|info| {
            let name = kind_definition(&definitions, info);
            [name.clone(), format!("{name}List")]
        });
        let request_types = ["DeleteOptions", "Status", "Patch"]
            .map(|t| format!("io.k8s.apimachinery.pkg.apis.meta.v1.{t}"));
        let schemas = reachable(&definitions, roots.chain(request_types))
            .into_iter()
            .filter_map(|name| {
                let schema = definitions.get(&name)?;
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
    definitions
        .iter()
        .find(|(_, schema)| {
            schema
                .get("x-kubernetes-group-version-kind")
                .and_then(|g| g.get(0))
                .is_some_and(|g| {
                    g["group"] == info.group
                        && g["version"] == info.version
                        && g["kind"] == info.kind
                })
        })
        .map(|(name, _)| name.clone())
        .unwrap_or_default()
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
    let mut paths = Map::new();
    for info in infos {
        let kind = kind_definition(definitions, info);
        let ops = Operations {
            info,
            v3,
            kind: &kind,
        };
        let base = if info.group.is_empty() {
            format!("/api/{}", info.version)
        } else {
            format!("/apis/{}/{}", info.group, info.version)
        };
        let scope = if info.namespaced {
            if info.serves("list") {
                paths.insert(format!("{base}/{}", info.plural), ops.all_namespaces());
            }
            format!("{base}/namespaces/{{namespace}}/{}", info.plural)
        } else {
            format!("{base}/{}", info.plural)
        };
        paths.insert(scope.clone(), ops.collection());
        let item = ops.item("");
        if item.as_object().is_some_and(|ops| !ops.is_empty()) {
            paths.insert(format!("{scope}/{{name}}"), item);
        }
        if info.status_subresource {
            paths.insert(format!("{scope}/{{name}}/status"), ops.item("Status"));
        }
    }
    paths
}

fn gvk(info: &ResourceInfo) -> Value {
    json!({ "group": info.group, "version": info.version, "kind": info.kind })
}

/// The group and version as operation ids spell them: `CoreV1`, `AppsV1`,
/// `RbacAuthorizationV1` (the `.k8s.io` suffix dropped, each part capitalised).
fn id_group_version(info: &ResourceInfo) -> String {
    let group = if info.group.is_empty() {
        "core"
    } else {
        info.group.trim_end_matches(".k8s.io")
    };
    let mut out: String = group.split('.').map(capitalize).collect();
    out.push_str(&capitalize(info.version));
    out
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

const LIST_PARAMS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];
const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
const PATCH_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];
const DELETE_PARAMS: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "orphanDependents",
    "propagationPolicy",
];
const DELETE_COLLECTION_PARAMS: &[&str] = &[
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
];

/// The operations of one kind, in OpenAPI 2 or 3 form.
struct Operations<'a> {
    info: &'a ResourceInfo,
    v3: bool,
    /// The kind's definition name.
    kind: &'a str,
}

impl Operations<'_> {
    fn all_namespaces(&self) -> Value {
        let id = format!(
            "list{}{}ForAllNamespaces",
            id_group_version(self.info),
            self.info.kind
        );
        json!({ "get": self.operation(&id, "list", LIST_PARAMS, None, &self.list_ref()) })
    }

    fn collection(&self) -> Value {
        let (gv, kind, ns) = self.names();
        let mut ops = Map::new();
        if self.info.serves("list") {
            ops.insert("get".into(), self.operation(&format!("list{gv}{ns}{kind}"), "list", LIST_PARAMS, None, &self.list_ref()));
        }
        if self.info.serves("create") {
            ops.insert("post".into(), self.operation(&format!("create{gv}{ns}{kind}"), "post", WRITE_PARAMS, Some(self.kind_ref()), &self.kind_ref()));
        }
        if self.info.serves("deletecollection") {
            ops.insert("delete".into(), self.operation(&format!("delete{gv}Collection{ns}{kind}"), "deletecollection", DELETE_COLLECTION_PARAMS, Some(delete_options()), &status_ref()));
        }
        Value::Object(ops)
    }

    /// `{name}` (suffix `""`) or a subresource of it (`"Status"`).
    fn item(&self, suffix: &str) -> Value {
        let (gv, kind, ns) = self.names();
        let kind = format!("{kind}{suffix}");
        // A subresource (`/status`) serves get, put and patch whatever the kind's verbs.
        let serves = |verb: &str| !suffix.is_empty() || self.info.serves(verb);
        let mut ops = Map::new();
        if serves("get") {
            ops.insert("get".into(), self.operation(&format!("read{gv}{ns}{kind}"), "get", &[], None, &self.kind_ref()));
        }
        if serves("update") {
            ops.insert("put".into(), self.operation(&format!("replace{gv}{ns}{kind}"), "put", WRITE_PARAMS, Some(self.kind_ref()), &self.kind_ref()));
        }
        if serves("patch") {
            ops.insert("patch".into(), self.operation(&format!("patch{gv}{ns}{kind}"), "patch", PATCH_PARAMS, Some(patch_ref()), &self.kind_ref()));
        }
        if suffix.is_empty() && self.info.serves("delete") {
            ops.insert(
                "delete".into(),
                self.operation(
                    &format!("delete{gv}{ns}{kind}"),
                    "delete",
                    DELETE_PARAMS,
                    Some(delete_options()),
                    &status_ref(),
                ),
            );
        }
        Value::Object(ops)
    }

    fn names(&self) -> (String, &str, &str) {
        let ns = if self.info.namespaced {
            "Namespaced"
        } else {
            ""
        };
        (id_group_version(self.info), self.info.kind, ns)
    }

    fn kind_ref(&self) -> Value {
        self.reference(self.kind)
    }

    fn list_ref(&self) -> Value {
        self.reference(&format!("{}List", self.kind))
    }

    fn reference(&self, name: &str) -> Value {
        let prefix = if self.v3 {
            "#/components/schemas/"
        } else {
            "#/definitions/"
        };
        json!({ "$ref": format!("{prefix}{name}") })
    }

    fn operation(
        &self,
        id: &str,
        action: &str,
        query: &[&str],
        body: Option<Value>,
        response: &Value,
    ) -> Value {
        let mut parameters: Vec<Value> = query
            .iter()
            .map(|name| {
                if self.v3 {
                    json!({ "name": name, "in": "query", "schema": { "type": "string", "uniqueItems": true } })
                } else {
                    json!({ "name": name, "in": "query", "type": "string", "uniqueItems": true })
                }
            })
            .collect();
        let response = self.v3_refs(response);
        let mut op = json!({
            "operationId": id,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk(self.info),
        });
        if self.v3 {
            op["responses"] = json!({ "200": { "description": "OK", "content": { "application/json": { "schema": response } } } });
            if let Some(body) = body {
                op["requestBody"] =
                    json!({ "content": { "*/*": { "schema": self.v3_refs(&body) } } });
            }
        } else {
            op["responses"] = json!({ "200": { "description": "OK", "schema": response } });
            if let Some(body) = body {
                parameters.insert(
                    0,
                    json!({ "name": "body", "in": "body", "required": true, "schema": body }),
                );
            }
        }
        op["parameters"] = Value::Array(parameters);
        op
    }

    fn v3_refs(&self, schema: &Value) -> Value {
        if self.v3 {
            to_v3(schema)
        } else {
            schema.clone()
        }
    }
}

fn delete_options() -> Value {
    json!({ "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions" })
}

fn status_ref() -> Value {
    json!({ "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status" })
}

fn patch_ref() -> Value {
    json!({ "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" })
}
