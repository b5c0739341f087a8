//! ComponentStatus (`/api/v1/componentstatuses`): never stored; every read
//! probes the storage backend, as kube-apiserver probes its etcd servers. The
//! kind is deprecated upstream (since 1.19) and still served, read-only.

use serde_json::json;

use super::{Object, Registry, Scope};
use crate::api_error::{ApiError, ApiResult};

/// Whether `scope` addresses ComponentStatus.
pub fn is_component_status(scope: Scope<'_>) -> bool {
    let info = scope.info();
    info.group.is_empty() && info.plural == "componentstatuses"
}

/// The deprecation warning kube-apiserver sends with every ComponentStatus read.
pub const DEPRECATED: &str = "v1 ComponentStatus is deprecated in v1.19+";

impl Registry {
    /// The components, probed now: the storage backend as `<backend>-0`.
    /// (kube-controller-manager and kube-scheduler, which upstream probes on
    /// their default localhost ports, are not reported.)
    pub(super) async fn component_statuses(&self, scope: Scope<'_>) -> ApiResult<Vec<Object>> {
        let name = format!("{}-0", self.storage.backend_name());
        let condition = match self.storage.ready().await {
            Ok(()) => json!({ "type": "Healthy", "status": "True", "message": "ok" }),
            Err(e) => json!({ "type": "Healthy", "status": "False", "error": e.to_string() }),
        };
        let value = json!({ "metadata": { "name": name }, "conditions": [condition] });
        let decoded = scope
            .entry
            .ops
            .decode_value(value)
            .map_err(ApiError::internal)?;
        Ok(vec![Object::new(decoded.object)])
    }

    /// One component, probed now; an unknown name is upstream's plain 500.
    pub(super) async fn component_status(&self, scope: Scope<'_>, name: &str) -> ApiResult<Object> {
        self.component_statuses(scope)
            .await?
            .into_iter()
            .find(|c| c.metadata().name() == name)
            .ok_or_else(|| ApiError::plain(format!("Component not found: {name}")))
    }
}
