//! The service account controller: a `default` ServiceAccount in every active
//! namespace, created again when deleted (upstream's serviceaccounts-controller
//! with its default `ServiceAccountsControllerOptions`).

use kapi_api_types::core::v1::ServiceAccount;
use kapi_runtime::meta::ObjectMeta;

use super::per_namespace::Kept;

/// The service account every namespace has.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";

/// The `default` service account, kept in every namespace that is not
/// terminating.
pub struct DefaultServiceAccount;

impl Kept for DefaultServiceAccount {
    type Object = ServiceAccount;

    fn controller(&self) -> &'static str {
        "serviceaccount-controller"
    }

    fn name(&self) -> &'static str {
        DEFAULT_SERVICE_ACCOUNT
    }

    fn desired(&self, namespace: &str) -> ServiceAccount {
        ServiceAccount {
            metadata: ObjectMeta {
                name: Some(DEFAULT_SERVICE_ACCOUNT.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..ObjectMeta::default()
            },
            ..ServiceAccount::default()
        }
    }

    /// Upstream only creates the account; what users change in it stays.
    fn repaired(&self, _current: &ServiceAccount) -> Option<ServiceAccount> {
        None
    }
}
