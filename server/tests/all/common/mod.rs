//! The HTTP harness shared by the tests: the router over a fresh embedded store.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Request, StatusCode, header};
use kapi_runtime::scheme::Scheme;
use kapi_server::registry::Registry;
use kapi_server::stored::StorageMediaType;
use kapi_server::{App, app};
use kapi_storage::embedded::EmbeddedStore;
use serde_json::{Value, json};
use tower::ServiceExt;

/// A router over a fresh embedded store with the built-in kinds and a `default`
/// namespace.
pub struct Harness {
    pub router: Router,
    pub store: Arc<EmbeddedStore>,
    /// The registry behind the router (its loopback reads).
    pub registry: Registry,
    _shutdown: tokio::sync::watch::Sender<bool>,
    _dir: tempfile::TempDir,
}

/// Starts a harness.
pub async fn harness() -> Harness {
    harness_with(|_| {}).await
}

/// Starts a harness whose scheme `extra` may extend (kinds of the test's own).
pub async fn harness_with(extra: impl FnOnce(&mut Scheme)) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    harness_on(store, dir, StorageMediaType::default(), extra).await
}

/// Starts a harness writing objects as `media_type`.
pub async fn harness_stored_as(media_type: StorageMediaType) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    harness_on(store, dir, media_type, |_| {}).await
}

/// Starts a harness on `store` (creating `default` and its `default`
/// ServiceAccount unless they exist).
pub async fn harness_on(
    store: Arc<EmbeddedStore>,
    dir: tempfile::TempDir,
    media_type: StorageMediaType,
    extra: impl FnOnce(&mut Scheme),
) -> Harness {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    extra(&mut scheme);
    let registry = Registry::new(store.clone(), Arc::new(scheme))
        .with_storage_media_type(media_type)
        .with_admission(kapi_server::admission_plugins::builtin())
        .with_hooks(kapi_server::kinds::builtin(
            Default::default(),
            media_type,
            Default::default(),
        ));
    kapi_server::serve::bootstrap_admission(&registry).await;
    let (tx, rx) = tokio::sync::watch::channel(false);
    let router = app(Arc::new(App {
        registry: registry.clone(),
        shutdown: rx,
        address: "127.0.0.1:0".into(),
        metrics: Default::default(),
        authenticator: Default::default(),
        authorizer: Default::default(),
        limiter: Default::default(),
        auditor: None,
        openapi: Default::default(),
        remote: Default::default(),
        checks: Default::default(),
    }));
    let h = Harness {
        router,
        store,
        registry,
        _shutdown: tx,
        _dir: dir,
    };
    let (code, _) = h
        .call(
            "POST",
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}),
        )
        .await;
    assert!(
        code == StatusCode::CREATED || code == StatusCode::CONFLICT,
        "{code}"
    );
    // The service account controller's work: pods need their account.
    h.call(
        "POST",
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}),
    )
    .await;
    h
}

impl Harness {
    /// The same store behind a new router writing `media_type` (a restart with
    /// another `--storage-media-type`).
    pub async fn restart_stored_as(self, media_type: StorageMediaType) -> Harness {
        let Harness { store, _dir, .. } = self;
        harness_on(store, _dir, media_type, |_| {}).await
    }

    /// Sends one request; the body comes back as JSON, with the `Warning`
    /// headers.
    pub async fn send_warned(
        &self,
        method: &str,
        uri: &str,
        content_type: &str,
        body: &str,
    ) -> (StatusCode, Value, Vec<String>) {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(body.to_owned()))
            .unwrap();
        let response = self.router.clone().oneshot(request).await.unwrap();
        let code = response.status();
        let warnings = response
            .headers()
            .get_all("warning")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect();
        let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (code, value, warnings)
    }

    /// Sends one request; the body comes back as bytes, with the content type.
    pub async fn send_raw(
        &self,
        method: &str,
        uri: &str,
        content_type: &str,
        body: Vec<u8>,
        accept: Option<&str>,
    ) -> (StatusCode, Vec<u8>, Option<String>) {
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::CONTENT_TYPE, content_type);
        if let Some(accept) = accept {
            request = request.header(header::ACCEPT, accept);
        }
        let response = self
            .router
            .clone()
            .oneshot(request.body(Body::from(body)).unwrap())
            .await
            .unwrap();
        let code = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_owned());
        let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (code, bytes.to_vec(), content_type)
    }

    /// Sends one request; the body comes back as JSON (or a JSON string).
    pub async fn send(
        &self,
        method: &str,
        uri: &str,
        content_type: &str,
        body: Vec<u8>,
        accept: Option<&str>,
    ) -> (StatusCode, Value, Option<String>) {
        let (code, bytes, content_type) =
            self.send_raw(method, uri, content_type, body, accept).await;
        let value = serde_json::from_slice(&bytes)
            .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        (code, value, content_type)
    }

    /// Sends JSON.
    pub async fn call(&self, method: &str, uri: &str, body: Value) -> (StatusCode, Value) {
        let body = if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        };
        let (code, value, _) = self.send(method, uri, "application/json", body, None).await;
        (code, value)
    }

    /// How many items a list has.
    pub async fn count(&self, uri: &str) -> usize {
        let (_, list) = self.call("GET", uri, Value::Null).await;
        list["items"].as_array().map_or(0, Vec::len)
    }
}
