//! The server's client to itself: how admission plugins, authenticators and
//! authorizers read the objects they depend on (namespaces, quotas, service
//! accounts, secrets, roles) and make the few writes they need (a quota's
//! charge, a token's last use), through a narrow interface the registry
//! implements, as upstream's plugins read informers and write through the
//! loopback client. Objects come as JSON, the form the plugins work on.

use async_trait::async_trait;
use serde_json::Value;

use crate::api_error::ApiResult;

/// A resource as `(group, version, plural)`, e.g. `("", "v1", "pods")`.
pub type Resource<'a> = (&'a str, &'a str, &'a str);

/// A change to an object's JSON form; an error refuses it.
pub type Change<'a> = &'a (dyn Fn(&mut Value) -> ApiResult<()> + Sync);

/// The objects admission plugins read.
#[async_trait]
pub trait Loopback: Send + Sync {
    /// Whether the server serves `resource` at all.
    fn serves(&self, resource: Resource<'_>) -> bool;

    /// One object: None when it does not exist, or when the server does not
    /// serve the kind.
    async fn read(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<Value>>;

    /// Every object of a kind, in `namespace` or cluster-wide; none when the
    /// server does not serve the kind.
    async fn read_all(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
    ) -> ApiResult<Vec<Value>>;

    /// Changes an object's status (through its `/status` endpoint, retried on
    /// conflict): how the quota plugin charges usage. A missing object is a
    /// 404; a kind the server does not serve changes nothing.
    async fn edit_status(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: Change<'_>,
    ) -> ApiResult<()>;

    /// Changes an object (retried on conflict), as the API server's own
    /// client: how authentication records a legacy token's last use. A
    /// missing object is a 404; a kind the server does not serve changes
    /// nothing.
    async fn edit(
        &self,
        resource: Resource<'_>,
        namespace: Option<&str>,
        name: &str,
        change: Change<'_>,
    ) -> ApiResult<()>;
}
