//! The connection to etcd: TLS with client certificates, an endpoint with
//! nothing behind it, and etcd going away and coming back.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod etcd_support;

use std::time::{Duration, Instant};

use bytes::Bytes;
use etcd_support::{EtcdCluster, TestCerts, etcd_available};
use futures::StreamExt;
use kapi_storage::etcd::{EtcdOptions, EtcdStore, EtcdTls};
use kapi_storage::{Storage, StorageError, WatchEvent};

/// Long enough for a loaded CI machine; only failing tests wait this long.
const WAIT: Duration = Duration::from_secs(20);

fn b(value: &str) -> Bytes {
    Bytes::copy_from_slice(value.as_bytes())
}

/// With etcd gone, calls fail with Unavailable in bounded time and an open
/// watch ends with an error; when it is back, the same store serves again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_down_is_unavailable_and_the_store_recovers() {
    if !etcd_available() {
        return;
    }
    let mut etcd = EtcdCluster::single().await;
    let options = EtcdOptions {
        request_timeout: Duration::from_secs(2),
        ..EtcdOptions::new(etcd.endpoints())
    };
    let store = EtcdStore::connect(options).await.unwrap();
    let mut w = store.watch("/registry/d/", 0, None).await.unwrap();
    etcd.kill(0);

    let item = tokio::time::timeout(WAIT, w.next())
        .await
        .expect("watch did not end");
    assert!(
        matches!(item, Some(Err(StorageError::Unavailable(_)))),
        "{item:?}"
    );
    let started = Instant::now();
    let err = store.create("/registry/d/x", b("x")).await.unwrap_err();
    assert!(matches!(err, StorageError::Unavailable(_)), "{err:?}");
    assert!(started.elapsed() < WAIT, "took {:?}", started.elapsed());
    assert!(matches!(
        store.ready().await,
        Err(StorageError::Unavailable(_))
    ));

    etcd.spawn(0);
    etcd.wait_until_answering().await;
    let deadline = Instant::now() + WAIT;
    while store.ready().await.is_err() {
        assert!(Instant::now() < deadline, "store did not recover");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    store.create("/registry/d/x", b("x")).await.unwrap();
}

#[tokio::test]
async fn connect_to_nothing_fails_in_bounded_time() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let options = EtcdOptions {
        request_timeout: Duration::from_secs(1),
        ..EtcdOptions::new([format!("http://127.0.0.1:{port}")])
    };
    let started = Instant::now();
    let result = EtcdStore::connect(options).await;
    assert!(matches!(result, Err(StorageError::Unavailable(_))));
    assert!(started.elapsed() < WAIT);
}

/// A cluster that requires client certificates (as kubeadm's): the store
/// connects with the CA and a client certificate, reads, writes and watches;
/// without a certificate, or with half of one, it fails with a clear error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_client_certificates() {
    if !etcd_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(certs) = TestCerts::make(dir.path()) else {
        return;
    };
    let etcd = EtcdCluster::single_tls(&certs).await;
    let tls = EtcdTls {
        ca_file: certs.ca.clone(),
        cert_file: Some(certs.client_cert.clone()),
        key_file: Some(certs.client_key.clone()),
    };
    let options = |tls: EtcdTls| EtcdOptions {
        tls: Some(tls),
        request_timeout: Duration::from_secs(3),
        ..EtcdOptions::new(etcd.endpoints())
    };
    let store = EtcdStore::connect(options(tls.clone())).await.unwrap();
    let r0 = store.current_revision().await.unwrap();
    let mut w = store.watch("/registry/tls/", r0, None).await.unwrap();
    let created = store.create("/registry/tls/a", b("a")).await.unwrap();
    assert_eq!(
        store.get("/registry/tls/a").await.unwrap(),
        Some(created.clone())
    );
    let event = tokio::time::timeout(WAIT, w.next()).await.unwrap();
    assert_eq!(event.unwrap().unwrap(), WatchEvent::Added(created));

    let anonymous = EtcdTls {
        cert_file: None,
        key_file: None,
        ..tls.clone()
    };
    let refused = EtcdStore::connect(options(anonymous)).await.err();
    eprintln!("without a client certificate: {refused:?}");
    assert!(
        matches!(refused, Some(StorageError::Unavailable(_))),
        "{refused:?}"
    );
    let plain = EtcdOptions {
        endpoints: vec![etcd.endpoint(0).replace("https://", "http://")],
        ..options(tls.clone())
    };
    let err = EtcdStore::connect(plain).await.err();
    assert!(
        matches!(&err, Some(StorageError::Unavailable(m)) if m.contains("HTTPS")),
        "{err:?}"
    );
    let half = EtcdTls {
        key_file: None,
        ..tls
    };
    let err = EtcdStore::connect(options(half)).await.err();
    assert!(
        matches!(&err, Some(StorageError::Unavailable(m)) if m.contains("certificate and its key")),
        "{err:?}"
    );
}
