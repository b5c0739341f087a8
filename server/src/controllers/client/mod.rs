//! An API client that sends real HTTP requests through the server's own router
//! (`tower::ServiceExt::oneshot`): the controllers use the API exactly as any
//! other client does, with no shortcut into storage.

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::user::UserInfo;

pub mod typed;
mod watch;

pub use watch::{ClientEvent, WatchStream};

/// The largest response body the client reads (lists of a busy namespace fit).
const MAX_BODY: usize = 512 * 1024 * 1024;

/// `Accept` asking for the metadata of objects only.
pub const METADATA_ONLY: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

/// `Accept` asking for lists of metadata only.
const METADATA_LIST: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

/// A resource the client addresses: group, version, plural and scope.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Resource {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
}

impl Resource {
    /// A resource of the given group, version, plural and scope.
    pub fn new(group: &str, version: &str, plural: &str, namespaced: bool) -> Resource {
        Resource {
            group: group.to_owned(),
            version: version.to_owned(),
            plural: plural.to_owned(),
            namespaced,
        }
    }

    /// `v1` or `group/version`, as objects carry it in `apiVersion`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The path of the collection (in `namespace` when given), or of one object
    /// when `name` is given.
    pub fn path(&self, namespace: Option<&str>, name: Option<&str>) -> String {
        let mut path = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        if let Some(namespace) = namespace.filter(|_| self.namespaced) {
            path.push_str("/namespaces/");
            path.push_str(namespace);
        }
        path.push('/');
        path.push_str(&self.plural);
        if let Some(name) = name {
            path.push('/');
            path.push_str(name);
        }
        path
    }
}

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with a failure `Status`.
    #[error("{code}: {message}")]
    Status {
        /// The HTTP status code.
        code: u16,
        /// The Status message.
        message: String,
        /// The whole Status object.
        status: Value,
    },
    /// The request could not be sent or its answer read.
    #[error("transport: {0}")]
    Transport(String),
    /// The answer was not the JSON expected.
    #[error("decoding the answer: {0}")]
    Decode(String),
}

impl ClientError {
    /// The HTTP status of a failure `Status`.
    pub fn code(&self) -> Option<u16> {
        match self {
            ClientError::Status { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// 404 Not Found.
    pub fn is_not_found(&self) -> bool {
        self.code() == Some(404)
    }

    /// 409 Conflict (AlreadyExists or a stale resourceVersion).
    pub fn is_conflict(&self) -> bool {
        self.code() == Some(409)
    }

    /// A failure `Status` carrying this cause type in `details.causes`
    /// (e.g. `NamespaceTerminating`).
    pub fn has_cause(&self, cause: &str) -> bool {
        match self {
            ClientError::Status { status, .. } => status["details"]["causes"]
                .as_array()
                .is_some_and(|causes| causes.iter().any(|c| c["reason"] == cause)),
            _ => false,
        }
    }
}

/// Options of list and watch requests.
#[derive(Clone, Debug, Default)]
pub struct ListParams {
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// Ask for `PartialObjectMetadata` instead of whole objects.
    pub metadata_only: bool,
}

impl ListParams {
    fn query(&self) -> Vec<(&'static str, String)> {
        let mut query = Vec::new();
        if let Some(selector) = &self.field_selector {
            query.push(("fieldSelector", selector.clone()));
        }
        if let Some(selector) = &self.label_selector {
            query.push(("labelSelector", selector.clone()));
        }
        query
    }
}

/// A client over the in-process router.
#[derive(Clone)]
pub struct Client {
    router: Router,
    /// Its User-Agent, whose product names it in managedFields: the
    /// controllers upstream runs in kube-controller-manager say
    /// `kube-controller-manager`, those it runs in kube-apiserver
    /// (custom resource definitions) `kube-apiserver`.
    user_agent: &'static str,
    /// Who it is: its requests carry this user, set before they enter the
    /// router (a network client cannot).
    user: std::sync::Arc<UserInfo>,
    /// Who lists and watches: kube-controller-manager's shared informers
    /// list and watch as kube-controller-manager itself, whichever
    /// controller reads them.
    reader: std::sync::Arc<UserInfo>,
}

impl Client {
    /// A client of the controllers kube-controller-manager runs upstream,
    /// sending its requests through `router`.
    pub fn new(router: Router) -> Client {
        let user = std::sync::Arc::new(UserInfo::controller_manager());
        Client {
            router,
            user_agent: "kube-controller-manager/v1.32.0 (kapi)",
            reader: user.clone(),
            user,
        }
    }

    /// The same client acting as the service account `name` of
    /// `kube-system`, as kube-controller-manager's controllers act with
    /// `--use-service-account-credentials` (upstream's bootstrap policy binds
    /// each such account to its controller's role).
    pub fn as_service_account(&self, name: &str) -> Client {
        let mut user = UserInfo::new(
            &format!("system:serviceaccount:kube-system:{name}"),
            &[
                "system:serviceaccounts",
                "system:serviceaccounts:kube-system",
            ],
        );
        crate::user::add_authenticated(&mut user);
        Client {
            user: std::sync::Arc::new(user),
            ..self.clone()
        }
    }

    /// The same router reached with the loopback identity
    /// ([`Client::of_apiserver`]).
    pub fn as_apiserver(&self) -> Client {
        Client::of_apiserver(self.router.clone())
    }

    /// A client of the controllers kube-apiserver itself runs upstream.
    pub fn of_apiserver(router: Router) -> Client {
        let user = std::sync::Arc::new(UserInfo::apiserver());
        Client {
            router,
            user_agent: "kube-apiserver/v1.32.0 (kapi)",
            reader: user.clone(),
            user,
        }
    }

    /// Sends one request as `user`; the answer's status and body stream.
    async fn send(
        &self,
        user: &std::sync::Arc<UserInfo>,
        method: Method,
        uri: &str,
        content_type: &str,
        accept: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Body), ClientError> {
        let body = match body {
            Some(value) => Body::from(value.to_string()),
            None => Body::empty(),
        };
        let request = Request::builder()
            .extension(user.clone())
            .method(method)
            .uri(uri)
            .header(header::CONTENT_TYPE, content_type)
            .header(header::ACCEPT, accept)
            .header(header::USER_AGENT, self.user_agent)
            .body(body)
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        let response = self
            .router
            .clone()
            .oneshot(request)
            .await
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        let status = response.status();
        Ok((status, response.into_body()))
    }

    /// Sends one request and reads its JSON answer; a failure Status becomes an
    /// error.
    pub async fn request(
        &self,
        method: Method,
        uri: &str,
        content_type: &str,
        accept: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        self.request_as(&self.user, method, uri, content_type, accept, body)
            .await
    }

    /// [`Client::request`] as `user`.
    async fn request_as(
        &self,
        user: &std::sync::Arc<UserInfo>,
        method: Method,
        uri: &str,
        content_type: &str,
        accept: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        let (status, body) = self
            .send(user, method, uri, content_type, accept, body)
            .await?;
        let bytes = to_bytes(body, MAX_BODY)
            .await
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::Decode(format!("{e} (HTTP {status})")))?;
        if status.is_success() {
            Ok(value)
        } else {
            Err(ClientError::Status {
                code: status.as_u16(),
                message: value["message"].as_str().unwrap_or_default().to_owned(),
                status: value,
            })
        }
    }

    async fn json(
        &self,
        method: Method,
        uri: &str,
        body: Option<&Value>,
    ) -> Result<Value, ClientError> {
        self.request(method, uri, "application/json", "application/json", body)
            .await
    }

    /// GET of any path (discovery documents).
    pub async fn get_path(&self, path: &str) -> Result<Value, ClientError> {
        self.json(Method::GET, path, None).await
    }

    /// GET of one object as the reader: what upstream's controllers ask
    /// their informers' listers, which read with kube-controller-manager's
    /// identity.
    pub async fn read(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ClientError> {
        let uri = resource.path(namespace, Some(name));
        self.request_as(
            &self.reader,
            Method::GET,
            &uri,
            "application/json",
            "application/json",
            None,
        )
        .await
    }

    /// GET of one object.
    pub async fn get(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ClientError> {
        self.get_path(&resource.path(namespace, Some(name))).await
    }

    /// LIST, in one namespace or across all when `namespace` is `None`, as
    /// the reader.
    pub async fn list(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        params: &ListParams,
    ) -> Result<Value, ClientError> {
        let uri = with_query(&resource.path(namespace, None), &params.query());
        let accept = if params.metadata_only {
            METADATA_LIST
        } else {
            "application/json"
        };
        self.request_as(
            &self.reader,
            Method::GET,
            &uri,
            "application/json",
            accept,
            None,
        )
        .await
    }

    /// CREATE.
    pub async fn create(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        object: &Value,
    ) -> Result<Value, ClientError> {
        let uri = resource.path(namespace, None);
        self.json(Method::POST, &uri, Some(object)).await
    }

    /// UPDATE (PUT) of the object, or of its `subresource` when given.
    pub async fn update(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        object: &Value,
    ) -> Result<Value, ClientError> {
        let mut uri = resource.path(namespace, Some(name));
        if let Some(subresource) = subresource {
            uri.push('/');
            uri.push_str(subresource);
        }
        self.json(Method::PUT, &uri, Some(object)).await
    }

    /// PATCH with a JSON merge patch (`application/merge-patch+json`).
    pub async fn merge_patch(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        patch: &Value,
    ) -> Result<Value, ClientError> {
        let uri = resource.path(namespace, Some(name));
        self.request(
            Method::PATCH,
            &uri,
            "application/merge-patch+json",
            "application/json",
            Some(patch),
        )
        .await
    }

    /// PATCH (JSON merge patch) of an object's `/status`.
    pub async fn merge_patch_status(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        patch: &Value,
    ) -> Result<Value, ClientError> {
        let uri = format!("{}/status", resource.path(namespace, Some(name)));
        self.request(
            Method::PATCH,
            &uri,
            "application/merge-patch+json",
            "application/json",
            Some(patch),
        )
        .await
    }

    /// DELETE of one object with these DeleteOptions.
    pub async fn delete(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        name: &str,
        options: &Value,
    ) -> Result<Value, ClientError> {
        let uri = resource.path(namespace, Some(name));
        self.json(Method::DELETE, &uri, Some(options)).await
    }

    /// DELETECOLLECTION of everything in `namespace` (or everywhere).
    pub async fn delete_collection(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        options: &Value,
    ) -> Result<Value, ClientError> {
        let uri = resource.path(namespace, None);
        self.json(Method::DELETE, &uri, Some(options)).await
    }

    /// WATCH from `resource_version`, as the reader; the stream ends when the
    /// server ends it.
    pub async fn watch(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        params: &ListParams,
        resource_version: &str,
        timeout_seconds: u64,
    ) -> Result<WatchStream, ClientError> {
        let mut query = params.query();
        query.push(("watch", "true".into()));
        query.push(("resourceVersion", resource_version.to_owned()));
        query.push(("allowWatchBookmarks", "true".into()));
        query.push(("timeoutSeconds", timeout_seconds.to_string()));
        let uri = with_query(&resource.path(namespace, None), &query);
        let accept = if params.metadata_only {
            METADATA_ONLY
        } else {
            "application/json"
        };
        let (status, body) = self
            .send(
                &self.reader,
                Method::GET,
                &uri,
                "application/json",
                accept,
                None,
            )
            .await?;
        if !status.is_success() {
            let bytes = to_bytes(body, MAX_BODY)
                .await
                .map_err(|e| ClientError::Transport(e.to_string()))?;
            let value: Value = serde_json::from_slice(&bytes).unwrap_or(json!({}));
            return Err(ClientError::Status {
                code: status.as_u16(),
                message: value["message"].as_str().unwrap_or_default().to_owned(),
                status: value,
            });
        }
        Ok(WatchStream::new(body))
    }
}

fn with_query(path: &str, query: &[(&'static str, String)]) -> String {
    if query.is_empty() {
        return path.to_owned();
    }
    match serde_urlencoded::to_string(query) {
        Ok(encoded) => format!("{path}?{encoded}"),
        Err(_) => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let cm = Resource::new("", "v1", "configmaps", true);
        assert_eq!(
            cm.path(Some("a"), Some("b")),
            "/api/v1/namespaces/a/configmaps/b"
        );
        assert_eq!(cm.path(None, None), "/api/v1/configmaps");
        let ns = Resource::new("", "v1", "namespaces", false);
        assert_eq!(ns.path(Some("x"), Some("y")), "/api/v1/namespaces/y");
        let rs = Resource::new("apps", "v1", "replicasets", true);
        assert_eq!(rs.api_version(), "apps/v1");
        assert_eq!(
            with_query("/p", &[("fieldSelector", "metadata.name=a b".into())]),
            "/p?fieldSelector=metadata.name%3Da+b"
        );
    }
}
