//! Serving: storage backend, listener, kubeconfig, bootstrap namespaces,
//! compaction and a clean shutdown on Ctrl-C / SIGTERM (in-flight requests finish,
//! watches end).

mod args;
mod backend;
mod connections;

pub use args::ServeArgs;
pub use backend::{Backend, COMPACTION_INTERVAL, Opened};
pub use connections::http2;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kapi_runtime::scheme::Scheme;
use kapi_storage::StorageError;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::app::{App, app};
use crate::registry::{Input, Registry, Scope, StorageMediaType, WriteOptions};

/// Namespaces every cluster has, created at start when missing.
const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// What `serve` needs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address to listen on; only loopback until TLS and authentication exist.
    pub listen: SocketAddr,
    /// Where the kubeconfig (and the embedded store) are written.
    pub data_dir: PathBuf,
    /// The store to serve from.
    pub backend: Backend,
    /// The format objects are written in.
    pub storage_media_type: StorageMediaType,
}

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address was asked for.
    #[error(
        "refusing to listen on {0}: kapi serves plain HTTP without authentication for now, \
         so it only listens on loopback addresses (e.g. 127.0.0.1:6443)"
    )]
    NotLoopback(SocketAddr),
    /// I/O failed (bind, kubeconfig).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The store could not be opened or reached.
    #[error("storage: {0}")]
    Storage(#[from] StorageError),
}

/// Serves `scheme` from the configured backend until Ctrl-C or SIGTERM.
pub async fn run(scheme: Scheme, opts: ServeOptions) -> Result<(), ServeError> {
    if !opts.listen.ip().is_loopback() {
        return Err(ServeError::NotLoopback(opts.listen));
    }
    let Opened { storage, compactor } = opts.backend.open().await?;
    let listener = TcpListener::bind(opts.listen).await?;
    let address = listener.local_addr()?;
    let registry =
        Registry::new(storage, Arc::new(scheme)).with_storage_media_type(opts.storage_media_type);
    bootstrap_namespaces(&registry).await;
    crate::admission::bootstrap(&registry).await;
    let kubeconfig = write_kubeconfig(&opts.data_dir, address)?;
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let state = Arc::new(App {
        registry,
        shutdown: shutdown_rx,
        address: address.to_string(),
        metrics: Default::default(),
        openapi: Default::default(),
    });
    let compaction = tokio::spawn(compactor);
    tracing::info!(%address, kubeconfig = %kubeconfig.display(), "kapi is serving");
    let store = match &opts.backend {
        Backend::Embedded(dir) => format!("embedded store in {}", dir.display()),
        Backend::Etcd(etcd) => {
            format!("etcd at {} under {}", etcd.endpoints.join(","), etcd.prefix)
        }
    };
    let store = format!("{store}, objects stored as {}", opts.storage_media_type);
    println!("kapi is serving at http://{address} ({store})");
    println!(
        "use it with: kubectl --kubeconfig {} get namespaces",
        kubeconfig.display()
    );
    connections::serve(listener, app(state), async move {
        shutdown_signal().await;
        tracing::info!("shutting down: finishing in-flight requests");
        let _ = shutdown_tx.send(true);
    })
    .await;
    compaction.abort();
    Ok(())
}

async fn bootstrap_namespaces(registry: &Registry) {
    let Some(entry) = registry.scheme().get("", "v1", "namespaces").copied() else {
        return;
    };
    for name in SYSTEM_NAMESPACES {
        let body = json!({ "metadata": { "name": name } });
        let created = match Input::from_value(&entry, body) {
            Ok(input) => {
                let scope = Scope::new(&entry, None);
                registry.create(scope, input, WriteOptions::default()).await
            }
            Err(e) => Err(e),
        };
        match created {
            Ok(_) => tracing::info!(namespace = name, "created system namespace"),
            Err(e) if e.code() == 409 => {}
            Err(e) => {
                tracing::warn!(namespace = name, error = ?e.0.message, "could not create system namespace")
            }
        }
    }
}

/// Writes `DIR/kubeconfig` pointing kubectl at this server.
pub fn write_kubeconfig(dir: &Path, address: SocketAddr) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kapi\n  cluster:\n    server: http://{address}\n\
         contexts:\n- name: kapi\n  context:\n    cluster: kapi\n    user: kapi\n    namespace: default\n\
         current-context: kapi\nusers:\n- name: kapi\n  user: {{}}\n"
    );
    std::fs::write(&path, text)?;
    // An absolute path, so the printed kubectl command works from anywhere.
    Ok(std::fs::canonicalize(&path).unwrap_or(path))
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
