//! Mutating- and ValidatingWebhookConfigurations and
//! ValidatingAdmissionPolicies beyond their compiled checks: each CEL
//! expression must compile, as upstream's validation compiles it
//! (`compilation failed: ...`).

use kapi_api_types::admissionregistration::v1::rule::MatchCondition;
use kapi_api_types::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::body::Object;
use crate::registry::hooks::KindRest;

/// The `admissionregistration.k8s.io` webhook configurations.
pub struct WebhookConfigurationRest;

impl KindRest for WebhookConfigurationRest {
    fn validate(&self, object: &Object, _old: Option<&Object>, errs: &mut FieldErrors) {
        let conditions: Vec<Option<&Vec<MatchCondition>>> =
            if let Some(config) = object.downcast_ref::<MutatingWebhookConfiguration>() {
                config
                    .webhooks
                    .iter()
                    .flatten()
                    .map(|w| w.match_conditions.as_ref())
                    .collect()
            } else if let Some(config) = object.downcast_ref::<ValidatingWebhookConfiguration>() {
                config
                    .webhooks
                    .iter()
                    .flatten()
                    .map(|w| w.match_conditions.as_ref())
                    .collect()
            } else {
                return;
            };
        for (i, conditions) in conditions.into_iter().enumerate() {
            for (j, condition) in conditions.into_iter().flatten().enumerate() {
                if condition.expression.trim().is_empty() {
                    continue;
                }
                if let Err(e) = crate::custom::cel::parse(&condition.expression) {
                    let path = FieldPath::new("webhooks")
                        .index(i)
                        .child("matchConditions")
                        .index(j)
                        .child("expression");
                    errs.invalid(
                        path,
                        condition.expression.as_str(),
                        &format!("compilation failed: {e}"),
                    );
                }
            }
        }
    }
}

/// ValidatingAdmissionPolicies: each CEL expression must compile.
pub struct PolicyRest;

impl KindRest for PolicyRest {
    fn validate(&self, object: &Object, _old: Option<&Object>, errs: &mut FieldErrors) {
        use kapi_api_types::admissionregistration::v1::ValidatingAdmissionPolicy;
        let Some(policy) = object.downcast_ref::<ValidatingAdmissionPolicy>() else {
            return;
        };
        let spec = &policy.spec;
        let spec_path = FieldPath::new("spec");
        let mut check = |path: FieldPath, expression: &str| {
            if expression.trim().is_empty() {
                return;
            }
            if let Err(e) = crate::custom::cel::parse(expression) {
                errs.invalid(path, expression, &format!("compilation failed: {e}"));
            }
        };
        for (i, v) in spec.validations.iter().flatten().enumerate() {
            let item = spec_path.child("validations").index(i);
            check(item.child("expression"), &v.expression);
            if let Some(message) = &v.message_expression {
                check(item.child("messageExpression"), message);
            }
        }
        for (i, c) in spec.match_conditions.iter().flatten().enumerate() {
            let item = spec_path.child("matchConditions").index(i);
            check(item.child("expression"), &c.expression);
        }
        for (i, v) in spec.variables.iter().flatten().enumerate() {
            let item = spec_path.child("variables").index(i);
            check(item.child("expression"), &v.expression);
        }
        for (i, a) in spec.audit_annotations.iter().flatten().enumerate() {
            let item = spec_path.child("auditAnnotations").index(i);
            check(item.child("valueExpression"), &a.value_expression);
        }
    }
}
