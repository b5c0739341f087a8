//! ComponentStatus (`/api/v1/componentstatuses`): never stored; every read
//! probes the storage backend, as kube-apiserver probes its etcd servers. The
//! kind is deprecated upstream (since 1.19) and still served, read-only.

use async_trait::async_trait;
use kapi_api_types::core::v1::ComponentStatus;
use kapi_api_types::core::v1::componentstatus::ComponentCondition;
use kapi_runtime::meta::ObjectMeta;
use kapi_storage::Storage;

use crate::api_error::{ApiError, ApiResult};
use crate::registry::Object;
use crate::registry::Scope;
use crate::registry::hooks::KindRest;

/// The deprecation warning kube-apiserver sends with every ComponentStatus read.
const DEPRECATED: &str = "v1 ComponentStatus is deprecated in v1.19+";

/// The core `componentstatuses` resource, read from probes.
pub struct ComponentStatusRest;

#[async_trait]
impl KindRest for ComponentStatusRest {
    fn is_stored(&self) -> bool {
        false
    }

    /// The components, probed now: the storage backend as `<backend>-0`.
    /// (kube-controller-manager and kube-scheduler, which upstream probes on
    /// their default localhost ports, are not reported.)
    async fn read_all(
        &self,
        storage: &dyn Storage,
        _scope: Scope<'_>,
    ) -> Option<ApiResult<Vec<Object>>> {
        let name = format!("{}-0", storage.backend_name());
        let (status, message, error) = match storage.ready().await {
            Ok(()) => ("True", Some("ok".to_owned()), None),
            Err(e) => ("False", None, Some(e.to_string())),
        };
        let component = ComponentStatus {
            metadata: ObjectMeta {
                name: Some(name),
                ..ObjectMeta::default()
            },
            conditions: Some(vec![ComponentCondition {
                type_: "Healthy".to_owned(),
                status: status.to_owned(),
                message,
                error,
            }]),
        };
        Some(Ok(vec![Object::new(Box::new(component))]))
    }

    /// An unknown component is upstream's plain 500.
    fn missing(&self, name: &str) -> Option<ApiError> {
        Some(ApiError::plain(format!("Component not found: {name}")))
    }

    fn read_warning(&self) -> Option<&'static str> {
        Some(DEPRECATED)
    }
}
