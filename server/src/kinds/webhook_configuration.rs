//! Mutating- and ValidatingWebhookConfigurations beyond their compiled
//! checks: each `matchConditions` expression must compile, as upstream's
//! validation compiles it (`compilation failed: ...`).

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
