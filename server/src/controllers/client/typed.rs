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

impl Client {
    /// CREATE of `object`, answered as the kind `K`.
    pub async fn create_typed<K: Kind>(
        &self,
        namespace: Option<&str>,
        object: &K,
    ) -> Result<K, ClientError> {
        let body = encode(object)?;
        decode(self.create(&Resource::of::<K>(), namespace, &body).await?)
    }

    /// UPDATE (PUT) of `object` (of its `subresource` when given), answered
    /// as the kind `K`.
    pub async fn update_typed<K: Kind>(
        &self,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        object: &K,
    ) -> Result<K, ClientError> {
        let body = encode(object)?;
        let resource = Resource::of::<K>();
        decode(
            self.update(&resource, namespace, name, subresource, &body)
                .await?,
        )
    }
}

/// `object` as the JSON body of a request, with the kind's `apiVersion` and
/// `kind`.
fn encode<K: Kind>(object: &K) -> Result<Value, ClientError> {
    let mut body = serde_json::to_value(object).map_err(|e| ClientError::Decode(e.to_string()))?;
    if let Some(fields) = body.as_object_mut() {
        let info = K::INFO;
        let api_version = if info.group.is_empty() {
            info.version.to_owned()
        } else {
            format!("{}/{}", info.group, info.version)
        };
        fields.insert("apiVersion".into(), Value::String(api_version));
        fields.insert("kind".into(), Value::String(info.kind.to_owned()));
    }
    Ok(body)
}
