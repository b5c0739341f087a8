//! `/healthz`, `/livez` and `/readyz`: named checks, answered the way
//! k8s.io/apiserver's healthz package answers them.
//!
//! - `GET /livez` answers `ok` when every check passes; with `?verbose` one line
//!   per check (`[+]etcd ok`) and `livez check passed`; a failing check makes it a
//!   500 listing every check (`[-]etcd failed: reason withheld`) and ending in
//!   `livez check failed`.
//! - `?exclude=NAME` (repeatable) skips a check (`[+]NAME excluded: ok`); a name no
//!   check has is reported in a `warn:` line, as upstream.
//! - `GET /livez/NAME` runs one check: `ok`, or a 500 with its error; 404 for an
//!   unknown name.
//!
//! The checks, in kube-apiserver's order: `ping` (the server answers), `log`
//! (the log can be written), `etcd` (the store answers a read of its current
//! revision; kube-apiserver's name for its storage check, kept for tools that
//! look for it, whichever backend kapi runs on), for readiness
//! `informer-sync` (the server's own informers listed), then the post-start
//! hooks and plain checks the server registered ([`crate::post_start`]:
//! `poststarthook/<name>` until its work is done, `autoregister-completion`),
//! and for readiness last `shutdown` (fails once the server has begun
//! shutting down, so load balancers stop sending it requests).

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;

use crate::api_error::plain_text;
use crate::state::App;

/// Which of the three endpoints.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Healthz,
    Livez,
    Readyz,
}

impl Endpoint {
    fn name(self) -> &'static str {
        match self {
            Endpoint::Healthz => "healthz",
            Endpoint::Livez => "livez",
            Endpoint::Readyz => "readyz",
        }
    }

    /// The checks of this endpoint, in the order they are listed.
    fn checks(self, app: &App) -> Vec<Check> {
        let mut checks = vec![Check::Ping, Check::Log, Check::Etcd];
        if self == Endpoint::Readyz {
            checks.push(Check::InformerSync);
        }
        checks.extend(
            app.checks
                .states()
                .map(|(name, _)| Check::Registered(name.to_owned())),
        );
        if self == Endpoint::Readyz {
            checks.push(Check::Shutdown);
        }
        checks
    }
}

/// One named check.
#[derive(Clone, PartialEq, Eq)]
enum Check {
    Ping,
    Log,
    Etcd,
    InformerSync,
    /// A post-start hook or plain check the server registered.
    Registered(String),
    Shutdown,
}

impl Check {
    fn name(&self) -> &str {
        match self {
            Check::Ping => "ping",
            Check::Log => "log",
            Check::Etcd => "etcd",
            Check::InformerSync => "informer-sync",
            Check::Registered(name) => name,
            Check::Shutdown => "shutdown",
        }
    }

    async fn run(&self, app: &App) -> Result<(), String> {
        match self {
            Check::Ping => Ok(()),
            // The log goes to standard error: it must take a write.
            Check::Log => {
                use std::io::Write;
                std::io::stderr()
                    .flush()
                    .map_err(|e| format!("logging blocked: {e}"))
            }
            Check::InformerSync => app.checks.informers_synced(),
            Check::Registered(name) => app
                .checks
                .state_of(name)
                .unwrap_or_else(|| Err("not registered".to_owned())),
            Check::Etcd => app
                .registry
                .storage()
                .ready()
                .await
                .map_err(|e| format!("storage not ready: {e}")),
            Check::Shutdown => match *app.shutdown.borrow() {
                true => Err("process is shutting down".into()),
                false => Ok(()),
            },
        }
    }
}

/// `GET /healthz`.
pub async fn healthz(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    all(&app, Endpoint::Healthz, query.as_deref()).await
}

/// `GET /livez`.
pub async fn livez(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    all(&app, Endpoint::Livez, query.as_deref()).await
}

/// `GET /readyz`.
pub async fn readyz(State(app): State<Arc<App>>, RawQuery(query): RawQuery) -> Response {
    all(&app, Endpoint::Readyz, query.as_deref()).await
}

/// `GET /healthz/NAME`.
pub async fn healthz_one(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    one(&app, Endpoint::Healthz, &name).await
}

/// `GET /livez/NAME`.
pub async fn livez_one(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    one(&app, Endpoint::Livez, &name).await
}

/// `GET /readyz/NAME`.
pub async fn readyz_one(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    one(&app, Endpoint::Readyz, &name).await
}

/// The parameters that matter: `verbose` (present at all) and every `exclude`.
fn parse_query(query: Option<&str>) -> (bool, BTreeSet<String>) {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.unwrap_or_default()).unwrap_or_default();
    let verbose = pairs.iter().any(|(k, _)| k == "verbose");
    let excluded = pairs
        .into_iter()
        .filter(|(k, _)| k == "exclude")
        .map(|(_, v)| v)
        .collect();
    (verbose, excluded)
}

async fn all(app: &App, endpoint: Endpoint, query: Option<&str>) -> Response {
    let (verbose, mut excluded) = parse_query(query);
    let mut lines = String::new();
    let mut failed = false;
    for check in endpoint.checks(app) {
        if excluded.remove(check.name()) {
            lines.push_str(&format!("[+]{} excluded: ok\n", check.name()));
            continue;
        }
        let result = check.run(app).await;
        app.metrics
            .record_health(check.name(), endpoint.name(), result.is_ok());
        match result {
            Ok(()) => lines.push_str(&format!("[+]{} ok\n", check.name())),
            Err(e) => {
                // A post-start hook is expected to be pending for a moment
                // at start; only the server's own checks are worth a warning.
                if matches!(check, Check::Registered(_) | Check::InformerSync) {
                    tracing::debug!(check = check.name(), endpoint = endpoint.name(), error = %e, "health check pending");
                } else {
                    tracing::warn!(check = check.name(), endpoint = endpoint.name(), error = %e, "health check failed");
                }
                failed = true;
                lines.push_str(&format!("[-]{} failed: reason withheld\n", check.name()));
            }
        }
    }
    if !excluded.is_empty() {
        let names: Vec<String> = excluded.iter().map(|e| format!("{e:?}")).collect();
        lines.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            names.join(",")
        ));
    }
    if failed {
        lines.push_str(&format!("{} check failed\n", endpoint.name()));
        return plain_text(StatusCode::INTERNAL_SERVER_ERROR, lines);
    }
    if !verbose {
        return plain_text(StatusCode::OK, "ok".into());
    }
    lines.push_str(&format!("{} check passed\n", endpoint.name()));
    plain_text(StatusCode::OK, lines)
}

async fn one(app: &App, endpoint: Endpoint, name: &str) -> Response {
    let checks = endpoint.checks(app);
    let Some(check) = checks.iter().find(|c| c.name() == name) else {
        return plain_text(StatusCode::NOT_FOUND, "404 page not found\n".into());
    };
    let result = check.run(app).await;
    app.metrics
        .record_health(check.name(), endpoint.name(), result.is_ok());
    match result {
        Ok(()) => plain_text(StatusCode::OK, "ok".into()),
        Err(e) => plain_text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("internal server error: {e}\n"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_query;

    #[test]
    fn verbose_is_present_with_any_value_and_excludes_repeat() {
        let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
        assert_eq!(parse_query(None), (false, set(&[])));
        assert_eq!(parse_query(Some("verbose")), (true, set(&[])));
        assert_eq!(parse_query(Some("verbose=0")), (true, set(&[])));
        assert_eq!(
            parse_query(Some("exclude=ping&exclude=%20etcd&exclude=ping")),
            (false, set(&[" etcd", "ping"]))
        );
    }
}
