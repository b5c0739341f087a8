//! The definitions of a scheme's documents: every kind, its List and what
//! they reach, with the type meta and `x-kubernetes-group-version-kind` that
//! kube-apiserver's documents give kinds.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::meta::{DeleteOptions, ListMeta, Status};
use crate::openapi::{
    Definitions, OpenApi, object, property, referenced, type_meta_properties, without_crd_keywords,
};
use crate::resource_info::ResourceInfo;
use crate::scheme::Scheme;

/// A kind's definition as the documents have it: `apiVersion` and `kind`
/// first among its properties (when it has any), and its
/// `x-kubernetes-group-version-kind`.
fn kind_definition(def: &mut Value, info: &ResourceInfo) {
    let Value::Object(def) = def else { return };
    if let Some(Value::Object(properties)) = def.get_mut("properties") {
        let mut with_type_meta: Map<String, Value> = type_meta_properties()
            .into_iter()
            .map(|(name, property)| (name.to_owned(), property))
            .collect();
        with_type_meta.extend(std::mem::take(properties));
        *properties = with_type_meta;
    }
    def.insert(
        "x-kubernetes-group-version-kind".into(),
        json!([{ "group": info.group, "kind": info.kind, "version": info.version }]),
    );
}

/// The OpenAPI 3 form of the kinds whose definition differs from their
/// Swagger 2.0 one, by definition name.
pub fn v3_definitions(scheme: &Scheme) -> BTreeMap<String, Value> {
    let mut scratch = Definitions::new();
    let mut out = BTreeMap::new();
    for entry in scheme.entries() {
        let Some(kind_ref) = entry.schema_v3(&mut scratch) else {
            continue;
        };
        let Some(name) = referenced(&kind_ref).map(str::to_owned) else {
            continue;
        };
        if let Some(mut def) = scratch.get(&name).cloned() {
            kind_definition(&mut def, entry.info);
            out.insert(name, def);
        }
    }
    out
}

/// The definitions of every kind of `scheme`, its List and every type they
/// reach, as kube-apiserver's OpenAPI documents have them: kinds and lists carry
/// `apiVersion`, `kind` and `x-kubernetes-group-version-kind`.
pub fn scheme_definitions(scheme: &Scheme) -> Definitions {
    let mut defs = Definitions::new();
    let list_meta = <ListMeta as OpenApi>::schema(&mut defs);
    // What every route takes or answers besides the kinds themselves.
    <DeleteOptions as OpenApi>::schema(&mut defs);
    <Status as OpenApi>::schema(&mut defs);
    defs.insert(
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch".into(),
        json!({
            "type": "object",
            "description": "A patch body: JSON patch, merge patch, strategic merge patch or apply configuration, as the request's content type says."
        }),
    );
    defs.insert(
        "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent".into(),
        json!({
            "type": "object",
            "description": "One event of a watch: what happened, and to which object.",
            "properties": {
                "object": {
                    "$ref": "#/definitions/io.k8s.apimachinery.pkg.runtime.RawExtension",
                    "description": "The object as it is after the event (before it, for DELETED); for ERROR, a Status."
                },
                "type": {
                    "type": "string",
                    "description": "ADDED, MODIFIED, DELETED, BOOKMARK or ERROR."
                }
            },
            "required": ["type", "object"],
        }),
    );
    // Bodies of subresources that are no kinds (Scale, Eviction, TokenRequest).
    for body in scheme.bodies() {
        let body_ref = (body.schema)(&mut defs);
        let Some(name) = referenced(&body_ref).map(str::to_owned) else {
            continue;
        };
        if let Some(Value::Object(def)) = defs.get_mut(&name) {
            def.insert(
                "x-kubernetes-group-version-kind".into(),
                json!([{ "group": body.group, "kind": body.kind, "version": body.version }]),
            );
        }
    }
    for entry in scheme.entries() {
        let info = entry.info;
        let kind_ref = entry.schema(&mut defs);
        let Some(name) = referenced(&kind_ref).map(str::to_owned) else {
            continue;
        };
        let gvk =
            |kind: &str| json!([{ "group": info.group, "kind": kind, "version": info.version }]);
        if let Some(def) = defs.get_mut(&name) {
            kind_definition(def, info);
        }
        // Sorted by name: apiVersion, items, kind, metadata.
        let [(_, api_version), (_, kind_property)] = type_meta_properties();
        let mut properties = Map::new();
        properties.insert("apiVersion".into(), api_version);
        properties.insert(
            "items".into(),
            json!({ "type": "array", "items": kind_ref, "description": format!("The {} objects.", info.kind) }),
        );
        properties.insert("kind".into(), kind_property);
        properties.insert(
            "metadata".into(),
            property(
                list_meta.clone(),
                "List metadata: resourceVersion and continuation.",
                &[],
            ),
        );
        let mut list = object(
            &format!("A list of {} objects.", info.kind),
            properties,
            vec!["items".into()],
        );
        if let Value::Object(map) = &mut list {
            map.insert(
                "x-kubernetes-group-version-kind".into(),
                gvk(&info.list_kind()),
            );
        }
        defs.insert(format!("{name}List"), list);
    }
    // What a watch event embeds, unless a kind described it already.
    defs.define("io.k8s.apimachinery.pkg.runtime.RawExtension", |_| {
        json!({
            "type": "object",
            "description": "An embedded object, kept as the JSON it arrived as.",
        })
    });
    for def in defs.values_mut() {
        without_crd_keywords(def);
    }
    defs
}
