//! The `extension-apiserver-authentication` ConfigMap of `kube-system`, as
//! kube-apiserver 1.32's cluster-authentication-info controller keeps it:
//! what an extension API server reads to trust this server's client
//! certificates (`client-ca-file`) and the requests it forwards as a front
//! proxy (`requestheader-client-ca-file`, `requestheader-allowed-names`
//! and the header names, as JSON lists).
//!
//! What is stored is merged with what this server needs, so that several
//! servers (or an owner's additions) can share it: CA bundles keep the
//! stored certificates first and add this server's, without duplicates
//! and without those expired more than five minutes ago; lists keep their
//! stored entries and add this server's. It is written at start, then
//! every minute and whenever the ConfigMap changes or goes, through the
//! router as `kube-apiserver` (an update, or a create when there is none).

use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::controllers::client::{Client, ListParams, Resource};
use crate::controllers::informer::{self, Source};

/// The ConfigMap's namespace and name.
pub const NAMESPACE: &str = "kube-system";
pub const NAME: &str = "extension-apiserver-authentication";

/// How often the ConfigMap is written again.
const RESYNC: Duration = Duration::from_secs(60);

/// What this server publishes.
#[derive(Clone, Debug, Default)]
pub struct Published {
    /// The CAs (PEM) of the client certificates it accepts.
    pub client_ca: Option<String>,
    /// The CA (PEM) of the front proxies it accepts requests from, with the
    /// names and headers those requests carry.
    pub request_header: Option<RequestHeader>,
}

/// The front-proxy settings (`--requestheader-*`).
#[derive(Clone, Debug, Default)]
pub struct RequestHeader {
    pub client_ca: String,
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_headers_prefix: Vec<String>,
}

impl RequestHeader {
    /// kubeadm's settings for the front-proxy client certificate it makes,
    /// which kapi makes too.
    pub fn kubeadm(client_ca: String) -> RequestHeader {
        RequestHeader {
            client_ca,
            allowed_names: vec!["front-proxy-client".into()],
            username_headers: vec!["X-Remote-User".into()],
            group_headers: vec!["X-Remote-Group".into()],
            extra_headers_prefix: vec!["X-Remote-Extra-".into()],
        }
    }
}

fn configmaps() -> Resource {
    Resource::new("", "v1", "configmaps", true)
}

/// Runs until `shutdown`: keeps the ConfigMap holding `published`.
/// `ready` (`start-cluster-authentication-info-controller`) is done once
/// the ConfigMap was first written (or found right).
pub async fn run(
    client: Client,
    published: Published,
    ready: Option<crate::post_start::Handle>,
    mut shutdown: watch::Receiver<bool>,
) {
    let ready = || {
        if let Some(ready) = &ready {
            ready.done();
        }
    };
    if published.client_ca.is_none() && published.request_header.is_none() {
        ready();
        return;
    }
    let mut tasks = JoinSet::new();
    let (tx, mut rx) = mpsc::channel(16);
    let source = Source {
        resource: configmaps(),
        namespace: Some(NAMESPACE.to_owned()),
        params: ListParams {
            field_selector: Some(format!("metadata.name={NAME}")),
            ..ListParams::default()
        },
    };
    informer::spawn::<(), Value>(&mut tasks, client.clone(), source, (), tx);
    let mut resync = tokio::time::interval(RESYNC);
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            _ = resync.tick() => write(&client, &published).await,
            event = rx.recv() => {
                if event.is_none() {
                    break;
                }
                while rx.try_recv().is_ok() {}
                write(&client, &published).await;
                ready();
            }
        }
    }
    tasks.abort_all();
}

/// Merges what is stored with `published` and writes it when it differs.
async fn write(client: &Client, published: &Published) {
    let stored = match client.get(&configmaps(), Some(NAMESPACE), NAME).await {
        Ok(stored) => Some(stored),
        Err(e) if e.is_not_found() => None,
        Err(e) => {
            tracing::warn!(error = %e, "could not read {NAMESPACE}/{NAME}");
            return;
        }
    };
    let old = stored
        .as_ref()
        .and_then(|s| s["data"].as_object())
        .cloned()
        .unwrap_or_default();
    let data = match merged(&old, published) {
        Ok(data) => data,
        Err(e) => {
            tracing::warn!(error = %e, "{NAMESPACE}/{NAME} holds what cannot be merged");
            return;
        }
    };
    if data == old && stored.is_some() {
        return;
    }
    let written = match stored {
        Some(mut stored) => {
            stored["data"] = Value::Object(data);
            client
                .update(&configmaps(), Some(NAMESPACE), NAME, None, &stored)
                .await
        }
        None => {
            let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": NAME, "namespace": NAMESPACE}, "data": data});
            client.create(&configmaps(), Some(NAMESPACE), &object).await
        }
    };
    match written {
        Ok(_) => {}
        Err(e) if e.is_conflict() => {}
        Err(e) => tracing::warn!(error = %e, "could not write {NAMESPACE}/{NAME}"),
    }
}

/// The data of the ConfigMap: `old` merged with `published` (upstream
/// keeps only the keys it knows).
fn merged(old: &Map<String, Value>, published: &Published) -> Result<Map<String, Value>, String> {
    let mut data = Map::new();
    let text = |key: &str| old.get(key).and_then(Value::as_str);
    if let Some(ca) = &published.client_ca {
        data.insert(
            "client-ca-file".into(),
            json!(bundle(text("client-ca-file"), ca)?),
        );
    }
    // The front-proxy settings, when this server has them or they are
    // stored already.
    let stored_ca = text("requestheader-client-ca-file");
    if published.request_header.is_some() || stored_ca.is_some() {
        let ours = published.request_header.clone().unwrap_or_default();
        let ca = match (stored_ca, published.request_header.as_ref()) {
            (stored, Some(ours)) => bundle(stored, &ours.client_ca)?,
            (Some(stored), None) => bundle(None, stored)?,
            (None, None) => String::new(),
        };
        data.insert("requestheader-client-ca-file".into(), json!(ca));
        for (key, values) in [
            ("requestheader-username-headers", &ours.username_headers),
            ("requestheader-group-headers", &ours.group_headers),
            (
                "requestheader-extra-headers-prefix",
                &ours.extra_headers_prefix,
            ),
            ("requestheader-allowed-names", &ours.allowed_names),
        ] {
            data.insert(key.into(), json!(list(text(key), values)?));
        }
    }
    Ok(data)
}

/// A JSON list of strings: `stored`'s entries, then `ours` not in them.
fn list(stored: Option<&str>, ours: &[String]) -> Result<String, String> {
    let mut all: Vec<String> = match stored {
        Some(text) if !text.is_empty() => {
            serde_json::from_str(text).map_err(|e| format!("{text}: {e}"))?
        }
        _ => Vec::new(),
    };
    for value in ours {
        if !all.contains(value) {
            all.push(value.clone());
        }
    }
    serde_json::to_string(&all).map_err(|e| e.to_string())
}

/// A PEM bundle: `stored`'s certificates, then `ours` not among them,
/// without those expired more than five minutes ago.
fn bundle(stored: Option<&str>, ours: &str) -> Result<String, String> {
    let mut ders: Vec<Vec<u8>> = Vec::new();
    for text in stored.into_iter().chain(std::iter::once(ours)) {
        let mut found = false;
        for der in rustls::pki_types::CertificateDer::pem_slice_iter(text.as_bytes()) {
            let der = der.map_err(|e| format!("a CA bundle that does not parse: {e}"))?;
            found = true;
            let bytes = der.as_ref().to_vec();
            if !ders.contains(&bytes) && !expired(&bytes) {
                ders.push(bytes);
            }
        }
        if !found && !text.trim().is_empty() {
            return Err("a CA bundle without certificates".into());
        }
    }
    Ok(ders
        .iter()
        .map(|der| crate::pki::pem("CERTIFICATE", der))
        .collect())
}

/// Whether a certificate ended more than five minutes ago.
fn expired(der: &[u8]) -> bool {
    let Ok((_, cert)) = x509_parser::parse_x509_certificate(der) else {
        return false;
    };
    let now = jiff::Timestamp::now().as_second();
    cert.validity().not_after.timestamp() < now - 5 * 60
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn lists_and_bundles_keep_what_is_stored_and_add_ours() {
        assert_eq!(
            list(Some(r#"["X-Other"]"#), &["X-Remote-User".into()]).unwrap(),
            r#"["X-Other","X-Remote-User"]"#
        );
        assert_eq!(list(None, &[]).unwrap(), "[]");
        assert!(list(Some("not json"), &[]).is_err());
        let dir = tempfile::tempdir().unwrap();
        let flags = crate::pki::TlsFlags::default();
        let at = crate::pki::Reachable {
            listen: std::net::IpAddr::from([127, 0, 0, 1]),
            service_ip: std::net::IpAddr::from([10, 0, 0, 1]),
        };
        let certificates = crate::pki::load(dir.path(), &flags, &at).unwrap();
        let ours = certificates.cluster_ca_pem.clone();
        let front = certificates
            .front_proxy
            .requestheader_ca_pem
            .clone()
            .unwrap();
        let both = bundle(Some(&front), &ours).unwrap();
        assert_eq!(both.matches("BEGIN CERTIFICATE").count(), 2);
        assert_eq!(
            bundle(None, &front).unwrap(),
            bundle(None, &both).unwrap()[..front.len()]
        );
        // Ours again adds nothing.
        assert_eq!(bundle(Some(&both), &ours).unwrap(), both);
        assert!(bundle(Some("junk"), &ours).is_err());
    }
}
