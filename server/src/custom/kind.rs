//! The scheme entries of a CustomResourceDefinition: one per served version,
//! built from the definition as stored (its spec and accepted names), with
//! operations that decode, prune, default and convert custom objects.

use std::sync::Arc;

use kapi_runtime::intern;
use kapi_runtime::known_fields::Shape;
use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::openapi::{Definitions, OpenApi, reference};
use kapi_runtime::resource::{NameFormat, ResetFields};
use kapi_runtime::scheme::{Decoded, KindEntry, KindOps};
use kapi_runtime::validation::FieldErrors;
use kapi_runtime::{DynObject, PrinterColumn, ResourceInfo, ScaleSubresource};
use serde_json::{Map, Value, json};

use super::object::CustomObject;
use super::schema::Structural;
use super::webhook::Webhook;
use crate::controllers::client::Client;

/// Every verb of a custom resource, in the order kube-apiserver lists them.
const VERBS: [&str; 8] = [
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// The verbs of a custom resource whose definition is being deleted: reads
/// and deletes only.
const TERMINATING_VERBS: [&str; 5] = ["delete", "deletecollection", "get", "list", "watch"];

/// One served version of a custom resource.
#[derive(Debug)]
pub struct Version {
    /// Its facts, as the request path reads them.
    pub info: &'static ResourceInfo,
    /// Its structural schema.
    pub(super) schema: Structural,
    /// Its `openAPIV3Schema` as given, for the OpenAPI documents.
    openapi: Value,
}

impl Ops {
    /// `object` in the version `to`: by its apiVersion alone, or through
    /// the conversion webhook (the call blocks this worker thread: the
    /// scheme's conversions are synchronous).
    fn convert(&self, object: CustomObject, to: &Arc<Version>) -> Result<CustomObject, String> {
        let from = object.version.info;
        let Some(webhook) = self
            .webhook
            .as_ref()
            .filter(|_| !std::ptr::eq(from, to.info))
        else {
            return Ok(object.into_version(to.clone()));
        };
        let mut whole = object.to_json_value()?;
        whole["apiVersion"] = json!(from.group_version);
        whole["kind"] = json!(from.kind);
        let gvk = format!("{}, Kind={}", from.group_version, from.kind);
        let handle = tokio::runtime::Handle::try_current()
            .ok()
            .filter(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
            .ok_or_else(|| {
                format!(
                    "conversion webhook for {gvk} failed: no multi-threaded runtime to call it from"
                )
            })?;
        let desired = to.info.group_version;
        let converted = tokio::task::block_in_place(|| {
            handle.block_on(webhook.convert(vec![whole], desired, &gvk))
        })?;
        let Some(Value::Object(mut content)) = converted.into_iter().next() else {
            return Err(format!("conversion webhook for {gvk} returned no object"));
        };
        content.shift_remove("apiVersion");
        content.shift_remove("kind");
        // The webhook may change labels and annotations only, as upstream
        // allows: the rest of the metadata stays the object's.
        let returned = content.shift_remove("metadata").unwrap_or(Value::Null);
        let mut metadata = object.metadata;
        if let Some(labels) = returned.get("labels") {
            metadata.labels = serde_json::from_value(labels.clone()).unwrap_or_default();
        }
        if let Some(annotations) = returned.get("annotations") {
            metadata.annotations = serde_json::from_value(annotations.clone()).unwrap_or_default();
        }
        let mut unknown = Vec::new();
        to.schema.prune_root(&mut content, &mut unknown);
        Ok(CustomObject {
            version: to.clone(),
            metadata,
            content,
        })
    }

    /// Whether the version's schema keeps unknown fields at its root.
    fn preserves_unknown_root(&self) -> bool {
        self.this.openapi["x-kubernetes-preserve-unknown-fields"] == true
    }

    /// Adds `metadata` (ObjectMeta) to the properties of `schema`.
    fn add_metadata(&self, schema: &mut Value, defs: &mut Definitions) {
        let metadata = metadata_property(defs);
        if let Value::Object(schema) = schema
            && let Value::Object(properties) = schema
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()))
        {
            properties.insert("metadata".into(), metadata);
        }
    }

    /// Stores `schema` as the version's definition, with its selectable
    /// fields, and refers to it.
    fn define(&self, mut schema: Value, defs: &mut Definitions) -> Value {
        let info = self.this.info;
        let name = definition_name(info);
        if let Value::Object(map) = &mut schema {
            let fields: Vec<Value> = info
                .selectable_fields
                .iter()
                .map(|f| json!({ "fieldPath": f }))
                .collect();
            map.insert(
                "x-kubernetes-selectable-fields".into(),
                Value::Array(fields),
            );
        }
        defs.insert(name.clone(), schema);
        reference(&name)
    }
}

/// The `metadata` property of a custom object or an embedded one.
fn metadata_property(defs: &mut Definitions) -> Value {
    let mut metadata = ObjectMeta::schema(defs);
    if let Value::Object(map) = &mut metadata {
        map.insert(
            "description".into(),
            json!("The object's metadata: its name, namespace, labels, annotations, owners and what the server records."),
        );
    }
    metadata
}

/// A structural schema as the OpenAPI 3 documents publish it, as upstream
/// completes it: int-or-string nodes say `anyOf` integer or string, and
/// embedded objects have `apiVersion`, `kind` (both required) and
/// `metadata`.
fn v3_schema(schema: &mut Value, metadata: &Value) {
    let Value::Object(node) = schema else { return };
    let flag = |node: &Map<String, Value>, key: &str| {
        node.get(key).and_then(Value::as_bool).unwrap_or(false)
    };
    if flag(node, "x-kubernetes-int-or-string") && !node.contains_key("anyOf") {
        node.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
    }
    if flag(node, "x-kubernetes-embedded-resource") {
        let properties = node
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(properties) = properties {
            for (name, property) in kapi_runtime::openapi::type_meta_properties() {
                properties.entry(name).or_insert(property);
            }
            properties
                .entry("metadata")
                .or_insert_with(|| metadata.clone());
        }
        let required = node.entry("required").or_insert_with(|| json!([]));
        if let Value::Array(required) = required {
            for name in ["kind", "apiVersion"] {
                if !required.iter().any(|r| r == name) {
                    required.push(json!(name));
                }
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = node.get_mut(key) {
            v3_schema(child, metadata);
        }
    }
    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        for child in properties.values_mut() {
            v3_schema(child, metadata);
        }
    }
}

/// A structural schema as Swagger 2.0 can carry it, as upstream converts
/// it: no `allOf`/`oneOf`/`anyOf`/`not` or `default`; nullable and
/// unknown-preserving nodes lose their type, properties and items (kubectl's
/// v2 validation would refuse what they allow); embedded and int-or-string
/// nodes lose their type. A root that keeps unknown fields is a bare object.
fn v2_schema(schema: &Value, root: bool) -> Value {
    let Value::Object(node) = schema else {
        return json!({"type": "object"});
    };
    let flag = |key: &str| node.get(key).and_then(Value::as_bool).unwrap_or(false);
    if root && flag("x-kubernetes-preserve-unknown-fields") {
        return json!({"type": "object"});
    }
    let mut out = Map::with_capacity(node.len());
    for (key, value) in node {
        let kept = match key.as_str() {
            "allOf" | "oneOf" | "anyOf" | "not" | "default" | "nullable" => None,
            "properties" => value.as_object().map(|properties| {
                Value::Object(
                    properties
                        .iter()
                        .map(|(k, v)| (k.clone(), v2_schema(v, false)))
                        .collect(),
                )
            }),
            "items" | "additionalProperties" if value.is_object() => Some(v2_schema(value, false)),
            _ => Some(value.clone()),
        };
        if let Some(kept) = kept {
            out.insert(key.clone(), kept);
        }
    }
    if flag("nullable") || flag("x-kubernetes-preserve-unknown-fields") {
        out.remove("type");
        out.remove("properties");
        out.remove("items");
    }
    if flag("x-kubernetes-embedded-resource") || flag("x-kubernetes-int-or-string") {
        out.remove("type");
    }
    Value::Object(out)
}

/// The operations of one version: decoding into a [`CustomObject`], and the
/// conversion to and from the storage version (strategy `None`: the
/// `apiVersion` is all that changes).
struct Ops {
    this: Arc<Version>,
    storage: Arc<Version>,
    /// The definition's conversion webhook (strategy `Webhook`); without
    /// one, versions convert by their apiVersion alone.
    webhook: Option<Arc<Webhook>>,
    /// Every version of the definition: a stored object keeps the version
    /// it was written in until it is converted on its way out.
    versions: Arc<Vec<Arc<Version>>>,
}

/// The scheme entries of `crd` (a CustomResourceDefinition as JSON): one per
/// served version, or an error saying why it cannot be served.
pub fn entries(crd: &Value, client: Option<&Client>) -> Result<Vec<KindEntry>, String> {
    let spec = &crd["spec"];
    let names = &crd["status"]["acceptedNames"];
    let text = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_owned();
    let list = |v: &Value, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let group = text(spec, "group");
    let plural = text(names, "plural");
    let kind = text(names, "kind");
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return Err("its names are not accepted".into());
    }
    let singular = match text(names, "singular") {
        s if s.is_empty() => kind.to_lowercase(),
        s => s,
    };
    let terminating = crd["metadata"]["deletionTimestamp"].is_string();
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    let storage_name = versions
        .iter()
        .find(|v| v["storage"].as_bool() == Some(true))
        .map(|v| text(v, "name"))
        .ok_or("it has no storage version")?;
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let webhook = Webhook::of(&spec["conversion"], client).map(Arc::new);
    let build = |v: &Value| -> Arc<Version> {
        let version = text(v, "name");
        let subresources = &v["subresources"];
        let columns: Vec<PrinterColumn> = v["additionalPrinterColumns"]
            .as_array()
            .map(|columns| columns.iter().map(printer_column).collect())
            .unwrap_or_default();
        let scale = subresources
            .get("scale")
            .filter(|s| s.is_object())
            .map(|s| ScaleSubresource {
                spec_replicas: intern::str(s["specReplicasPath"].as_str().unwrap_or_default()),
                status_replicas: intern::str(s["statusReplicasPath"].as_str().unwrap_or_default()),
                label_selector: intern::str(s["labelSelectorPath"].as_str().unwrap_or_default()),
            });
        let selectable: Vec<String> = v["selectableFields"]
            .as_array()
            .map(|fields| {
                fields
                    .iter()
                    .filter_map(|f| f["jsonPath"].as_str())
                    .map(|p| p.trim_start_matches('.').to_owned())
                    .collect()
            })
            .unwrap_or_default();
        let has_status = subresources.get("status").is_some_and(Value::is_object);
        let info = ResourceInfo {
            group: intern::str(&group),
            version: intern::str(&version),
            group_version: intern::str(&format!("{group}/{version}")),
            kind: intern::str(&kind),
            plural: intern::str(&plural),
            singular: intern::str(&singular),
            // Upstream's CRDRESTOptionsGetter: `<group>/<accepted plural>`.
            storage_prefix: intern::str(&format!("{group}/{plural}")),
            storage_json: true,
            short_names: intern::strs(&list(names, "shortNames")),
            categories: intern::strs(&list(names, "categories")),
            verbs: if terminating {
                intern::strs(&TERMINATING_VERBS)
            } else {
                intern::strs(&VERBS)
            },
            namespaced,
            status_subresource: has_status,
            selectable_fields: intern::strs(&selectable),
            indexed_fields: &[],
            age_column: columns.is_empty(),
            printer_columns: intern::columns(columns),
            return_deleted_object: false,
            orphan_dependents: false,
            tracks_generation: true,
            name_format: NameFormat::Dns1123Subdomain,
            scale,
            subresources: intern::subresources(Vec::new()),
            // The custom resource strategies' reset fields: status through
            // the object when it has a /status, spec through /status.
            reset_fields: ResetFields {
                main: if has_status { &["status"] } else { &[] },
                status: &["spec"],
            },
        };
        let openapi = v["schema"]["openAPIV3Schema"].clone();
        Arc::new(Version {
            info: intern::info(info),
            schema: Structural::of(&openapi),
            openapi,
        })
    };
    let all: Vec<(bool, Arc<Version>)> = versions
        .iter()
        .map(|v| (v["served"].as_bool() == Some(true), build(v)))
        .collect();
    let storage = all
        .iter()
        .map(|(_, v)| v)
        .find(|v| v.info.version == storage_name)
        .cloned()
        .ok_or("it has no storage version")?;
    let served: Vec<Arc<Version>> = all
        .iter()
        .filter(|(served, _)| *served)
        .map(|(_, v)| v.clone())
        .collect();
    let all = Arc::new(all.into_iter().map(|(_, v)| v).collect::<Vec<_>>());
    Ok(served
        .into_iter()
        .map(|this| KindEntry {
            info: this.info,
            ops: Arc::new(Ops {
                this,
                storage: storage.clone(),
                webhook: webhook.clone(),
                versions: all.clone(),
            }),
            proto: None,
        })
        .collect())
}

/// An `additionalPrinterColumns` entry as a table column.
fn printer_column(column: &Value) -> PrinterColumn {
    let text = |key: &str| column[key].as_str().unwrap_or_default();
    let json_path = text("jsonPath");
    let description = match text("description") {
        "" => format!("Custom resource definition column (in JSONPath format): {json_path}"),
        given => given.to_owned(),
    };
    PrinterColumn {
        name: intern::str(text("name")),
        type_: intern::str(text("type")),
        format: intern::str(text("format")),
        description: intern::str(&description),
        priority: column["priority"]
            .as_i64()
            .and_then(|p| i32::try_from(p).ok())
            .unwrap_or(0),
        json_path: intern::str(json_path),
    }
}

/// The OpenAPI definition name of a custom kind: the group's domain reversed,
/// the version and the kind (`com.example.v1.Widget`), as upstream names it.
fn definition_name(info: &ResourceInfo) -> String {
    let group: Vec<&str> = info.group.split('.').rev().collect();
    format!("{}.{}.{}", group.join("."), info.version, info.kind)
}

impl Ops {
    fn object(&self, object: Box<dyn DynObject>) -> Result<CustomObject, String> {
        let info = object.info();
        object
            .into_any()
            .downcast::<CustomObject>()
            .map(|o| *o)
            .map_err(|_| {
                format!(
                    "a {} {} is not a custom object",
                    info.group_version, info.kind
                )
            })
    }
}

impl KindOps for Ops {
    /// The version's schema: its structural checks and its CEL rules.
    fn validate_served(
        &self,
        object: &dyn DynObject,
        old: Option<&dyn DynObject>,
        errs: &mut FieldErrors,
    ) {
        let Some(object) = object.as_any().downcast_ref::<CustomObject>() else {
            return;
        };
        let old = old.and_then(|o| o.as_any().downcast_ref::<CustomObject>());
        object.validate_schema(self.this.info, old, errs);
    }

    fn decode_json(&self, json: &[u8]) -> Result<Decoded, String> {
        let value: Value = serde_json::from_slice(json).map_err(|e| e.to_string())?;
        self.decode_value(value)
    }

    fn decode_value(&self, value: Value) -> Result<Decoded, String> {
        let Value::Object(mut content) = value else {
            return Err("the object must be a JSON object".into());
        };
        // An object stored in another version of the kind (an earlier
        // storage version) stays in it until it is converted.
        let version = match content.shift_remove("apiVersion") {
            Some(Value::String(api_version)) if api_version != self.this.info.group_version => self
                .versions
                .iter()
                .find(|v| v.info.group_version == api_version)
                .cloned()
                .unwrap_or_else(|| self.this.clone()),
            _ => self.this.clone(),
        };
        content.shift_remove("kind");
        let mut unknown_fields = Vec::new();
        let metadata = match content.shift_remove("metadata") {
            None | Some(Value::Null) => ObjectMeta::default(),
            Some(metadata) => {
                let shape = Shape::of::<ObjectMeta>();
                unknown_fields.extend(
                    shape
                        .unknown_in_value(&metadata)
                        .into_iter()
                        .map(|path| format!("metadata.{path}")),
                );
                serde_json::from_value(metadata).map_err(|e| e.to_string())?
            }
        };
        version.schema.prune_root(&mut content, &mut unknown_fields);
        Ok(Decoded {
            object: Box::new(CustomObject {
                version,
                metadata,
                content,
            }),
            unknown_fields,
        })
    }

    /// The Swagger 2.0 form: what v2 cannot say removed, as upstream's
    /// conversion removes it ([`v2_schema`]).
    fn schema(&self, defs: &mut Definitions) -> Value {
        let mut schema = v2_schema(&self.this.openapi, true);
        if !(self.this.openapi.is_object() && self.preserves_unknown_root()) {
            self.add_metadata(&mut schema, defs);
        }
        self.define(schema, defs)
    }

    fn schema_v3(&self, defs: &mut Definitions) -> Option<Value> {
        let mut schema = match &self.this.openapi {
            Value::Object(_) => self.this.openapi.clone(),
            _ => json!({"type": "object"}),
        };
        let metadata = metadata_property(defs);
        v3_schema(&mut schema, &metadata);
        self.add_metadata(&mut schema, defs);
        Some(self.define(schema, defs))
    }

    fn hub(&self) -> Option<&'static ResourceInfo> {
        (!std::ptr::eq(self.this.info, self.storage.info)).then_some(self.storage.info)
    }

    fn is_custom(&self) -> bool {
        true
    }

    fn conversion_is_pure(&self) -> bool {
        self.webhook.is_none()
    }

    fn to_hub(&self, object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String> {
        let object = self.object(object)?;
        Ok(Box::new(self.convert(object, &self.storage)?))
    }

    fn to_served(&self, object: Box<dyn DynObject>) -> Result<Box<dyn DynObject>, String> {
        let object = self.object(object)?;
        Ok(Box::new(self.convert(object, &self.this)?))
    }
}
