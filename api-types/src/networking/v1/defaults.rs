//! The defaults of networking/v1 that depend on other fields
//! (k8s.io/kubernetes/pkg/apis/networking/v1/defaults.go); plain values are
//! `#[api(default = ...)]` on the fields.

use super::networkpolicy::NetworkPolicy;

/// `SetDefaults_NetworkPolicy`: a policy without types restricts ingress, and
/// egress too when it has egress rules.
pub(super) fn default_network_policy(policy: &mut NetworkPolicy) {
    let spec = &mut policy.spec;
    if spec.policy_types.as_ref().is_some_and(|t| !t.is_empty()) {
        return;
    }
    let mut types = vec!["Ingress".to_owned()];
    if spec.egress.as_ref().is_some_and(|e| !e.is_empty()) {
        types.push("Egress".to_owned());
    }
    spec.policy_types = Some(types);
}
