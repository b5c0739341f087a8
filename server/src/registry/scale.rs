//! The `/scale` subresource: an autoscaling/v1 Scale view of a kind's desired
//! and observed replica counts and its pods' selector, read from the object
//! and written back into it through the ordinary update path (validation,
//! generation, optimistic concurrency), as `kubectl scale` and autoscalers use
//! it.

use kapi_runtime::ScaleSubresource;
use kapi_runtime::meta::LabelSelector;
use kapi_runtime::scheme::BodyEntry;
use kapi_runtime::validation::{FieldErrors, FieldPath};
use serde_json::{Map, Value, json};

use super::{Endpoint, Object, PatchKind, Registry, Scope, WriteOptions};
use crate::api_error::{ApiError, ApiResult};
use crate::field_manager::Writer;
use crate::jsonpath::lookup;

/// A Scale answer: the body's JSON and the warnings of the write.
pub struct ScaleAnswer {
    /// The Scale, as its type writes it.
    pub scale: Value,
    /// `Warning` header texts.
    pub warnings: Vec<String>,
}

impl Registry {
    /// The Scale body type, installed with the kinds.
    pub fn scale_body(&self) -> ApiResult<BodyEntry> {
        self.scheme()
            .body("autoscaling", "v1", "Scale")
            .copied()
            .ok_or_else(ApiError::no_route)
    }

    /// The Scale of object `name`.
    pub async fn get_scale(&self, scope: Scope<'_>, name: &str) -> ApiResult<Value> {
        let facts = scope.info().scale.ok_or_else(ApiError::no_route)?;
        let object = self.get(scope, name).await?;
        self.scale_of(facts, &object)
    }

    /// Sets the desired replica count of object `name` from a Scale body
    /// (and its resourceVersion, when given, as a precondition); answers the
    /// Scale of the object written.
    pub async fn update_scale(
        &self,
        scope: Scope<'_>,
        name: &str,
        body: Value,
        opts: WriteOptions<'_>,
    ) -> ApiResult<ScaleAnswer> {
        let facts = scope.info().scale.ok_or_else(ApiError::no_route)?;
        let body = self.normalize_scale(body)?;
        let body_name = body["metadata"]["name"].as_str().unwrap_or_default();
        if body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let replicas = body["spec"]["replicas"].as_i64().unwrap_or(0);
        if replicas < 0 {
            let mut errs = FieldErrors::default();
            errs.invalid(
                FieldPath::new("spec").child("replicas"),
                replicas,
                "must be greater than or equal to 0",
            );
            return Err(ApiError::invalid("autoscaling", "Scale", name, &errs));
        }
        let mut patch = vec![json!({
            "op": "add",
            "path": pointer(facts.spec_replicas),
            "value": replicas,
        })];
        if let Some(rv) = body["metadata"]["resourceVersion"]
            .as_str()
            .filter(|rv| !rv.is_empty())
        {
            patch.push(json!({ "op": "add", "path": "/metadata/resourceVersion", "value": rv }));
        }
        // The object changes through its main endpoint; managedFields say
        // `/scale`.
        let opts = WriteOptions {
            subresource: "scale",
            ..opts
        };
        let written = self
            .patch(
                scope,
                name,
                PatchKind::Json,
                &Value::Array(patch),
                Endpoint::Main,
                opts,
            )
            .await?;
        Ok(ScaleAnswer {
            scale: self.scale_of(facts, &*written.decoded()?)?,
            warnings: written.warnings,
        })
    }

    /// Applies a patch to the Scale of object `name`, then
    /// writes the result as [`Registry::update_scale`] does.
    pub async fn patch_scale(
        &self,
        scope: Scope<'_>,
        name: &str,
        kind: PatchKind,
        patch: &Value,
        opts: WriteOptions<'_>,
    ) -> ApiResult<ScaleAnswer> {
        if let PatchKind::Apply { force } = kind {
            return self.apply_scale(scope, name, patch, force, opts).await;
        }
        let mut scale = self.get_scale(scope, name).await?;
        let schema = (kind == PatchKind::Strategic)
            .then(|| self.scale_body().map(|body| self.body_patch_schema(&body)))
            .transpose()?;
        super::update::apply_patch_to(&mut scale, kind, patch, schema.as_deref())?;
        self.update_scale(scope, name, scale, opts).await
    }

    /// Applies a configuration to the Scale of object `name`: the object's
    /// replicas and its managedFields change as upstream's ScaleHandler
    /// changes them, in one read-modify-write of the object.
    async fn apply_scale(
        &self,
        scope: Scope<'_>,
        name: &str,
        patch: &Value,
        force: bool,
        opts: WriteOptions<'_>,
    ) -> ApiResult<ScaleAnswer> {
        let facts = scope.info().scale.ok_or_else(ApiError::no_route)?;
        let scheme = self.scheme();
        let fields = self.field_manager(&scheme);
        let tracked = WriteOptions {
            subresource: "scale",
            ..opts
        };
        let writer = Writer::new(scope, Endpoint::Main, &tracked);
        let edit = |parent: &mut Value| -> ApiResult<()> {
            let scale = self.scale_of_value(facts, parent)?;
            let (scale, entries) = fields.apply_scale(
                writer,
                parent,
                scale,
                facts.spec_replicas,
                patch.clone(),
                force,
            )?;
            let replicas = scale["spec"]["replicas"].clone();
            if let Some(slot) = parent.pointer_mut(&pointer(facts.spec_replicas)) {
                *slot = replicas;
            } else if let Some(spec) = parent.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("replicas".into(), replicas);
            }
            if let Some(meta) = parent.get_mut("metadata").and_then(Value::as_object_mut) {
                match entries.map(serde_json::to_value) {
                    Some(Ok(list)) => meta.insert("managedFields".into(), list),
                    _ => meta.remove("managedFields"),
                };
            }
            Ok(())
        };
        // The edit writes the managedFields it computed: not tracked again.
        let untracked = WriteOptions {
            manager: "",
            subresource: "",
            ..opts
        };
        let written = self
            .edit(scope, name, Endpoint::Main, &edit, untracked)
            .await?;
        Ok(ScaleAnswer {
            scale: self.scale_of(facts, &*written.decoded()?)?,
            warnings: written.warnings,
        })
    }

    fn normalize_scale(&self, body: Value) -> ApiResult<Value> {
        let entry = self.scale_body()?;
        let mut body = (entry.normalize)(body)
            .map_err(|e| ApiError::bad_request(format!("invalid Scale: {e}")))?;
        if let Some(map) = body.as_object_mut() {
            map.insert("kind".into(), json!(entry.kind));
            map.insert("apiVersion".into(), json!(entry.api_version()));
        }
        Ok(body)
    }

    /// The Scale of an object, as upstream builds it: the object's identity,
    /// its desired and observed replicas, and the selector as text.
    fn scale_of(&self, facts: ScaleSubresource, object: &Object) -> ApiResult<Value> {
        let value = object.to_value().map_err(ApiError::internal)?;
        self.scale_of_value(facts, &value)
    }

    /// The Scale of an object's JSON.
    pub(super) fn scale_of_value(
        &self,
        facts: ScaleSubresource,
        value: &Value,
    ) -> ApiResult<Value> {
        let mut metadata = Map::new();
        for key in [
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "creationTimestamp",
        ] {
            if let Some(v) = value["metadata"].get(key).filter(|v| !v.is_null()) {
                metadata.insert(key.to_owned(), v.clone());
            }
        }
        // A custom resource may name no path (no label selector): nothing.
        let at = |path: &str| {
            if path.is_empty() {
                Value::Null
            } else {
                lookup(value, path)
            }
        };
        let replicas = |path| at(path).as_i64().unwrap_or(0);
        let scale = json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": metadata,
            "spec": { "replicas": replicas(facts.spec_replicas) },
            "status": {
                "replicas": replicas(facts.status_replicas),
                "selector": selector_text(&at(facts.label_selector)),
            },
        });
        self.normalize_scale(scale)
    }
}

/// The selector as text: a LabelSelector is printed, a map of labels (a
/// ReplicationController's selector) is a set of equalities, text is kept.
fn selector_text(selector: &Value) -> String {
    match selector {
        Value::String(text) => text.clone(),
        Value::Object(map)
            if map.contains_key("matchLabels") || map.contains_key("matchExpressions") =>
        {
            serde_json::from_value::<LabelSelector>(selector.clone())
                .map(|s| s.to_selector_string())
                .unwrap_or_default()
        }
        Value::Object(map) => LabelSelector {
            match_labels: Some(
                map.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                    .collect(),
            ),
            match_expressions: None,
        }
        .to_selector_string(),
        _ => String::new(),
    }
}

/// A kubectl-style path as a JSON pointer (`.spec.replicas` -> `/spec/replicas`).
fn pointer(path: &str) -> String {
    path.trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_selectors() {
        assert_eq!(pointer(".spec.replicas"), "/spec/replicas");
        assert_eq!(
            selector_text(&json!({"matchLabels": {"app": "web"}})),
            "app=web"
        );
        assert_eq!(selector_text(&json!({"b": "2", "a": "1"})), "a=1,b=2");
        assert_eq!(selector_text(&json!("x in (y)")), "x in (y)");
        assert_eq!(selector_text(&Value::Null), "");
    }
}
