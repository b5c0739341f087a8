//! The router: discovery, health, OpenAPI and the one resource handler.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};

use crate::api_error::ApiError;
use crate::filters::Filters;
use crate::state::App;
use crate::{discovery, endpoints, health, openapi};

/// Builds the router; testable without a socket via `tower::ServiceExt::oneshot`.
pub fn app(state: Arc<App>) -> Router {
    let router = Router::new()
        .route("/api", get(discovery::core))
        .route("/api/", get(discovery::core))
        .route("/apis", get(discovery::groups))
        .route("/apis/", get(discovery::groups))
        .route("/api/{version}", get(discovery::core_version))
        .route("/api/{version}/", get(discovery::core_version))
        .route("/apis/{group}", get(discovery::group))
        .route("/apis/{group}/", get(discovery::group))
        .route("/apis/{group}/{version}", get(discovery::group_version))
        .route("/apis/{group}/{version}/", get(discovery::group_version))
        .route("/api/{version}/{*rest}", any(endpoints::resource))
        .route("/apis/{group}/{version}/{*rest}", any(endpoints::resource))
        .route("/openapi/v2", get(openapi_v2))
        .route("/openapi/v3", get(openapi_index))
        .route("/openapi/v3/{*path}", get(openapi_group_version))
        .route("/version", get(discovery::version))
        .route("/version/", get(discovery::version))
        .route("/healthz", get(health::healthz))
        .route("/healthz/{*name}", get(health::healthz_one))
        .route("/livez", get(health::livez))
        .route("/livez/{*name}", get(health::livez_one))
        .route("/readyz", get(health::readyz))
        .route("/readyz/{*name}", get(health::readyz_one))
        .route("/metrics", get(metrics))
        .route("/metrics/slis", get(metrics_slis))
        .route(
            "/.well-known/openid-configuration",
            get(openid_configuration),
        )
        .route("/openid/v1/jwks", get(jwks))
        .route(
            "/debug/api_priority_and_fairness/dump_priority_levels",
            get(|State(app): State<Arc<App>>| async move {
                crate::flowcontrol::debug::dump_priority_levels(&app.limiter)
            }),
        )
        .route(
            "/debug/api_priority_and_fairness/dump_queues",
            get(|State(app): State<Arc<App>>| async move {
                crate::flowcontrol::debug::dump_queues(&app.limiter)
            }),
        )
        .fallback(not_found);
    let filters = Filters {
        authenticator: state.authenticator.clone(),
        auditor: state.auditor.clone(),
        limiter: state.limiter.clone(),
        authorizer: state.authorizer.clone(),
        registry: state.registry.clone(),
    };
    // Group versions served elsewhere are passed on once the filters ran.
    let router = router.layer(axum::middleware::from_fn_with_state(
        state.remote.clone(),
        crate::aggregator::route,
    ));
    filters
        .wrap(router)
        .layer(axum::middleware::from_fn(no_cache_by_default))
        .with_state(state)
}

/// `Cache-Control: no-cache, private` on every answer that sets no policy of
/// its own, as kube-apiserver's filter chain adds it.
async fn no_cache_by_default(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .entry(axum::http::header::CACHE_CONTROL)
        .or_insert(axum::http::HeaderValue::from_static("no-cache, private"));
    response
}

async fn openapi_v2(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    openapi::v2(
        &app.openapi,
        &app.registry.scheme(),
        app.remote.openapi_v2(),
        &headers,
    )
}

async fn openapi_index(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    openapi::index(
        &app.openapi,
        &app.registry.scheme(),
        app.remote.openapi_paths(),
        &headers,
    )
}

async fn openapi_group_version(
    State(app): State<Arc<App>>,
    Path(path): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let scheme = app.registry.scheme();
    let docs = (&app.openapi, &scheme);
    openapi::group_version(docs, &path, &query, &headers)
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    app.metrics.render()
}

async fn metrics_slis(State(app): State<Arc<App>>) -> Response {
    app.metrics.render_slis()
}

/// The OpenID discovery document of the service account token issuer, as
/// kube-apiserver serves it (its keys at `/openid/v1/jwks` on this server).
async fn openid_configuration(State(app): State<Arc<App>>) -> Response {
    let issuer = app.authenticator.issuer();
    let algorithms = match issuer.algorithms(app.registry.storage().as_ref()).await {
        Ok(algorithms) => algorithms,
        Err(e) => return e.into_response(),
    };
    let body = serde_json::json!({
        "issuer": issuer.name(),
        "jwks_uri": format!("https://{}/openid/v1/jwks", app.address),
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": algorithms,
    });
    public_json(body, "application/json")
}

/// The keys tokens are verified with, as a JSON Web Key set.
async fn jwks(State(app): State<Arc<App>>) -> Response {
    let issuer = app.authenticator.issuer();
    match issuer.jwks(app.registry.storage().as_ref()).await {
        Ok(keys) => public_json(keys, "application/jwk-set+json"),
        Err(e) => e.into_response(),
    }
}

/// A JSON answer every client may cache for an hour, as upstream sends these.
fn public_json(body: serde_json::Value, content_type: &'static str) -> Response {
    let mut response = body.to_string().into_response();
    let headers = response.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static(content_type),
    );
    headers.insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("public, max-age=3600"),
    );
    response
}

async fn not_found() -> Response {
    ApiError::no_route().into_response()
}
