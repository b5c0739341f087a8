//! Conversion webhooks of custom resources (`spec.conversion.strategy:
//! Webhook`): a `ConversionReview` (apiextensions.k8s.io/v1) POSTed over
//! HTTPS to the definition's URL, trusted through its `caBundle`, as
//! kube-apiserver sends it, with upstream's errors when the call or its
//! answer fails.
//!
//! A webhook named by a Service is reached at its external name (an
//! ExternalName Service, as upstream resolves one) or at the address of one
//! of its endpoints (kapi routes to no Service IP), presenting the name
//! `<service>.<namespace>.svc` for TLS, as upstream names it.
//!
//! Not yet: `v1beta1` reviews, and the system's trusted roots when no
//! `caBundle` is given.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use serde_json::{Value, json};
use tokio::net::TcpStream;

use crate::controllers::client::{Client, Resource};

/// How long a conversion may take, as upstream's default.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Where and how to reach a definition's conversion webhook.
pub struct Webhook {
    target: Result<WebhookTarget, String>,
}

/// Where the webhook listens.
enum Address {
    /// A URL's host and port.
    Fixed { host: String, port: u16 },
    /// A Service's port, reached at one of its endpoints, looked up through
    /// `client` on each call.
    Service {
        namespace: String,
        name: String,
        port: i64,
        client: Client,
    },
}

struct WebhookTarget {
    address: Address,
    /// The name the webhook's certificate must carry.
    server_name: String,
    /// Path and query, with upstream's `timeout` parameter.
    path: String,
    url: String,
    tls: Arc<rustls::ClientConfig>,
}

impl Webhook {
    /// The webhook of a definition's `spec.conversion`, when its strategy
    /// is `Webhook`.
    /// `client` looks up the endpoints of a Service the webhook names.
    pub fn of(conversion: &Value, client: Option<&Client>) -> Option<Webhook> {
        if conversion["strategy"] != "Webhook" {
            return None;
        }
        let config = &conversion["webhook"]["clientConfig"];
        Some(Webhook {
            target: WebhookTarget::of(config, client),
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

impl WebhookTarget {
    fn of(config: &Value, client: Option<&Client>) -> Result<WebhookTarget, String> {
        let (address, server_name, path, url) = if let Some(url) = config["url"].as_str() {
            let uri: hyper::Uri = url
                .parse()
                .map_err(|e| format!("invalid url {url:?}: {e}"))?;
            if uri.scheme_str() != Some("https") {
                return Err(format!("url {url:?} does not use https"));
            }
            let host = uri
                .host()
                .ok_or_else(|| format!("url {url:?} has no host"))?
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            let path = with_timeout(uri.path_and_query().map_or("/", |p| p.as_str()));
            let url = format!(
                "https://{}{path}",
                uri.authority().map_or("", |a| a.as_str())
            );
            let port = uri.port_u16().unwrap_or(443);
            let address = Address::Fixed {
                host: host.clone(),
                port,
            };
            (address, host, path, url)
        } else {
            let service = &config["service"];
            let text = |key: &str| service[key].as_str().unwrap_or_default().to_owned();
            let (namespace, name) = (text("namespace"), text("name"));
            let client = client
                .ok_or("no client to look up the service with")?
                .clone();
            let port = service["port"].as_i64().unwrap_or(443);
            let path = with_timeout(service["path"].as_str().unwrap_or("/"));
            let host = format!("{name}.{namespace}.svc");
            let url = format!("https://{host}:{port}{path}");
            let address = Address::Service {
                namespace,
                name,
                port,
                client,
            };
            (address, host, path, url)
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
        Ok(WebhookTarget {
            address,
            server_name,
            url,
            path,
            tls: Arc::new(tls),
        })
    }

    /// The host and port to connect to.
    async fn connect_to(&self) -> Result<(String, u16), String> {
        match &self.address {
            Address::Fixed { host, port } => Ok((host.clone(), *port)),
            Address::Service {
                namespace,
                name,
                port,
                client,
            } => service_endpoint(client, namespace, name, *port).await,
        }
    }

    /// POSTs `body` (JSON) and gives the answer's body.
    async fn post(&self, body: String) -> Result<Bytes, String> {
        let (host, port) = self.connect_to().await?;
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| {
                let what = match e.kind() {
                    std::io::ErrorKind::ConnectionRefused => {
                        "connect: connection refused".to_owned()
                    }
                    _ => e.to_string(),
                };
                format!("dial tcp {host}:{port}: {what}")
            })?;
        let name = ServerName::try_from(self.server_name.clone()).map_err(|e| e.to_string())?;
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
            .header(hyper::header::HOST, self.server_name.as_str())
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

/// `path` with upstream's `timeout` query parameter.
fn with_timeout(path: &str) -> String {
    if path.contains('?') {
        format!("{path}&timeout=30s")
    } else {
        format!("{path}?timeout=30s")
    }
}

/// The address and port of an endpoint of Service `namespace/name` behind
/// its port `port`.
async fn service_endpoint(
    client: &Client,
    namespace: &str,
    name: &str,
    port: i64,
) -> Result<(String, u16), String> {
    let services = Resource::new("", "v1", "services", true);
    let service = client
        .get(&services, Some(namespace), name)
        .await
        .map_err(|_| format!("service \"{namespace}/{name}\" not found"))?;
    let service_port = service["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["port"].as_i64() == Some(port))
        .ok_or_else(|| format!("service \"{namespace}/{name}\" has no port {port}"))?;
    // An ExternalName service is its external name, at the service port.
    if service["spec"]["type"] == "ExternalName"
        && let Some(external) = service["spec"]["externalName"].as_str()
    {
        let port = u16::try_from(port).map_err(|_| format!("invalid port {port}"))?;
        return Ok((external.to_owned(), port));
    }
    let target = &service_port["targetPort"];
    let endpoints = Resource::new("", "v1", "endpoints", true);
    let endpoints = client
        .get(&endpoints, Some(namespace), name)
        .await
        .map_err(|_| format!("no endpoints for service \"{namespace}/{name}\""))?;
    for subset in endpoints["subsets"].as_array().into_iter().flatten() {
        let Some(address) = subset["addresses"][0]["ip"].as_str() else {
            continue;
        };
        let chosen = subset["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| match target {
                Value::String(named) => p["name"] == named.as_str(),
                Value::Number(n) => p["port"].as_i64() == n.as_i64(),
                _ => p["port"].as_i64() == Some(port),
            });
        if let Some(p) = chosen
            .and_then(|p| p["port"].as_u64())
            .and_then(|p| u16::try_from(p).ok())
        {
            return Ok((address.to_owned(), p));
        }
    }
    Err(format!(
        "no endpoints available for service \"{namespace}/{name}\""
    ))
}
