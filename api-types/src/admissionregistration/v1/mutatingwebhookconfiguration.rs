//! MutatingWebhookConfigurations: webhooks that may change objects on their
//! way into storage.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::rule::{MatchCondition, RuleWithOperations};
use super::webhook::WebhookClientConfig;
use crate::go_json::{null_as_default, omitempty};

/// A set of mutating admission webhooks, called one after the other for the
/// requests they match.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "admissionregistration.k8s.io",
    version = "v1",
    plural = "mutatingwebhookconfigurations",
    storage_prefix = "mutatingwebhookconfigurations",
    categories("api-extensions"),
    cluster_scoped,
    printer_column(name = "Webhooks", type = "integer", json_path = ".webhooks",
        description = "Number of webhooks in the configuration."),
    table_cells = mutating_cells
)]
#[api(validate = super::validation::webhook::validate_mutating_configuration)]
pub struct MutatingWebhookConfiguration {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The webhooks, each with its own name.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("name"))]
    #[api(patch_strategy = "merge", patch_merge_key = "name")]
    #[api(proto = 2, proto_name = "Webhooks")]
    pub webhooks: Option<Vec<MutatingWebhook>>,
}

/// One mutating webhook: where it is, what it is sent and what happens when it
/// fails.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::default_mutating_webhook)]
pub struct MutatingWebhook {
    /// Fully qualified name of the webhook, e.g. `defaults.example.com`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub name: String,
    /// How to reach the webhook.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub client_config: WebhookClientConfig,
    /// Operations and resources sent to the webhook; any one rule matching is
    /// enough.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub rules: Option<Vec<RuleWithOperations>>,
    /// `Ignore` or `Fail` (the default): what an error calling the webhook does
    /// to the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    #[api(default = "Fail")]
    pub failure_policy: Option<String>,
    /// `Exact` or `Equivalent` (the default): whether requests to other versions
    /// of a listed resource are sent too, converted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    #[api(default = "Equivalent")]
    pub match_policy: Option<String>,
    /// Labels of the object's namespace (or of a namespace object itself); every
    /// namespace when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub namespace_selector: Option<LabelSelector>,
    /// Labels of the object, old or new; every object when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub object_selector: Option<LabelSelector>,
    /// `None` or `NoneOnDryRun`: the webhook has no side effects (on dry-run
    /// requests); dry-run requests skip webhooks that might.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 6)]
    pub side_effects: Option<String>,
    /// Seconds to wait for the webhook, 1 to 30; 10 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    #[api(default = 10)]
    pub timeout_seconds: Option<i32>,
    /// `AdmissionReview` versions the webhook accepts, preferred first; the
    /// server sends the first it knows.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(schema_required, list_type = "atomic")]
    #[api(proto = 8)]
    pub admission_review_versions: Vec<String>,
    /// `Never` (the default) or `IfNeeded`: call the webhook again when later
    /// mutations changed the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 10)]
    #[api(default = "Never")]
    pub reinvocation_policy: Option<String>,
    /// CEL conditions that must all hold for the webhook to be called, at most
    /// 64.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("name"))]
    #[api(patch_strategy = "merge", patch_merge_key = "name")]
    #[api(proto = 12)]
    pub match_conditions: Option<Vec<MatchCondition>>,
}

/// The Webhooks column counts the webhooks.
fn mutating_cells(config: &MutatingWebhookConfiguration) -> Vec<Value> {
    vec![json!(config.webhooks.as_ref().map_or(0, Vec::len))]
}
