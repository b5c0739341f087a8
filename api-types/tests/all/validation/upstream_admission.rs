//! The recorded upstream cases of admissionregistration.k8s.io/v1: the two
//! webhook configuration kinds, validating admission policies and their
//! bindings (one `upstream_cases!` list per kind, as in `validation.rs`).
//! kapi compiles no CEL, so no listed case holds an expression that fails
//! to compile or to type-check.

use super::upstream;
use crate::common::{admit_clean, fixture};
use kapi_api_types::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};

// `admissionregistration/vwc_cel` and `vap_cel` are recorded but not run:
// their causes are CEL compilation and type errors (syntax errors,
// undeclared `params`, a match condition or message expression of the wrong
// type), which kapi does not detect.
upstream_cases!(ValidatingWebhookConfiguration, "admissionregistration":
    vwc_webhooks,
    vwc_rules,
    vwc_service,
    vwc_match_conditions,
    vwc_urls,
);

upstream_cases!(MutatingWebhookConfiguration, "admissionregistration": mwc_webhooks, mwc_update);

upstream_cases!(ValidatingAdmissionPolicy, "admissionregistration":
    vap_spec,
    vap_empty,
    vap_param_kind,
    vap_param_kind_version,
    vap_rules,
    vap_annotations,
    vap_many_annotations,
    vap_update,
);

upstream_cases!(ValidatingAdmissionPolicyBinding, "admissionregistration":
    vapb_spec,
    vapb_values,
    vapb_param_ref,
    vapb_update,
);

/// Objects kube-apiserver 1.32 accepts (checked with `?dryRun=All`, with no
/// `Warning` header: these kinds have no warnings) at the edges of the rules
/// above: wildcard resources beside subresource forms, an upper-case https
/// scheme with an empty query, unknown review versions beside a known one, 64
/// match conditions, 20 audit annotations, an empty parameter selector.
#[test]
fn objects_upstream_accepts_are_valid() {
    let dir = "validation/admissionregistration";
    admit_clean::<ValidatingWebhookConfiguration>(fixture(&format!("{dir}/valid_vwc.json")));
    admit_clean::<MutatingWebhookConfiguration>(fixture(&format!("{dir}/valid_mwc.json")));
    admit_clean::<ValidatingAdmissionPolicy>(fixture(&format!("{dir}/valid_vap.json")));
    admit_clean::<ValidatingAdmissionPolicyBinding>(fixture(&format!("{dir}/valid_vapb.json")));
}
