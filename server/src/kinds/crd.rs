//! The deletion of a CustomResourceDefinition as kube-apiserver does it: the
//! first DELETE marks the definition (deletion time, the cleanup finalizer,
//! condition `Terminating` pending), and the definition stays until the
//! custom-resource controller has deleted its objects and removed the
//! finalizer (`crate::custom::controller`).

use kapi_runtime::meta::{DeleteOptions, Time};
use kapi_runtime::validation::FieldErrors;
use serde_json::{Value, json};

use crate::api_error::{ApiError, ApiResult};
use crate::custom::controller::CLEANUP_FINALIZER;
use crate::registry::hooks::{DeleteStep, KindRest};
use crate::registry::{Input, Object, Scope};

/// The deletion of `customresourcedefinitions`.
pub struct CrdRest;

impl KindRest for CrdRest {
    /// The CEL rules of the definition's schemas compile, check and fit
    /// their cost budget (checked again only when the spec changes: the
    /// rules a stored definition has stay valid).
    fn validate(&self, object: &Object, old: Option<&Object>, errs: &mut FieldErrors) {
        let Ok(value) = object.to_value() else { return };
        if let Some(old) = old
            && old
                .to_value()
                .is_ok_and(|old| old.get("spec") == value.get("spec"))
        {
            return;
        }
        crate::custom::cel::crd::validate(&value, errs);
    }

    fn delete_step(
        &self,
        scope: Scope<'_>,
        object: Object,
        _options: &DeleteOptions,
    ) -> ApiResult<DeleteStep> {
        if object.metadata().deletion_timestamp.is_some() {
            let holds = object
                .metadata()
                .finalizers()
                .iter()
                .any(|f| f == CLEANUP_FINALIZER);
            return Ok(if holds {
                DeleteStep::Unchanged(object)
            } else {
                DeleteStep::Finish(object)
            });
        }
        let mut object = object;
        let meta = object.metadata_mut();
        meta.deletion_timestamp = Some(Time::now());
        let finalizers = meta.finalizers.get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(CLEANUP_FINALIZER.to_owned());
        }
        let mut value = object.to_value().map_err(ApiError::internal)?;
        let condition = json!({
            "type": "Terminating",
            "status": "True",
            "lastTransitionTime": Time::now(),
            "reason": "InstanceDeletionPending",
            "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        });
        if let Some(status) = value.get_mut("status").and_then(Value::as_object_mut) {
            let conditions = status
                .entry("conditions")
                .or_insert_with(|| Value::Array(Vec::new()));
            if !conditions.is_array() {
                *conditions = Value::Array(Vec::new());
            }
            if let Some(conditions) = conditions.as_array_mut() {
                conditions.retain(|c| c["type"] != "Terminating");
                conditions.push(condition);
            }
        }
        Ok(DeleteStep::Keep(
            Input::from_value(scope.entry, value)?.object,
        ))
    }
}
