//! The defaults of admissionregistration/v1 that build whole structs
//! (k8s.io/kubernetes/pkg/apis/admissionregistration/v1/defaults.go); plain
//! values are `#[api(default = ...)]` on the fields.

use super::mutatingwebhookconfiguration::MutatingWebhook;
use super::rule::MatchResources;
use super::validatingwebhookconfiguration::ValidatingWebhook;

/// `SetDefaults_ValidatingWebhook`: without selectors a webhook sees objects
/// of every namespace and every label.
pub(super) fn default_validating_webhook(webhook: &mut ValidatingWebhook) {
    webhook
        .namespace_selector
        .get_or_insert_with(Default::default);
    webhook.object_selector.get_or_insert_with(Default::default);
}

/// `SetDefaults_MutatingWebhook`: as for validating webhooks.
pub(super) fn default_mutating_webhook(webhook: &mut MutatingWebhook) {
    webhook
        .namespace_selector
        .get_or_insert_with(Default::default);
    webhook.object_selector.get_or_insert_with(Default::default);
}

/// `SetDefaults_MatchResources`: a policy or binding without selectors matches
/// every namespace and every label.
pub(super) fn default_match_resources(resources: &mut MatchResources) {
    resources
        .namespace_selector
        .get_or_insert_with(Default::default);
    resources
        .object_selector
        .get_or_insert_with(Default::default);
}
