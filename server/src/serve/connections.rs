//! Accepting connections the way kube-apiserver keeps them: `TCP_NODELAY` on every
//! socket, TLS (`serve::tls`), HTTP/1.1 with keep-alive, and HTTP/2 (chosen by
//! ALPN) with kube-apiserver's stream and flow-control settings. The client
//! certificate a connection presented rides on each of its requests as an
//! extension, for the x509 authenticator.
//!
//! `axum::serve` fixes hyper's HTTP/2 defaults (200 streams, 16 KiB frames, 1 MiB
//! stream windows), so the loop is written here on hyper-util's builder.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::authn::x509::PeerCertificates;

/// What kube-apiserver 1.32 announces in its HTTP/2 SETTINGS frame (read off the
/// reference server): 256 KiB per stream for the frame size and the initial window
/// (`resourceBody99Percentile`: most bodies fit in one frame), 100 concurrent
/// streams, and a connection window of one stream window per stream.
pub mod http2 {
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`.
    pub const MAX_CONCURRENT_STREAMS: u32 = 100;
    /// `SETTINGS_INITIAL_WINDOW_SIZE` and `SETTINGS_MAX_FRAME_SIZE`.
    pub const STREAM_WINDOW: u32 = 256 * 1024;
    /// The connection-level receive window.
    pub const CONNECTION_WINDOW: u32 = STREAM_WINDOW * MAX_CONCURRENT_STREAMS;
    /// `SETTINGS_MAX_HEADER_LIST_SIZE` (Go's default: 1 MiB plus 320 bytes).
    pub const MAX_HEADER_LIST_SIZE: u32 = (1 << 20) + 320;
}

/// How long a client may take to send a request's headers before the connection
/// is closed: kube-apiserver's `ReadHeaderTimeout` (measured on the reference
/// server: a request line without its blank line is dropped after 32 s).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);

/// Serves `app` over TLS with `tls` on `listener` until `shutdown` completes,
/// then stops accepting and waits for open connections to finish their requests
/// (watches end on the same signal through the app state).
pub async fn serve(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    app: Router,
    shutdown: impl Future<Output = ()>,
) {
    let builder = Arc::new(builder());
    let acceptor = TlsAcceptor::from(tls);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: back off instead of
                    // spinning; the listener stays open.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // TCP_NODELAY, as Go's net package sets it: a small watch frame must not
        // wait for the client's delayed ACK (Nagle), which otherwise adds up to
        // 40 ms to an event once a connection has carried load.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!(error = %e, "could not set TCP_NODELAY");
        }
        let (builder, acceptor, app) = (builder.clone(), acceptor.clone(), app.clone());
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            // Go bounds the handshake by the header timeout too.
            let tls = match tokio::time::timeout(HEADER_READ_TIMEOUT, acceptor.accept(tcp)).await {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    return;
                }
            };
            let certificates = tls
                .get_ref()
                .1
                .peer_certificates()
                .map(|chain| Arc::new(PeerCertificates::new(chain.to_vec())));
            let service = TowerToHyperService::new(app.map_request(
                move |request: hyper::Request<Incoming>| {
                    let mut request = request.map(Body::new);
                    request
                        .extensions_mut()
                        .insert(axum::extract::ConnectInfo(peer));
                    if let Some(certificates) = &certificates {
                        request.extensions_mut().insert(certificates.clone());
                    }
                    request
                },
            ));
            let connection = builder
                .serve_connection_with_upgrades(TokioIo::new(tls), service)
                .into_owned();
            if let Err(e) = watcher.watch(connection).await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// The HTTP/1.1 + HTTP/2 connection builder with kube-apiserver's settings.
fn builder() -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .keep_alive(true)
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(http2::MAX_CONCURRENT_STREAMS)
        .initial_stream_window_size(http2::STREAM_WINDOW)
        .initial_connection_window_size(http2::CONNECTION_WINDOW)
        .max_frame_size(http2::STREAM_WINDOW)
        .max_header_list_size(http2::MAX_HEADER_LIST_SIZE);
    builder
}
