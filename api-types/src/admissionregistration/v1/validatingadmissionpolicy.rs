//! ValidatingAdmissionPolicies: CEL checks of requests that the API server runs
//! itself, applied through bindings.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::rule::{MatchCondition, MatchResources};
use crate::core::v1::service::status::Condition;
use crate::go_json::{null_as_default, omitempty};

/// CEL validations of the requests a policy matches; a
/// ValidatingAdmissionPolicyBinding decides where and how they are enforced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "admissionregistration.k8s.io",
    version = "v1",
    plural = "validatingadmissionpolicies",
    storage_prefix = "validatingadmissionpolicies",
    reset_status = "metadata, spec",
    categories("api-extensions"),
    cluster_scoped,
    status,
    printer_column(name = "Validations", type = "integer", json_path = ".spec.validations",
        description = "Number of validations of the policy."),
    printer_column(name = "ParamKind", type = "string", json_path = ".spec.paramKind",
        description = "apiVersion/kind of the objects that parameterize the policy."),
    table_cells = policy_cells
)]
#[api(validate = super::validation::policy::validate_policy)]
pub struct ValidatingAdmissionPolicy {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// What the policy matches and checks.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: ValidatingAdmissionPolicySpec,
    /// Results of checking the policy itself, as last observed.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: ValidatingAdmissionPolicyStatus,
}

/// The desired behaviour of a validating admission policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ValidatingAdmissionPolicySpec {
    /// Kind of the objects bindings pass as `params`; no parameters when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub param_kind: Option<ParamKind>,
    /// The requests the policy can apply to; bindings narrow them further.
    /// Required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub match_constraints: Option<MatchResources>,
    /// CEL checks a request must pass, in order.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub validations: Option<Vec<Validation>>,
    /// `Ignore` or `Fail` (the default): what a misconfiguration or an
    /// evaluation error does to the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    #[api(default = "Fail")]
    pub failure_policy: Option<String>,
    /// Audit annotations added to the audit event of matched requests.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub audit_annotations: Option<Vec<AuditAnnotation>>,
    /// CEL conditions that must all hold for the policy to be evaluated, at
    /// most 64.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("name"))]
    #[api(patch_strategy = "merge", patch_merge_key = "name")]
    #[api(proto = 6)]
    pub match_conditions: Option<Vec<MatchCondition>>,
    /// Named CEL expressions the other expressions read as `variables.<name>`,
    /// each seeing only those before it.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("name"))]
    #[api(patch_strategy = "merge", patch_merge_key = "name")]
    #[api(proto = 7)]
    pub variables: Option<Vec<Variable>>,
}

/// The kind of the parameter objects of a policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct ParamKind {
    /// `group/version` of the kind, e.g. `v1` or `example.com/v1`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub api_version: Option<String>,
    /// The kind, e.g. `ConfigMap`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub kind: Option<String>,
}

/// One CEL check of a policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Validation {
    /// CEL expression over `object`, `oldObject`, `request`, `params`,
    /// `namespaceObject`, `variables` and `authorizer`; true passes.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1, proto_name = "Expression")]
    pub expression: String,
    /// Message returned when the check fails; a default one names the
    /// expression.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub message: Option<String>,
    /// Status reason of the rejection: `Unauthorized`, `Forbidden`, `Invalid`
    /// (the default) or `RequestEntityTooLarge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub reason: Option<String>,
    /// CEL expression giving the failure message, over the same variables;
    /// preferred over `message` when it yields a string.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub message_expression: Option<String>,
}

/// A named CEL expression of a policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct Variable {
    /// Name, a CEL identifier unique in the policy.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1, proto_name = "Name")]
    pub name: String,
    /// CEL expression computing the value, evaluated lazily at most once per
    /// request.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2, proto_name = "Expression")]
    pub expression: String,
}

/// An audit annotation a policy adds to matched requests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct AuditAnnotation {
    /// Key, unique in the policy; the annotation is `<policy name>/<key>`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub key: String,
    /// CEL expression giving the value, a string (or null to add nothing).
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub value_expression: String,
}

/// What the server found when it last checked a policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ValidatingAdmissionPolicyStatus {
    /// The `metadata.generation` the status was computed from.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub observed_generation: Option<i64>,
    /// Results of type-checking the expressions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub type_checking: Option<TypeChecking>,
    /// Conditions of the policy.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(proto = 3)]
    pub conditions: Option<Vec<Condition>>,
}

/// The outcome of type-checking a policy's expressions against the matched
/// types.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct TypeChecking {
    /// Problems found, one per expression.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub expression_warnings: Option<Vec<ExpressionWarning>>,
}

/// A type-checking problem of one expression.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ExpressionWarning {
    /// Path of the expression's field, e.g. `spec.validations[0].expression`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 2)]
    pub field_ref: String,
    /// What is wrong, per checked type.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 3)]
    pub warning: String,
}

/// The row of `kubectl get validatingadmissionpolicies`: the number of
/// validations and `apiVersion/kind` of the parameters, `<unset>` without.
fn policy_cells(policy: &ValidatingAdmissionPolicy) -> Vec<Value> {
    let spec = &policy.spec;
    let param_kind = spec.param_kind.as_ref().map_or_else(
        || "<unset>".to_owned(),
        |p| {
            let version = p.api_version.as_deref().unwrap_or_default();
            format!("{version}/{}", p.kind.as_deref().unwrap_or_default())
        },
    );
    vec![
        json!(spec.validations.as_ref().map_or(0, Vec::len)),
        json!(param_kind),
    ]
}
