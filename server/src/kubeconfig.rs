//! Another cluster's API, named by a kubeconfig file: where it is, how it is
//! trusted and who this server is to it (the current context's cluster and
//! user, as client-go's loading rules read them), and a client that sends
//! it JSON. An extension server asks the cluster it extends who its users
//! are (`--authentication-kubeconfig`) and what they may do
//! (`--authorization-kubeconfig`) through one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::body::Body;
use base64::Engine;
use http_body_util::BodyExt;
use serde::Deserialize;
use serde_json::Value;

use crate::tls_client::{Identity, Transport, Trust};

/// The most of an answer read.
const MAX_BODY: usize = 16 << 20;

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct File {
    #[serde(default)]
    clusters: Vec<Named<Cluster>>,
    #[serde(default)]
    users: Vec<Named<User>>,
    #[serde(default)]
    contexts: Vec<Named<Context>>,
    #[serde(default)]
    current_context: String,
}

#[derive(Deserialize)]
struct Named<T> {
    name: String,
    #[serde(alias = "cluster", alias = "user", alias = "context")]
    item: T,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    server: String,
    #[serde(default)]
    certificate_authority: Option<PathBuf>,
    #[serde(default)]
    certificate_authority_data: Option<String>,
    #[serde(default)]
    insecure_skip_tls_verify: bool,
    #[serde(default)]
    tls_server_name: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct User {
    #[serde(default)]
    client_certificate: Option<PathBuf>,
    #[serde(default)]
    client_certificate_data: Option<String>,
    #[serde(default)]
    client_key: Option<PathBuf>,
    #[serde(default)]
    client_key_data: Option<String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default, rename = "tokenFile")]
    token_file: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Context {
    cluster: String,
    #[serde(default)]
    user: String,
}

/// A cluster's API as a kubeconfig names it.
#[derive(Clone)]
pub struct RemoteApi {
    /// `https://host:port`, without a trailing slash.
    server: String,
    token: Option<String>,
    transport: Transport,
}

impl std::fmt::Debug for RemoteApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteApi")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// What went wrong reading a kubeconfig or talking to its cluster.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RemoteError(pub String);

impl RemoteApi {
    /// The current context of the kubeconfig at `path`. Files it names
    /// (certificates, keys, a token) are read relative to its directory.
    pub fn from_file(path: &Path) -> Result<RemoteApi, RemoteError> {
        let fail = |e: &dyn std::fmt::Display| RemoteError(format!("{}: {e}", path.display()));
        let text = std::fs::read_to_string(path).map_err(|e| fail(&e))?;
        let file: File = serde_saphyr::from_str(&text).map_err(|e| fail(&e))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let context = file
            .contexts
            .iter()
            .find(|c| c.name == file.current_context)
            .or(file.contexts.first())
            .map(|c| &c.item)
            .ok_or_else(|| fail(&"no context"))?;
        let cluster = file
            .clusters
            .iter()
            .find(|c| c.name == context.cluster)
            .map(|c| &c.item)
            .ok_or_else(|| fail(&format!("no cluster {:?}", context.cluster)))?;
        let default_user = User::default();
        let user = file
            .users
            .iter()
            .find(|u| u.name == context.user)
            .map_or(&default_user, |u| &u.item);
        let inline = |data: &Option<String>,
                      file: &Option<PathBuf>|
         -> Result<Option<Vec<u8>>, RemoteError> {
            if let Some(data) = data {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(data.trim())
                    .map_err(|e| fail(&e))?;
                return Ok(Some(decoded));
            }
            match file {
                Some(file) => std::fs::read(base.join(file))
                    .map(Some)
                    .map_err(|e| fail(&e)),
                None => Ok(None),
            }
        };
        let ca = inline(
            &cluster.certificate_authority_data,
            &cluster.certificate_authority,
        )?;
        let cert = inline(&user.client_certificate_data, &user.client_certificate)?;
        let key = inline(&user.client_key_data, &user.client_key)?;
        let token = match (&user.token, &user.token_file) {
            (Some(token), _) => Some(token.clone()),
            (None, Some(file)) => Some(
                std::fs::read_to_string(base.join(file))
                    .map_err(|e| fail(&e))?
                    .trim()
                    .to_owned(),
            ),
            (None, None) => None,
        };
        let uri: hyper::Uri = cluster.server.parse().map_err(|e| fail(&e))?;
        let host = uri.host().ok_or_else(|| fail(&"the server has no host"))?;
        let server_name = cluster.tls_server_name.clone().unwrap_or_else(|| {
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned()
        });
        let identity = match (cert, key) {
            (Some(cert), Some(key)) => Some(Identity {
                cert_pem: String::from_utf8_lossy(&cert).into_owned(),
                key_pem: String::from_utf8_lossy(&key).into_owned(),
            }),
            _ => None,
        };
        let trust = Trust {
            ca_bundle: ca.unwrap_or_default(),
            insecure: cluster.insecure_skip_tls_verify,
        };
        let transport =
            Transport::new(&server_name, &trust, identity.as_ref()).map_err(|e| fail(&e))?;
        Ok(RemoteApi {
            server: cluster.server.trim_end_matches('/').to_owned(),
            token,
            transport,
        })
    }

    /// Sends `body` (if any) to `path` with `method`, within `timeout`:
    /// the answer's status and JSON body (`Null` when it is not JSON).
    pub async fn json(
        &self,
        method: hyper::Method,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<(u16, Value), RemoteError> {
        let exchange = async {
            let mut request = hyper::Request::builder()
                .method(method)
                .uri(format!("{}{path}", self.server))
                .header(hyper::header::ACCEPT, "application/json");
            if let Some(token) = &self.token {
                request = request.header(hyper::header::AUTHORIZATION, format!("Bearer {token}"));
            }
            let body = match body {
                Some(body) => {
                    request = request.header(hyper::header::CONTENT_TYPE, "application/json");
                    Body::from(body.to_string())
                }
                None => Body::empty(),
            };
            let request = request.body(body).map_err(|e| RemoteError(e.to_string()))?;
            let answer = self.transport.send(request).await.map_err(RemoteError)?;
            let status = answer.status().as_u16();
            let bytes = http_body_util::Limited::new(answer.into_body(), MAX_BODY)
                .collect()
                .await
                .map_err(|e| RemoteError(e.to_string()))?
                .to_bytes();
            Ok((
                status,
                serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            ))
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| RemoteError(format!("{path}: context deadline exceeded")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_context_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(dir.path().join("token"), "secret\n").unwrap();
        std::fs::write(
            &path,
            "apiVersion: v1\nkind: Config\nclusters:\n- name: a\n  cluster:\n    server: https://127.0.0.1:6443/\n    insecure-skip-tls-verify: true\n\
             - name: b\n  cluster:\n    server: https://10.0.0.1:443\n\
             contexts:\n- name: one\n  context:\n    cluster: b\n- name: two\n  context:\n    cluster: a\n    user: u\n\
             current-context: two\nusers:\n- name: u\n  user:\n    tokenFile: token\n",
        )
        .unwrap();
        let api = RemoteApi::from_file(&path).unwrap();
        assert_eq!(api.server, "https://127.0.0.1:6443");
        assert_eq!(api.token.as_deref(), Some("secret"));
    }
}
