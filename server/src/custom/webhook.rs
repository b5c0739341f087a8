//! Conversion webhooks of custom resources (`spec.conversion.strategy:
//! Webhook`): a `ConversionReview` (apiextensions.k8s.io/v1) POSTed over
//! HTTPS to the definition's URL, trusted through its `caBundle`, as
//! kube-apiserver sends it, with upstream's errors when the call or its
//! answer fails.
//!
//! Not yet: webhooks named by a Service reference (kapi routes to no
//! Service), `v1beta1` reviews, and the system's trusted roots when no
//! `caBundle` is given.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// How long a conversion may take, as upstream's default.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Where and how to reach a definition's conversion webhook.
pub struct Webhook {
    target: Result<Target, String>,
}

struct Target {
    host: String,
    port: u16,
    /// Path and query, with upstream's `timeout` parameter.
    path: String,
    url: String,
    tls: Arc<rustls::ClientConfig>,
}

impl Webhook {
    /// The webhook of a definition's `spec.conversion`, when its strategy
    /// is `Webhook`.
    pub fn of(conversion: &Value) -> Option<Webhook> {
        if conversion["strategy"] != "Webhook" {
            return None;
        }
        let config = &conversion["webhook"]["clientConfig"];
        Some(Webhook {
            target: Target::of(config),
        })
    }

    /// Converts `objects` (whole objects, with apiVersion and kind) to
    /// `desired` (`group/version`); `gvk` names the kind in errors as
    /// upstream names it (`example.com/v1, Kind=Widget`).
    pub async fn convert(
        &self,
        objects: Vec<Value>,
        desired: &str,
        gvk: &str,
    ) -> Result<Vec<Value>, String> {
        let failed = |e: String| format!("conversion webhook for {gvk} failed: {e}");
        let target = self.target.as_ref().map_err(|e| failed(e.clone()))?;
        let uid = uuid::Uuid::new_v4().to_string();
        let count = objects.len();
        let review = json!({
            "kind": "ConversionReview",
            "apiVersion": "apiextensions.k8s.io/v1",
            "request": { "uid": uid, "desiredAPIVersion": desired, "objects": objects },
        });
        let answer = tokio::time::timeout(TIMEOUT, target.post(review.to_string()))
            .await
            .map_err(|_| failed(format!("Post {:?}: context deadline exceeded", target.url)))?
            .map_err(|e| failed(format!("Post {:?}: {e}", target.url)))?;
        let review: Value = serde_json::from_slice(&answer)
            .map_err(|e| failed(format!("unable to decode the answer: {e}")))?;
        let response = &review["response"];
        if response.is_null() {
            return Err(failed("no response provided".into()));
        }
        if response["uid"] != uid.as_str() {
            return Err(failed(format!(
                "expected response uid {uid:?}, got {:?}",
                response["uid"].as_str().unwrap_or_default()
            )));
        }
        if response["result"]["status"] != "Success" {
            return Err(failed(
                response["result"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ));
        }
        let converted = response["convertedObjects"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if converted.len() != count {
            return Err(format!(
                "conversion webhook for {gvk} returned {} objects, expected {count}",
                converted.len()
            ));
        }
        for (i, object) in converted.iter().enumerate() {
            if object["apiVersion"] != desired {
                return Err(format!(
                    "conversion webhook for {gvk} returned invalid converted object at index {i}: invalid apiVersion {:?}, expected {desired:?}",
                    object["apiVersion"].as_str().unwrap_or_default()
                ));
            }
        }
        Ok(converted)
    }
}

impl Target {
    fn of(config: &Value) -> Result<Target, String> {
        let Some(url) = config["url"].as_str() else {
            return Err(
                "webhooks named by a service reference are not reached by kapi yet; give a url"
                    .into(),
            );
        };
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| format!("invalid url {url:?}: {e}"))?;
        if uri.scheme_str() != Some("https") {
            return Err(format!("url {url:?} does not use https"));
        }
        let host = uri
            .host()
            .ok_or_else(|| format!("url {url:?} has no host"))?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let path = if path.contains('?') {
            format!("{path}&timeout=30s")
        } else {
            format!("{path}?timeout=30s")
        };
        let mut roots = rustls::RootCertStore::empty();
        if let Some(bundle) = config["caBundle"].as_str() {
            let pem = base64::engine::general_purpose::STANDARD
                .decode(bundle)
                .map_err(|e| format!("invalid caBundle: {e}"))?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| format!("invalid caBundle: {e}"))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("invalid caBundle: {e}"))?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Target {
            host,
            port: uri.port_u16().unwrap_or(443),
            url: format!(
                "https://{}{path}",
                uri.authority().map_or("", |a| a.as_str())
            ),
            path,
            tls: Arc::new(tls),
        })
    }

    /// POSTs `body` (JSON) and gives the answer's body.
    async fn post(&self, body: String) -> Result<Bytes, String> {
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| {
                let what = match e.kind() {
                    std::io::ErrorKind::ConnectionRefused => {
                        "connect: connection refused".to_owned()
                    }
                    _ => e.to_string(),
                };
                format!("dial tcp {}:{}: {what}", self.host, self.port)
            })?;
        let name = ServerName::try_from(self.host.clone()).map_err(|e| e.to_string())?;
        let tls = tokio_rustls::TlsConnector::from(self.tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| format!("tls: {e}"))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
                .await
                .map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            // The connection ends with the one request it carries.
            let _ = connection.await;
        });
        let request = hyper::Request::post(self.path.as_str())
            .header(hyper::header::HOST, format!("{}:{}", self.host, self.port))
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(hyper::header::ACCEPT, "application/json, */*")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        if !status.is_success() {
            return Err(format!(
                "the server answered {status}: {}",
                String::from_utf8_lossy(&body)
            ));
        }
        Ok(body)
    }
}
