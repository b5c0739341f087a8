//! The merge schema and the empty object of each served kind version, made
//! on first use from the kind's OpenAPI definition (a custom resource's
//! from its structural schema) and kept while the kind is served; and the
//! conversion of objects between the versions of a kind, for managers that
//! wrote in another version.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use kapi_runtime::openapi::{Definitions, referenced};
use kapi_runtime::scheme::{KindEntry, KindOps, Scheme};
use kapi_structured_merge::schema::Schema;
use kapi_structured_merge::typed::{KindSchema, Typed};
use kapi_structured_merge::updater::{ConvertError, Converter};
use serde_json::{Value, json};

/// What ownership tracking needs of one kind version.
pub struct KindFacts {
    /// The kind's name (`Deployment`).
    pub kind: String,
    pub schema: Arc<KindSchema>,
    /// The JSON of an empty object of the version, as Go writes the zero
    /// value of the type (the live object a create is compared with).
    pub empty: Value,
}

/// The facts of every kind version met, by the address of its operations
/// (a custom resource's change with each definition; the weak reference
/// tells a freed one from its successor at the same address).
#[derive(Default)]
pub struct Schemas {
    kinds: Mutex<HashMap<usize, (Weak<dyn KindOps>, Arc<KindFacts>)>>,
}

fn address(ops: &Arc<dyn KindOps>) -> usize {
    Arc::as_ptr(ops).cast::<()>() as usize
}

impl Schemas {
    /// The facts of `entry`'s kind version.
    pub fn of(&self, entry: &KindEntry) -> Result<Arc<KindFacts>, String> {
        let at = address(&entry.ops);
        if let Ok(kinds) = self.kinds.lock()
            && let Some((weak, facts)) = kinds.get(&at)
            && weak.upgrade().is_some_and(|ops| address(&ops) == at)
        {
            return Ok(facts.clone());
        }
        let facts = Arc::new(build(entry)?);
        if let Ok(mut kinds) = self.kinds.lock() {
            kinds.retain(|_, (weak, _)| weak.strong_count() > 0);
            kinds.insert(at, (Arc::downgrade(&entry.ops), facts.clone()));
        }
        Ok(facts)
    }
}

/// Known list-map key defaults of the built-in kinds: the OpenAPI
/// definitions kapi serves carry no defaults, while upstream's merge
/// schemas take them from the types' `+default` markers.
const KEY_DEFAULTS: &[(&str, &str, &str)] = &[
    ("io.k8s.api.core.v1.ContainerPort", "protocol", "TCP"),
    ("io.k8s.api.core.v1.ServicePort", "protocol", "TCP"),
    ("io.k8s.api.core.v1.LocalObjectReference", "name", ""),
];

fn build(entry: &KindEntry) -> Result<KindFacts, String> {
    let mut defs = Definitions::new();
    let root = entry
        .schema_v3(&mut defs)
        .unwrap_or_else(|| entry.schema(&mut defs));
    let mut definitions: serde_json::Map<String, Value> = defs.into_inner().into_iter().collect();
    for (definition, field, default) in KEY_DEFAULTS {
        if let Some(property) = definitions
            .get_mut(*definition)
            .and_then(|d| d.get_mut("properties"))
            .and_then(|p| p.get_mut(*field))
            .and_then(Value::as_object_mut)
        {
            property.insert("default".into(), Value::String((*default).into()));
        }
    }
    // The documents add the type's apiVersion and kind to each kind's
    // definition; the registered schema leaves them to the documents.
    if let Some(properties) = referenced(&root)
        .and_then(|name| definitions.get_mut(name))
        .and_then(|d| d.get_mut("properties"))
        .and_then(Value::as_object_mut)
    {
        for (name, property) in kapi_runtime::openapi::type_meta_properties() {
            properties.entry(name).or_insert(property);
        }
    }
    let (schema, root) = match referenced(&root) {
        Some(name) => Schema::from_definitions(&definitions, name),
        None => Schema::from_root(&definitions, &root),
    };
    let info = entry.info;
    let version = info.api_version().to_owned();
    let empty = entry
        .ops
        .decode_value(json!({"apiVersion": version, "kind": info.kind}))
        .and_then(|decoded| decoded.object.to_json_value())?;
    Ok(KindFacts {
        kind: info.kind.to_owned(),
        schema: Arc::new(KindSchema {
            version,
            schema,
            root,
        }),
        empty,
    })
}

/// autoscaling/v1 Scale, the body of every `/scale` endpoint: built once.
pub fn scale() -> Arc<KindFacts> {
    static SCALE: std::sync::OnceLock<Arc<KindFacts>> = std::sync::OnceLock::new();
    SCALE
        .get_or_init(|| {
            use kapi_runtime::openapi::OpenApi;
            let mut defs = Definitions::new();
            let metadata = kapi_runtime::meta::ObjectMeta::schema(&mut defs);
            let root = json!({
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": metadata,
                    "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
                    "status": {"type": "object", "properties": {
                        "replicas": {"type": "integer"},
                        "selector": {"type": "string"},
                    }},
                },
            });
            let definitions: serde_json::Map<String, Value> =
                defs.into_inner().into_iter().collect();
            let (schema, root) = Schema::from_root(&definitions, &root);
            Arc::new(KindFacts {
                kind: "Scale".into(),
                schema: Arc::new(KindSchema {
                    version: "autoscaling/v1".into(),
                    schema,
                    root,
                }),
                // Go's zero autoscaling/v1 Scale.
                empty: json!({
                    "metadata": {"creationTimestamp": null},
                    "spec": {},
                    "status": {"replicas": 0},
                }),
            })
        })
        .clone()
}

/// Converts objects of one kind between its served versions through the
/// kind's hub, as the registry converts them.
pub struct Versions<'a> {
    pub scheme: &'a Scheme,
    pub schemas: &'a Schemas,
    pub group: &'a str,
    pub kind: &'a str,
}

impl Versions<'_> {
    fn entry(&self, api_version: &str) -> Option<&KindEntry> {
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        let group = if api_version.contains('/') {
            self.group
        } else {
            ""
        };
        if group != self.group {
            return None;
        }
        self.scheme.get_kind(group, version, self.kind)
    }
}

impl Converter for Versions<'_> {
    fn convert(&self, object: &Typed, version: &str) -> Result<Typed, ConvertError> {
        let from = self
            .entry(&object.kind.version)
            .ok_or(ConvertError::MissingVersion)?;
        let to = self.entry(version).ok_or(ConvertError::MissingVersion)?;
        let failed = ConvertError::Failed;
        let mut value = object.value.clone();
        if let Some(map) = value.as_object_mut() {
            map.insert(
                "apiVersion".into(),
                Value::String(object.kind.version.clone()),
            );
            map.insert("kind".into(), Value::String(self.kind.into()));
        }
        let decoded = from.ops.decode_value(value).map_err(failed)?;
        let hub = match from.hub() {
            Some(_) => from.to_hub(decoded.object).map_err(failed)?,
            None => decoded.object,
        };
        let served = if to.hub().is_some() || to.is_custom() {
            to.to_served(hub).map_err(failed)?
        } else {
            hub
        };
        // With its apiVersion and kind, as the served JSON is.
        let value = crate::body::Object::new(served)
            .to_value()
            .map_err(failed)?;
        let facts = self.schemas.of(to).map_err(failed)?;
        Ok(Typed::new(value, facts.schema.clone()))
    }
}
