//! Whole requests through the server's router, in process, on an embedded
//! store: the method, the path (one of the server's kinds, objects and
//! subresources, then the input's text), the query, the content type and
//! accept headers, and the body are the input's. Nothing may panic, and a
//! request answered 4xx must leave the store as it was.

#![no_main]

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::Request;
use kapi_runtime::scheme::Scheme;
use kapi_server::registry::Registry;
use kapi_server::{App, app};
use kapi_storage::Storage;
use kapi_storage::embedded::EmbeddedStore;
use libfuzzer_sys::fuzz_target;
use tower::ServiceExt;

struct Harness {
    runtime: tokio::runtime::Runtime,
    router: Router,
    store: Arc<EmbeddedStore>,
    _dir: tempfile::TempDir,
    _shutdown: tokio::sync::watch::Sender<bool>,
}

/// Objects the paths address, made once.
const SEED: &[(&str, &str)] = &[
    ("/api/v1/namespaces", r#"{"metadata":{"name":"default"}}"#),
    (
        "/api/v1/namespaces/default/serviceaccounts",
        r#"{"metadata":{"name":"default"}}"#,
    ),
    (
        "/api/v1/namespaces/default/configmaps",
        r#"{"metadata":{"name":"c1","labels":{"a":"b"}},"data":{"k":"v"}}"#,
    ),
    (
        "/api/v1/namespaces/default/pods",
        r#"{"metadata":{"name":"p1"},"spec":{"containers":[{"name":"c","image":"i"}]}}"#,
    ),
    (
        "/apis/apps/v1/namespaces/default/deployments",
        r#"{"metadata":{"name":"d1"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}"#,
    ),
    ("/api/v1/nodes", r#"{"metadata":{"name":"n1"}}"#),
];

const PATHS: &[&str] = &[
    "/api/v1/namespaces/default/pods",
    "/api/v1/namespaces/default/pods/p1",
    "/api/v1/namespaces/default/pods/p1/status",
    "/api/v1/namespaces/default/pods/p1/eviction",
    "/api/v1/namespaces/default/pods/p1/binding",
    "/api/v1/namespaces/default/configmaps",
    "/api/v1/namespaces/default/configmaps/c1",
    "/apis/apps/v1/namespaces/default/deployments/d1",
    "/apis/apps/v1/namespaces/default/deployments/d1/scale",
    "/apis/apps/v1/namespaces/default/deployments",
    "/api/v1/nodes/n1",
    "/api/v1/namespaces/default/serviceaccounts/default/token",
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "/api/v1/namespaces/default/services",
    "/apis/batch/v1/namespaces/default/jobs",
    "/api/v1/pods",
    "",
];

const METHODS: &[&str] = &["GET", "POST", "PUT", "PATCH", "DELETE"];

const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "text/plain",
];

const ACCEPTS: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "*/*",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "text/html",
];

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let dir = tempfile::tempdir().expect("a directory");
        let store = Arc::new(EmbeddedStore::open(dir.path()).expect("a store"));
        let (tx, rx) = tokio::sync::watch::channel(false);
        let router = runtime.block_on(async {
            let mut scheme = Scheme::new();
            kapi_api_types::install(&mut scheme);
            let registry = Registry::new(store.clone(), Arc::new(scheme)).with_hooks(
                kapi_server::kinds::builtin(Default::default(), Default::default()),
            );
            kapi_server::serve::bootstrap_admission(&registry).await;
            let router = app(Arc::new(App {
                registry,
                shutdown: rx,
                address: "127.0.0.1:0".into(),
                metrics: Default::default(),
                authenticator: Default::default(),
                authorizer: Default::default(),
                limiter: Default::default(),
                auditor: None,
                openapi: Default::default(),
            }));
            for (path, body) in SEED {
                let request = Request::builder()
                    .method("POST")
                    .uri(*path)
                    .header("content-type", "application/json")
                    .body(Body::from(*body))
                    .expect("a request");
                let response = router.clone().oneshot(request).await.expect("an answer");
                assert!(
                    response.status().is_success(),
                    "seeding {path}: {}",
                    response.status()
                );
            }
            router
        });
        Harness {
            runtime,
            router,
            store,
            _dir: dir,
            _shutdown: tx,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let [method, content_type, accept, path, rest @ ..] = data else {
        return;
    };
    let h = harness();
    let method = METHODS[usize::from(*method) % METHODS.len()];
    let content_type = CONTENT_TYPES[usize::from(*content_type) % CONTENT_TYPES.len()];
    let accept = ACCEPTS[usize::from(*accept) % ACCEPTS.len()];
    let base = PATHS[usize::from(*path) % PATHS.len()];
    // The rest: a path suffix and query up to the first newline, then the
    // body.
    let (tail, body) = match rest.iter().position(|b| *b == b'\n') {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    let tail = String::from_utf8_lossy(tail);
    let uri = format!("{base}{tail}");
    let Ok(request) = Request::builder()
        .method(method)
        .uri(uri.as_str())
        .header("content-type", content_type)
        .header("accept", accept)
        .body(Body::from(body.to_vec()))
    else {
        return;
    };
    h.runtime.block_on(async {
        let before = h.store.current_revision().await.expect("a revision");
        let response = h.router.clone().oneshot(request).await.expect("an answer");
        let code = response.status();
        // Read the whole answer: streamed lists and encoders run too. A
        // watch is cut short.
        let body = response.into_body();
        let _ = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            to_bytes(body, 64 << 20),
        )
        .await;
        if code.is_client_error() {
            let after = h.store.current_revision().await.expect("a revision");
            assert_eq!(before, after, "{method} {uri} answered {code} yet wrote");
        }
    });
});
