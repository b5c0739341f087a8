//! ComponentStatus (`/api/v1/componentstatuses`): never stored; every read
//! probes what kube-apiserver 1.32 probes: kube-controller-manager and
//! kube-scheduler on their default secure ports on this machine
//! (`https://127.0.0.1:10257/healthz`, `:10259`, certificates unchecked) and
//! the storage backend (`etcd-0`, or `embedded-0`). The kind is deprecated
//! upstream (since 1.19) and still served, read-only.

use async_trait::async_trait;
use kapi_api_types::core::v1::ComponentStatus;
use kapi_api_types::core::v1::componentstatus::ComponentCondition;
use kapi_runtime::meta::ObjectMeta;
use kapi_storage::Storage;

use crate::api_error::{ApiError, ApiResult};
use crate::registry::Object;
use crate::registry::Scope;
use crate::registry::hooks::KindRest;

/// The deprecation warning kube-apiserver sends with every ComponentStatus read.
const DEPRECATED: &str = "v1 ComponentStatus is deprecated in v1.19+";

/// kube-controller-manager's default secure port.
const CONTROLLER_MANAGER_PORT: u16 = 10257;
/// kube-scheduler's default secure port.
const SCHEDULER_PORT: u16 = 10259;
/// How long a probe may take (upstream's probeTimeOut).
const PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);
/// How much of an answer becomes the message (upstream's
/// maxRespBodyLength).
const MAX_BODY: usize = 10 * 1024;

/// Upstream's HTTP probe of `https://127.0.0.1:<port>/healthz`, its
/// certificate unchecked: `True` with the body on a 2xx (`Unknown` on a
/// redirect, which it does not follow), `False`
/// with why otherwise (Go's words for a failed request: `Get "<url>":
/// dial tcp ...: connect: connection refused`).
async fn probe(port: u16) -> (&'static str, Option<String>, Option<String>) {
    use http_body_util::BodyExt;
    let url = format!("https://127.0.0.1:{port}/healthz");
    let failed = |why: String| ("False", Some(why), None);
    let trust = crate::tls_client::Trust {
        ca_bundle: Vec::new(),
        insecure: true,
    };
    let transport = match crate::tls_client::Transport::new("127.0.0.1", &trust, None) {
        Ok(transport) => transport,
        Err(e) => return failed(format!("Get {url:?}: {e}")),
    };
    let request = match hyper::Request::get(&url)
        .header(hyper::header::USER_AGENT, "kube-probe/1.32")
        .body(axum::body::Body::empty())
    {
        Ok(request) => request,
        Err(e) => return failed(format!("Get {url:?}: {e}")),
    };
    let answer = async {
        let response = transport.send(request).await?;
        let code = response.status().as_u16();
        // Read up to upstream's limit; the rest is left unread.
        let mut body = response.into_body();
        let mut read = Vec::new();
        while read.len() < MAX_BODY {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        read.extend_from_slice(&data);
                    }
                }
                Some(Err(e)) => return Err(e.to_string()),
                None => break,
            }
        }
        read.truncate(MAX_BODY);
        Ok::<_, String>((code, read))
    };
    match tokio::time::timeout(PROBE_TIMEOUT, answer).await {
        Err(_) => failed(format!(
            "Get {url:?}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        )),
        Ok(Err(e)) => failed(format!("Get {url:?}: {e}")),
        Ok(Ok((code, body))) if (200..300).contains(&code) => (
            "True",
            Some(String::from_utf8_lossy(&body).into_owned()),
            None,
        ),
        // Upstream's probe does not follow redirects: a Warning, which
        // reads as Unknown.
        Ok(Ok((code, body))) if (300..400).contains(&code) => (
            "Unknown",
            Some(format!(
                "Probe terminated redirects, Response body: {}",
                String::from_utf8_lossy(&body)
            )),
            None,
        ),
        Ok(Ok((code, _))) => failed(format!("HTTP probe failed with statuscode: {code}")),
    }
}

/// The core `componentstatuses` resource, read from probes.
pub struct ComponentStatusRest;

#[async_trait]
impl KindRest for ComponentStatusRest {
    fn is_stored(&self) -> bool {
        false
    }

    /// The components, probed now, at once, in upstream's order.
    async fn read_all(
        &self,
        storage: &dyn Storage,
        _scope: Scope<'_>,
    ) -> Option<ApiResult<Vec<Object>>> {
        let store = async {
            match storage.ready().await {
                Ok(()) => ("True", Some("ok".to_owned()), None),
                Err(e) => ("False", None, Some(e.to_string())),
            }
        };
        let (controller_manager, scheduler, store) =
            tokio::join!(probe(CONTROLLER_MANAGER_PORT), probe(SCHEDULER_PORT), store);
        let components = [
            ("controller-manager".to_owned(), controller_manager),
            ("scheduler".to_owned(), scheduler),
            (format!("{}-0", storage.backend_name()), store),
        ];
        let objects = components
            .into_iter()
            .map(|(name, (status, message, error))| {
                Object::new(Box::new(ComponentStatus {
                    metadata: ObjectMeta {
                        name: Some(name),
                        ..ObjectMeta::default()
                    },
                    conditions: Some(vec![ComponentCondition {
                        type_: "Healthy".to_owned(),
                        status: status.to_owned(),
                        message,
                        error,
                    }]),
                }))
            })
            .collect();
        Some(Ok(objects))
    }

    /// An unknown component is upstream's plain 500.
    fn missing(&self, name: &str) -> Option<ApiError> {
        Some(ApiError::plain(format!("Component not found: {name}")))
    }

    fn read_warning(&self) -> Option<&'static str> {
        Some(DEPRECATED)
    }
}
