//! ControllerRevisions: immutable snapshots of a controller's pod template, kept
//! by DaemonSets and StatefulSets for rollouts and rollbacks.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::ByteString;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::null_as_default;

/// One numbered revision of a controller's state, as an opaque JSON document; the
/// data cannot change once written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "apps",
    version = "v1",
    plural = "controllerrevisions",
    storage_prefix = "controllerrevisions",
    generation = false,
    printer_column(name = "Controller", type = "string",
        json_path = ".metadata.ownerReferences",
        description = "The controller that owns the revision, as kind.group/name."),
    printer_column(name = "Revision", type = "string", json_path = ".revision",
        description = "Number of the revision."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the revision was created."),
    table_cells = controllerrevision_cells,
    validate_update = validate_controller_revision_update
)]
#[api(validate = validate_controller_revision)]
pub struct ControllerRevision {
    /// Name, namespace, labels, owner and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The recorded state, e.g. a patch that restores a pod template.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub data: RawExtension,
    /// Number of the revision; higher is newer.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub revision: i64,
}

/// runtime.RawExtension: an embedded JSON document kept as the bytes it arrived
/// as. JSON carries it inline (compacted, `null` when absent); protobuf carries
/// the bytes in field 1 of its own message.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(transparent)]
#[api(schema = raw_extension_schema, validate = raw_is_json)]
pub struct RawExtension {
    /// The document's JSON text; `None` is JSON `null`.
    #[serde(with = "raw_json")]
    #[api(proto = 1)]
    pub raw: Option<ByteString>,
}

/// The bytes must be a JSON document: protobuf carries them unchecked, and a
/// JSON client could not be given anything else (kube-apiserver stores such an
/// object and then fails every JSON read of it; kapi refuses it on write).
fn raw_is_json(
    raw: &RawExtension,
    path: &kapi_runtime::validation::FieldPath,
    errs: &mut kapi_runtime::validation::FieldErrors,
) {
    if let Some(bytes) = &raw.raw
        && serde_json::from_slice::<serde::de::IgnoredAny>(&bytes.0).is_err()
    {
        errs.invalid(path.clone(), "<bytes>", "must be a JSON document");
    }
}

/// `ValidateControllerRevision`: a document, and a revision number that is
/// not negative.
fn validate_controller_revision(
    revision: &ControllerRevision,
    path: &kapi_runtime::validation::FieldPath,
    errs: &mut kapi_runtime::validation::FieldErrors,
) {
    if revision.data.raw.is_none() {
        errs.required(path.child("data"), "data is mandatory");
    }
    crate::validation::nonnegative(Some(revision.revision), &path.child("revision"), errs);
}

/// `ValidateControllerRevisionUpdate`: the document may not change, byte
/// for byte (the revision number may). Upstream shows the new document as
/// Go prints a `RawExtension`, its bytes in hex.
fn validate_controller_revision_update(
    new: &ControllerRevision,
    old: &ControllerRevision,
    path: &kapi_runtime::validation::FieldPath,
    errs: &mut kapi_runtime::validation::FieldErrors,
) {
    if new.data == old.data {
        return;
    }
    let raw = match &new.data.raw {
        None => "[]uint8(nil)".to_owned(),
        Some(bytes) => {
            let hex: Vec<String> = bytes.0.iter().map(|b| format!("{b:#04x}")).collect();
            format!("[]uint8{{{}}}", hex.join(", "))
        }
    };
    let value = format!("runtime.RawExtension{{Raw:{raw}, Object:runtime.Object(nil)}}");
    errs.invalid(
        path.child("data"),
        crate::validation::Raw(&value),
        "field is immutable",
    );
}

/// Apimachinery's definition: any JSON object.
fn raw_extension_schema(defs: &mut kapi_runtime::openapi::Definitions) -> Value {
    defs.define("io.k8s.apimachinery.pkg.runtime.RawExtension", |_| {
        json!({"type": "object", "description": "An embedded JSON document, kept as it arrived."})
    })
}

/// The JSON form of [`RawExtension`]: the document itself, not a string.
mod raw_json {
    use kapi_runtime::ByteString;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::value::RawValue;

    pub fn serialize<S: Serializer>(raw: &Option<ByteString>, s: S) -> Result<S::Ok, S::Error> {
        let Some(bytes) = raw else {
            return s.serialize_none();
        };
        let text = std::str::from_utf8(&bytes.0).map_err(S::Error::custom)?;
        RawValue::from_string(compact(text))
            .map_err(S::Error::custom)?
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ByteString>, D::Error> {
        let value = Box::<RawValue>::deserialize(d)?;
        let text = value.get();
        if text == "null" {
            return Ok(None);
        }
        Ok(Some(ByteString(text.as_bytes().to_vec())))
    }

    /// The text without whitespace between tokens, as Go's encoder writes an
    /// embedded document.
    fn compact(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let (mut in_string, mut escaped) = (false, false);
        for c in text.chars() {
            if in_string {
                out.push(c);
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_string = false,
                    _ => {}
                }
            } else if c == '"' {
                in_string = true;
                out.push(c);
            } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
                out.push(c);
            }
        }
        out
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn compacts_outside_strings() {
            assert_eq!(
                super::compact("{\"a b\": [1, 2],\n \"c\\\" d\": \"x y\"}"),
                "{\"a b\":[1,2],\"c\\\" d\":\"x y\"}"
            );
        }
    }
}

/// The `kubectl get controllerrevisions` row (kube-apiserver's
/// `printControllerRevision`): the controlling owner as `kind.group/name`
/// (lower-cased kind and group), or `<none>`.
fn controllerrevision_cells(revision: &ControllerRevision) -> Vec<Value> {
    let owners = revision.metadata.owner_references.iter().flatten();
    let controller = owners
        .filter(|o| o.controller == Some(true))
        .map(|o| {
            let group = match o.api_version.split_once('/') {
                Some((group, _)) => group,
                None => "",
            };
            let kind = if group.is_empty() {
                o.kind.clone()
            } else {
                format!("{}.{group}", o.kind)
            };
            format!("{}/{}", kind.to_lowercase(), o.name)
        })
        .next()
        .unwrap_or_else(|| "<none>".to_owned());
    vec![
        json!(controller),
        json!(revision.revision),
        json!(revision.metadata.creation_timestamp.map(|t| t.to_string())),
    ]
}
