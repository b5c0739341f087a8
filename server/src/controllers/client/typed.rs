//! The client over a compiled kind: the resource is the kind's own (no
//! group or plural written by hand) and objects come and go as the kind's
//! Rust values, as kube-rs's `Api<K>` handles them.

use kapi_runtime::Resource as Kind;
use serde_json::Value;

use super::{Client, ClientError, ListParams, Resource};

impl Resource {
    /// The resource of the kind `K`, in `K`'s version.
    pub fn of<K: Kind>() -> Resource {
        let info = K::INFO;
        Resource::new(info.group, info.version, info.plural, info.namespaced)
    }
}

/// `value` as the kind `K`.
pub fn decode<K: Kind>(value: Value) -> Result<K, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::Decode(e.to_string()))
}

impl Client {
    /// GET of one object of the kind `K`.
    pub async fn get_typed<K: Kind>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<K, ClientError> {
        decode(self.get(&Resource::of::<K>(), namespace, name).await?)
    }

    /// LIST of the kind `K`, in one namespace or across all.
    pub async fn list_typed<K: Kind>(
        &self,
        namespace: Option<&str>,
        params: &ListParams,
    ) -> Result<Vec<K>, ClientError> {
        let mut list = self.list(&Resource::of::<K>(), namespace, params).await?;
        let items = match list.get_mut("items").map(Value::take) {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        items.into_iter().map(decode).collect()
    }
}
