//! The router: discovery, health, OpenAPI and the one resource handler.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use tokio::sync::watch;

use crate::api_error::ApiError;
use crate::metrics::Metrics;
use crate::registry::Registry;
use crate::{discovery, endpoints, openapi};

/// Shared server state.
pub struct App {
    /// The generic registry.
    pub registry: Registry,
    /// Flips to `true` when the server shuts down; open watches end.
    pub shutdown: watch::Receiver<bool>,
    /// `host:port` clients use, for `/api`'s serverAddressByClientCIDRs.
    pub address: String,
    /// Request counters served at `/metrics`.
    pub metrics: Metrics,
    /// The OpenAPI documents, built on first use.
    pub openapi: openapi::OpenApiDocs,
}

/// Builds the router; testable without a socket via `tower::ServiceExt::oneshot`.
pub fn app(state: Arc<App>) -> Router {
    Router::new()
        .route("/api", get(discovery::core))
        .route("/api/", get(discovery::core))
        .route("/apis", get(discovery::groups))
        .route("/apis/", get(discovery::groups))
        .route("/api/{version}", get(discovery::core_version))
        .route("/apis/{group}", get(discovery::group))
        .route("/apis/{group}/{version}", get(discovery::group_version))
        .route("/api/{version}/{*rest}", any(endpoints::resource))
        .route("/apis/{group}/{version}/{*rest}", any(endpoints::resource))
        .route("/openapi/v2", get(openapi::v2))
        .route("/openapi/v3", get(openapi::index))
        .route("/openapi/v3/{*path}", get(openapi::group_version))
        .route("/version", get(discovery::version))
        .route("/version/", get(discovery::version))
        .route("/healthz", get(ok))
        .route("/livez", get(ok))
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics))
        .fallback(not_found)
        .with_state(state)
}

async fn ok() -> &'static str {
    "ok"
}

async fn ready(State(app): State<Arc<App>>) -> Response {
    if *app.shutdown.borrow() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down").into_response();
    }
    match app.registry.storage().ready().await {
        Ok(()) => "ok".into_response(),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("storage not ready: {e}"),
        )
            .into_response(),
    }
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    app.metrics.render()
}

async fn not_found() -> Response {
    ApiError::no_route().into_response()
}
