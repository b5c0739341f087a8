//! The service account controller: a `default` ServiceAccount in every active
//! namespace, created again when deleted (upstream's serviceaccounts-controller
//! with its default `ServiceAccountsControllerOptions`).

use serde_json::{Value, json};

use super::per_namespace::Kept;
use crate::controllers::client::Resource;

/// The service account every namespace has.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";

/// The `default` service account, kept in every namespace that is not
/// terminating.
pub struct DefaultServiceAccount;

impl Kept for DefaultServiceAccount {
    fn controller(&self) -> &'static str {
        "serviceaccount-controller"
    }

    fn resource(&self) -> Resource {
        Resource::new("", "v1", "serviceaccounts", true)
    }

    fn name(&self) -> &'static str {
        DEFAULT_SERVICE_ACCOUNT
    }

    fn desired(&self, namespace: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": { "name": DEFAULT_SERVICE_ACCOUNT, "namespace": namespace },
        })
    }

    /// Upstream only creates the account; what users change in it stays.
    fn repaired(&self, _current: &Value) -> Option<Value> {
        None
    }
}
