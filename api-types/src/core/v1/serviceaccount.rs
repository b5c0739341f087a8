//! ServiceAccounts: identities for the processes that run in pods.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::reference::{LocalObjectReference, ObjectReference};
use crate::go_json::omitempty;

/// A named identity inside a namespace that pods run as, with the credentials
/// its pods may use.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "serviceaccounts",
    return_deleted_object,
    short_names("sa"),
    generation = false,
    printer_column(name = "Secrets", type = "string", json_path = ".secrets",
        description = "Number of secrets listed by the service account."),
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the service account was created."),
    subresource(name = "token", group = "authentication.k8s.io", version = "v1",
        kind = "TokenRequest"),
    prepare = keep_secret_names,
    warnings = serviceaccount_warnings,
    table_cells = serviceaccount_cells
)]
pub struct ServiceAccount {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Secrets of the namespace that pods running as this account may use; only
    /// enforced with the `kubernetes.io/enforce-mountable-secrets` annotation.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("name"))]
    #[api(patch_strategy = "merge", patch_merge_key = "name")]
    #[api(proto = 2)]
    pub secrets: Option<Vec<ObjectReference>>,
    /// Registry credential secrets added to every pod that runs as this account.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub image_pull_secrets: Option<Vec<LocalObjectReference>>,
    /// Whether pods running as this account get an API token mounted; a pod's own
    /// setting wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub automount_service_account_token: Option<bool>,
}

/// The `kubectl get serviceaccounts` row: the number of secrets, then the age.
fn serviceaccount_cells(sa: &ServiceAccount) -> Vec<Value> {
    vec![
        json!(sa.secrets.as_ref().map_or(0, Vec::len)),
        json!(sa.metadata.creation_timestamp.map(|t| t.to_string())),
    ]
}

/// The annotation that limits pods to the account's `secrets`, deprecated
/// since 1.32.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";

/// A secret of the account is named only: the API server drops the other
/// fields of each reference on every write, as upstream's strategy does.
fn keep_secret_names(sa: &mut ServiceAccount) {
    for secret in sa.secrets.iter_mut().flatten() {
        *secret = ObjectReference {
            name: secret.name.take(),
            ..ObjectReference::default()
        };
    }
}

/// The `Warning` headers of a write: the deprecated mountable-secrets
/// annotation, whatever its value.
fn serviceaccount_warnings(sa: &ServiceAccount, _old: Option<&ServiceAccount>) -> Vec<String> {
    let annotated = sa
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(ENFORCE_MOUNTABLE_SECRETS));
    if annotated {
        vec![format!(
            "metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS}]: deprecated in v1.32+; prefer \
             separate namespaces to isolate access to mounted secrets"
        )]
    } else {
        Vec::new()
    }
}
