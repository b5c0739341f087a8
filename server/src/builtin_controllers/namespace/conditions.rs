//! The status conditions the namespace controller writes while it deletes a
//! namespace, with upstream's types, reasons and messages
//! (`status_condition_utils.go`).

use std::collections::BTreeMap;

use kapi_api_types::core::v1::Namespace;
use kapi_api_types::core::v1::namespace::NamespaceCondition;
use kapi_runtime::meta::Time;

use super::ContentReport;
use crate::controllers::client::{Client, ClientError};

/// One deletion condition: true with what went wrong, else false with
/// upstream's "ok" reason and message.
struct Condition {
    kind: &'static str,
    failure: Option<(&'static str, String)>,
    ok_reason: &'static str,
    ok_message: &'static str,
}

/// The five deletion conditions, in upstream's order.
fn conditions(report: &ContentReport) -> Vec<Condition> {
    let joined = |map: &BTreeMap<String, usize>, shape: fn(&str, usize) -> String| {
        map.iter()
            .map(|(k, n)| shape(k, *n))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let content_failure = (!report.errors.is_empty()).then(|| {
        let mut errors = report.errors.clone();
        errors.sort();
        // Go's aggregate error: one error as it is, several in brackets.
        let aggregate = match errors.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        (
            "ContentDeletionFailed",
            format!(
                "Failed to delete all resource types, {} remaining: {aggregate}",
                errors.len(),
            ),
        )
    });
    let remaining = (!report.remaining.is_empty()).then(|| {
        (
            "SomeResourcesRemain",
            format!(
                "Some resources are remaining: {}",
                joined(&report.remaining, |k, n| format!(
                    "{k} has {n} resource instances"
                ))
            ),
        )
    });
    let finalizers = (!report.finalizers.is_empty()).then(|| {
        (
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                joined(&report.finalizers, |k, n| format!(
                    "{k} in {n} resource instances"
                ))
            ),
        )
    });
    vec![
        Condition {
            kind: "NamespaceDeletionDiscoveryFailure",
            failure: report.discovery.clone().map(|m| ("DiscoveryFailed", m)),
            ok_reason: "ResourcesDiscovered",
            ok_message: "All resources successfully discovered",
        },
        Condition {
            kind: "NamespaceDeletionGroupVersionParsingFailure",
            failure: None,
            ok_reason: "ParsedGroupVersions",
            ok_message: "All legacy kube types successfully parsed",
        },
        Condition {
            kind: "NamespaceDeletionContentFailure",
            failure: content_failure,
            ok_reason: "ContentDeleted",
            ok_message: "All content successfully deleted, may be waiting on finalization",
        },
        Condition {
            kind: "NamespaceContentRemaining",
            failure: remaining,
            ok_reason: "ContentRemoved",
            ok_message: "All content successfully removed",
        },
        Condition {
            kind: "NamespaceFinalizersRemaining",
            failure: finalizers,
            ok_reason: "ContentHasNoFinalizers",
            ok_message: "All content-preserving finalizers finished",
        },
    ]
}

/// Writes the deletion conditions when they changed; a condition's
/// lastTransitionTime moves only when its status does.
pub(super) async fn update(
    client: &Client,
    mut namespace: Namespace,
    report: &ContentReport,
) -> Result<(), ClientError> {
    let now = Time::now();
    let list = namespace.status.conditions.get_or_insert_with(Vec::new);
    let mut changed = false;
    for condition in conditions(report) {
        let kind = condition.kind;
        let (status, reason, message) = match condition.failure {
            Some((reason, message)) => ("True", reason, message),
            None => (
                "False",
                condition.ok_reason,
                condition.ok_message.to_owned(),
            ),
        };
        match list.iter_mut().find(|c| c.type_ == kind) {
            Some(old) => {
                if old.status != status
                    || old.reason.as_deref() != Some(reason)
                    || old.message.as_deref() != Some(message.as_str())
                {
                    if old.status != status {
                        old.last_transition_time = Some(now);
                    }
                    old.status = status.to_owned();
                    old.reason = Some(reason.to_owned());
                    old.message = Some(message);
                    changed = true;
                }
            }
            None => {
                list.push(NamespaceCondition {
                    type_: kind.to_owned(),
                    status: status.to_owned(),
                    last_transition_time: Some(now),
                    reason: Some(reason.to_owned()),
                    message: Some(message),
                });
                changed = true;
            }
        }
    }
    if !changed {
        return Ok(());
    }
    let name = namespace.metadata.name.clone().unwrap_or_default();
    client
        .update_typed(None, &name, Some("status"), &namespace)
        .await
        .map(drop)
}
