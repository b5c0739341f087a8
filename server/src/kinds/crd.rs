//! The deletion of a CustomResourceDefinition as kube-apiserver does it: the
//! first DELETE marks the definition (deletion time, the cleanup finalizer,
//! condition `Terminating` pending), and the definition stays until the
//! custom-resource controller has deleted its objects and removed the
//! finalizer (`crate::custom::controller`).

use kapi_api_types::apiextensions::v1::CustomResourceDefinition;
use kapi_api_types::apiextensions::v1::customresourcedefinition::CustomResourceDefinitionCondition;
use kapi_runtime::meta::{DeleteOptions, Time};
use kapi_runtime::validation::FieldErrors;

use crate::api_error::{ApiError, ApiResult};
use crate::custom::controller::CLEANUP_FINALIZER;
use crate::registry::hooks::{DeleteStep, KindRest};
use crate::registry::{Object, Scope};

/// The deletion of `customresourcedefinitions`.
pub struct CrdRest;

impl KindRest for CrdRest {
    /// The CEL rules of the definition's schemas compile, check and fit
    /// their cost budget (checked again only when the spec changes: the
    /// rules a stored definition has stay valid).
    fn validate(&self, object: &Object, old: Option<&Object>, errs: &mut FieldErrors) {
        let spec = |o| Some(&Object::downcast_ref::<CustomResourceDefinition>(o)?.spec);
        if let Some(old) = old
            && spec(old).is_some()
            && spec(old) == spec(object)
        {
            return;
        }
        // The rules are compiled from the schemas' JSON, whose shape is the
        // definition author's.
        let Ok(value) = object.to_value() else { return };
        crate::custom::cel::crd::validate(&value, errs);
    }

    fn delete_step(
        &self,
        _scope: Scope<'_>,
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
        let definition = object
            .downcast_mut::<CustomResourceDefinition>()
            .ok_or_else(|| ApiError::internal("a CustomResourceDefinition of another type"))?;
        let conditions = definition.status.conditions.get_or_insert_with(Vec::new);
        conditions.retain(|c| c.type_ != "Terminating");
        conditions.push(CustomResourceDefinitionCondition {
            type_: "Terminating".to_owned(),
            status: "True".to_owned(),
            last_transition_time: Some(Time::now()),
            reason: Some("InstanceDeletionPending".to_owned()),
            message: Some(
                "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
                    .to_owned(),
            ),
        });
        Ok(DeleteStep::Keep(object))
    }
}
