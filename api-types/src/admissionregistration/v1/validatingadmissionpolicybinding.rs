//! ValidatingAdmissionPolicyBindings: where a validating admission policy is
//! enforced, with which parameters and how.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::rule::MatchResources;
use crate::go_json::{null_as_default, omitempty};

/// Puts a ValidatingAdmissionPolicy into effect for some resources, with a
/// parameter object and the actions taken on failed validations.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "admissionregistration.k8s.io",
    version = "v1",
    plural = "validatingadmissionpolicybindings",
    storage_prefix = "validatingadmissionpolicybindings",
    categories("api-extensions"),
    cluster_scoped,
    printer_column(name = "PolicyName", type = "string", json_path = ".spec.policyName",
        description = "Name of the bound policy."),
    printer_column(name = "ParamRef", type = "string", json_path = ".spec.paramRef",
        description = "The parameter object or objects of the binding."),
    table_cells = binding_cells
)]
#[api(validate = super::validation::binding::validate_binding)]
pub struct ValidatingAdmissionPolicyBinding {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The policy, its parameters, scope and actions.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: ValidatingAdmissionPolicyBindingSpec,
}

/// What a binding binds, to what, and with which consequences.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct ValidatingAdmissionPolicyBindingSpec {
    /// Name of the ValidatingAdmissionPolicy; the binding does nothing until
    /// it exists.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub policy_name: Option<String>,
    /// The parameter object(s); needed exactly when the policy has a
    /// `paramKind`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub param_ref: Option<ParamRef>,
    /// Narrows the requests the policy applies to, within the policy's own
    /// `matchConstraints`; all of them when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub match_resources: Option<MatchResources>,
    /// What a failed validation does: `Deny` (reject), `Warn` (warning to the
    /// client) and/or `Audit` (audit annotation); `Deny` and `Warn` exclude each
    /// other.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "set")]
    #[api(proto = 4)]
    pub validation_actions: Option<Vec<String>>,
}

/// The parameter objects of a binding: one by name, or all matching a
/// selector.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(map_type = "atomic")]
pub struct ParamRef {
    /// Name of the parameter object; excludes `selector`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub name: Option<String>,
    /// Namespace of the parameter objects; the request's namespace when unset
    /// and the kind is namespaced.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub namespace: Option<String>,
    /// Labels of the parameter objects, each evaluated in turn; excludes
    /// `name` (an empty selector matches every object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub selector: Option<LabelSelector>,
    /// `Allow` or `Deny`: the outcome when no parameter object is found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub parameter_not_found_action: Option<String>,
}

/// The row of `kubectl get validatingadmissionpolicybindings`: the policy and
/// the parameters, as `namespace/name` (`*/name` without a namespace), the
/// selector in Go's debug form, or `<unset>`.
fn binding_cells(binding: &ValidatingAdmissionPolicyBinding) -> Vec<Value> {
    let spec = &binding.spec;
    let param = match &spec.param_ref {
        Some(p) if p.name.as_deref().is_some_and(|n| !n.is_empty()) => {
            let name = p.name.as_deref().unwrap_or_default();
            match p.namespace.as_deref() {
                Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
                _ => format!("*/{name}"),
            }
        }
        Some(ParamRef {
            selector: Some(selector),
            ..
        }) => go_selector_string(selector),
        _ => "<unset>".to_owned(),
    };
    vec![
        json!(spec.policy_name.as_deref().unwrap_or_default()),
        json!(param),
    ]
}

/// A label selector as the `String()` method Go generates for it prints it:
/// `&LabelSelector{MatchLabels:map[string]string{k: v,},MatchExpressions:[]...{},}`.
fn go_selector_string(selector: &LabelSelector) -> String {
    let mut labels = String::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        labels.push_str(&format!("{key}: {value},"));
    }
    let mut expressions = String::new();
    for req in selector.match_expressions.iter().flatten() {
        let values = req.values.as_deref().unwrap_or_default().join(" ");
        expressions.push_str(&format!(
            "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{values}],}},",
            req.key, req.operator
        ));
    }
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},\
         MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
}
