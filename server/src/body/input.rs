//! [`Input`]: a create or update body decoded into the kind's type, after the
//! `kind`/`apiVersion` it names were checked against the endpoint.

use kapi_runtime::scheme::{Decoded, KindEntry};
use serde::Deserialize;
use serde_json::Value;

use super::duplicates::{duplicate_fields, key_offsets, yaml_duplicate_keys};
use super::{Object, check_type, decode_yaml};
use crate::api_error::{ApiError, ApiResult};

/// A decoded body.
#[derive(Debug)]
pub struct Input {
    /// The object.
    pub object: Object,
    /// What `fieldValidation` reports about the body, in document order:
    /// `unknown field "spec.foo"`, `duplicate field "metadata.name"`.
    pub field_issues: Vec<String>,
    /// Keys repeated in a YAML body: `line 5: key "name" already set in
    /// map` (Go's YAML decoder reports them apart, before the others).
    pub yaml_duplicates: Vec<String>,
}

/// The type meta of a JSON body, read before the body itself.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TypeMeta {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    api_version: Option<String>,
}

/// A body of a custom resource naming another kind is invalid (422), not a
/// bad request: upstream decodes it as unstructured and validates the kind.
fn check_custom_kind(entry: &KindEntry, kind: &str, name: &str) -> ApiResult<()> {
    let info = entry.info;
    if !entry.is_custom() || kind.is_empty() || kind == info.kind {
        return Ok(());
    }
    let mut errs = kapi_runtime::validation::FieldErrors::default();
    errs.invalid(
        kapi_runtime::validation::FieldPath::new("kind"),
        kind,
        &format!("must be {}", info.kind),
    );
    Err(ApiError::invalid(info.group, kind, name, &errs))
}

impl Input {
    /// An object decoded without unknown fields (protobuf has none to report).
    pub fn typed(object: Object) -> Input {
        Input {
            object,
            field_issues: Vec::new(),
            yaml_duplicates: Vec::new(),
        }
    }

    /// Decodes a JSON body of `entry`'s kind straight into its type.
    pub fn from_json(entry: &KindEntry, body: &[u8]) -> ApiResult<Input> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::bad_request("the request body is empty"));
        }
        let meta: TypeMeta = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding JSON: {e}")))?;
        let kind = meta.kind.as_deref().unwrap_or_default();
        if entry.is_custom() && !kind.is_empty() && kind != entry.info.kind {
            // The error names the object: read its name (a rare path).
            let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let name = value
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            check_custom_kind(entry, kind, name)?;
        }
        check_type(
            entry.info,
            meta.kind.as_deref().unwrap_or_default(),
            meta.api_version.as_deref().unwrap_or_default(),
        )?;
        let duplicates = duplicate_fields(body);
        if duplicates.is_empty() {
            return Self::decoded(entry, entry.ops.decode_json(body));
        }
        // Repeated keys: the last value counts, as in Go, and each repeat is
        // reported among the unknown fields, in the order of the body.
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("error decoding JSON: {e}")))?;
        let mut input = Self::decoded(entry, entry.ops.decode_value(value))?;
        let offsets = key_offsets(body);
        let mut issues: Vec<(usize, String)> = duplicates
            .into_iter()
            .map(|d| (d.offset, format!("duplicate field {:?}", d.path)))
            .collect();
        for (path, described) in std::mem::take(&mut input.field_issues)
            .into_iter()
            .map(|d| (unknown_path(&d).to_owned(), d))
        {
            let offset = offsets
                .iter()
                .find(|(p, _)| *p == path)
                .map_or(usize::MAX, |(_, o)| *o);
            issues.push((offset, described));
        }
        issues.sort_by_key(|(offset, _)| *offset);
        input.field_issues = issues.into_iter().map(|(_, d)| d).collect();
        Ok(input)
    }

    /// Decodes a YAML body of `entry`'s kind; keys repeated in it are reported
    /// first, by line, as Go's YAML decoder reports them.
    pub fn from_yaml(entry: &KindEntry, body: &[u8]) -> ApiResult<Input> {
        let value = decode_yaml(body)?;
        let mut input = Self::from_value(entry, value)?;
        let text = std::str::from_utf8(body).unwrap_or_default();
        input.yaml_duplicates = yaml_duplicate_keys(text);
        Ok(input)
    }

    /// Decodes a JSON value (a YAML body, a patched object) of `entry`'s kind.
    pub fn from_value(entry: &KindEntry, value: Value) -> ApiResult<Input> {
        let Value::Object(map) = &value else {
            return Err(ApiError::bad_request("the object must be a JSON object"));
        };
        let text = |field: &str| match map.get(field) {
            None | Some(Value::Null) => Ok(""),
            Some(Value::String(s)) => Ok(s.as_str()),
            Some(other) => Err(ApiError::bad_request(format!(
                "{field} must be a string, got {other}"
            ))),
        };
        let name = value
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        check_custom_kind(entry, text("kind")?, name)?;
        check_type(entry.info, text("kind")?, text("apiVersion")?)?;
        Self::decoded(entry, entry.ops.decode_value(value))
    }

    fn decoded(entry: &KindEntry, decoded: Result<Decoded, String>) -> ApiResult<Input> {
        let info = entry.info;
        let decoded = decoded.map_err(|e| {
            ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: {e}",
                info.kind, info.version, info.kind
            ))
        })?;
        Ok(Input {
            object: Object::new(decoded.object),
            yaml_duplicates: Vec::new(),
            field_issues: decoded
                .unknown_fields
                .iter()
                .map(|f| format!("unknown field {f:?}"))
                .collect(),
        })
    }
}

/// The path an `unknown field "<path>"` report names.
fn unknown_path(described: &str) -> &str {
    described
        .strip_prefix("unknown field \"")
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or_default()
}
