//! The etcd backend: the [`Storage`] contract on the etcd v3 API, so that
//! several kapi replicas can serve one etcd cluster, as kube-apiservers do.
//!
//! The mapping is Kubernetes' own (k8s.io/apiserver's `storage/etcd3`): keys as
//! the server names them (see [`EtcdOptions::prefix`] for other prefixes),
//! values stored as given, resourceVersion = etcd's mod revision (never inside
//! the value), writes as transactions comparing revisions, lists as ranges at a
//! pinned revision, watches as etcd watches with previous values.
//!
//! Every call is bounded by [`EtcdOptions::request_timeout`]: without quorum a
//! request fails with [`StorageError::Unavailable`] instead of hanging. The
//! client reconnects by itself; a watch whose stream breaks ends with an
//! `Unavailable` item, so that its reader lists again rather than missing events.

mod batch;
mod call;
mod compaction;
mod feed;
mod keys;
mod lease;
mod list;
mod watch;
mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use etcd_client::{Client, ConnectOptions, GetOptions, KvClient, TlsOptions, Txn, WatchClient};

use self::call::{Failure, Repeat, bounded};
pub use self::compaction::{
    COMPACT_REV_KEY, CompactionRound, Compactor, DEFAULT_COMPACTION_INTERVAL, run_compactor,
};
use self::keys::KeyMap;
use crate::{
    Feed, KeyValue, ListOptions, ListResult, Predicate, Storage, StorageError, WatchStream,
};

/// How to reach an etcd cluster and where kapi's keys live in it.
#[derive(Clone, Debug)]
pub struct EtcdOptions {
    /// Client URLs of the members, e.g. `http://127.0.0.1:2379`; `https://`
    /// ones need [`EtcdOptions::tls`]. Requests are balanced over all of them,
    /// so one member going away does not stop kapi.
    pub endpoints: Vec<String>,
    /// Where the server's `/registry/...` keys are stored (Kubernetes'
    /// `--etcd-prefix`). Default `/registry`: keys are stored exactly as given,
    /// so an etcd dump reads like a Kubernetes one. With another prefix, say
    /// `/cluster-b`, the leading `/registry` segment of each key is replaced by
    /// it (`/registry/pods/ns/a` is stored at `/cluster-b/pods/ns/a`), so that
    /// several kapi clusters can share one etcd without seeing each other's
    /// objects. Keys outside `/registry` (tests, tools) are stored as given.
    pub prefix: String,
    /// Client certificates, for clusters that require them (as kubeadm's do).
    pub tls: Option<EtcdTls>,
    /// The longest any single etcd call may take (connecting included); past it
    /// the call fails with [`StorageError::Unavailable`]. Default 10 s.
    pub request_timeout: Duration,
    /// How often an idle connection with open watches is pinged, so that a
    /// member that vanished without closing the connection is noticed (its
    /// watches then end with `Unavailable`). etcd refuses pings more often than
    /// every 5 s. Default 30 s, as kube-apiserver.
    pub keep_alive_interval: Duration,
}

impl Default for EtcdOptions {
    fn default() -> Self {
        EtcdOptions {
            endpoints: Vec::new(),
            prefix: "/registry".to_owned(),
            tls: None,
            request_timeout: Duration::from_secs(10),
            keep_alive_interval: Duration::from_secs(30),
        }
    }
}

impl EtcdOptions {
    /// The defaults with these endpoints.
    pub fn new<S: Into<String>>(endpoints: impl IntoIterator<Item = S>) -> EtcdOptions {
        EtcdOptions {
            endpoints: endpoints.into_iter().map(Into::into).collect(),
            ..EtcdOptions::default()
        }
    }
}

/// TLS material for etcd (Kubernetes' `--etcd-cafile`, `--etcd-certfile`,
/// `--etcd-keyfile`), as PEM files.
#[derive(Clone, Debug)]
pub struct EtcdTls {
    /// The CA that signed the members' serving certificates.
    pub ca_file: PathBuf,
    /// The client certificate, when the cluster asks for one.
    pub cert_file: Option<PathBuf>,
    /// The key of [`EtcdTls::cert_file`].
    pub key_file: Option<PathBuf>,
}

impl EtcdTls {
    /// Reads the files into the client's TLS settings.
    async fn load(&self) -> Result<TlsOptions, StorageError> {
        let ca = read(&self.ca_file).await?;
        let mut tls = TlsOptions::new().ca_certificate(etcd_client::Certificate::from_pem(ca));
        match (&self.cert_file, &self.key_file) {
            (Some(cert), Some(key)) => {
                let identity = etcd_client::Identity::from_pem(read(cert).await?, read(key).await?);
                tls = tls.identity(identity);
            }
            (None, None) => {}
            _ => {
                return Err(StorageError::Unavailable(
                    "etcd TLS: give both a client certificate and its key, or neither".to_owned(),
                ));
            }
        }
        Ok(tls)
    }
}

async fn read(path: &Path) -> Result<Vec<u8>, StorageError> {
    tokio::fs::read(path)
        .await
        .map_err(|e| StorageError::Unavailable(format!("cannot read {}: {e}", path.display())))
}

/// The etcd [`Storage`] backend. Cheap to clone: clones share one connection
/// pool to the cluster.
#[derive(Clone)]
pub struct EtcdStore {
    kv: KvClient,
    watch: WatchClient,
    keys: Arc<KeyMap>,
    /// Point reads, batched.
    reads: Arc<batch::Reads>,
    /// The watch caches' feed.
    feeds: Arc<feed::Feeds>,
    /// Leases of expiring keys.
    leases: Arc<lease::Leases>,
    timeout: Duration,
}

/// Responses of a list are limited by the client's decoding limit (tonic's
/// default is 4 MiB, which a page of large objects exceeds); etcd itself
/// allows responses up to 2 GiB, and so does Kubernetes' client.
const MAX_RESPONSE_BYTES: usize = i32::MAX as usize;

impl EtcdStore {
    /// Connects to the cluster and checks that it answers (one bounded,
    /// linearizable read), so that a wrong endpoint or certificate fails at
    /// start-up with a clear error rather than on the first request.
    pub async fn connect(opts: EtcdOptions) -> Result<EtcdStore, StorageError> {
        let timeout = opts.request_timeout;
        let mut connect = ConnectOptions::new()
            // Without a leader, etcd fails requests at once and ends watches
            // (after a few election timeouts) instead of serving stale data.
            .with_require_leader(true)
            .with_connect_timeout(timeout)
            .with_keep_alive(opts.keep_alive_interval, timeout)
            // etcd closes connections that ping without any open stream.
            .with_keep_alive_while_idle(false);
        if let Some(tls) = &opts.tls {
            connect = connect.with_tls(tls.load().await?);
        }
        let endpoints = &opts.endpoints;
        let client = bounded(timeout, Repeat::Safe, || {
            Client::connect(endpoints, Some(connect.clone()))
        })
        .await?;
        let store = EtcdStore::from_client(&client, &opts.prefix, timeout);
        store.ready().await?;
        store.refuse_relative_prefix_data(&opts.prefix).await?;
        Ok(store)
    }

    fn from_client(client: &Client, prefix: &str, timeout: Duration) -> EtcdStore {
        let kv = client
            .kv_client()
            .max_decoding_message_size(MAX_RESPONSE_BYTES);
        EtcdStore {
            reads: Arc::new(batch::Reads::start(kv.clone(), timeout)),
            kv,
            watch: client
                .watch_client()
                .max_decoding_message_size(MAX_RESPONSE_BYTES),
            keys: Arc::new(KeyMap::new(prefix)),
            feeds: Arc::new(feed::Feeds::default()),
            leases: Arc::new(lease::Leases::new(client.lease_client(), timeout)),
            timeout,
        }
    }

    /// kapi once kept the keys of a relative `--etcd-prefix` (`kapi`) under
    /// it as given (`kapi/...`); it now reads it as kube-apiserver joins it
    /// (`/kapi/...`). A store with keys under the old form is refused
    /// rather than served as empty beside them.
    async fn refuse_relative_prefix_data(&self, prefix: &str) -> Result<(), StorageError> {
        let raw = prefix.trim_end_matches('/');
        if raw.is_empty() || raw.starts_with('/') {
            return Ok(());
        }
        let old = format!("{raw}/");
        let options = GetOptions::new()
            .with_range(keys::prefix_range_end(old.as_bytes()))
            .with_count_only();
        let found = self.range(old.clone(), options).await?;
        if found.count() > 0 {
            return Err(StorageError::Unavailable(format!(
                "keys are kept under {old:?}, but --etcd-prefix={prefix} now means {:?} (as \
                 kube-apiserver reads it): move them there, or give the prefix that holds them",
                self.keys.to_etcd("/registry/")
            )));
        }
        Ok(())
    }

    /// One bounded transaction; all of kapi's transactions write.
    async fn txn(&self, txn: Txn) -> Result<etcd_client::TxnResponse, Failure> {
        bounded(self.timeout, Repeat::IfNotSent, || {
            let (mut kv, txn) = (self.kv.clone(), txn.clone());
            async move { kv.txn(txn).await }
        })
        .await
    }

    /// One bounded range read.
    async fn range(
        &self,
        key: impl Into<Vec<u8>>,
        options: GetOptions,
    ) -> Result<etcd_client::GetResponse, Failure> {
        let key = key.into();
        bounded(self.timeout, Repeat::Safe, || {
            let (mut kv, key, options) = (self.kv.clone(), key.clone(), options.clone());
            async move { kv.get(key, Some(options)).await }
        })
        .await
    }
}

#[async_trait]
impl Storage for EtcdStore {
    fn backend_name(&self) -> &'static str {
        "etcd"
    }

    async fn get(&self, key: &str) -> Result<Option<KeyValue>, StorageError> {
        list::get(self, key).await
    }

    async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult, StorageError> {
        list::list(self, prefix, opts).await
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue, StorageError> {
        write::create(self, key, value, None).await
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected_revision: u64,
    ) -> Result<KeyValue, StorageError> {
        write::update(self, key, value, expected_revision, None).await
    }

    async fn create_expiring(
        &self,
        key: &str,
        value: Bytes,
        ttl: Duration,
    ) -> Result<KeyValue, StorageError> {
        let lease = self.leases.for_ttl(ttl).await?;
        write::create(self, key, value, Some(lease)).await
    }

    async fn update_expiring(
        &self,
        key: &str,
        value: Bytes,
        expected_revision: u64,
        ttl: Duration,
    ) -> Result<KeyValue, StorageError> {
        let lease = self.leases.for_ttl(ttl).await?;
        write::update(self, key, value, expected_revision, Some(lease)).await
    }

    async fn delete(
        &self,
        key: &str,
        expected_revision: Option<u64>,
    ) -> Result<KeyValue, StorageError> {
        write::delete(self, key, expected_revision).await
    }

    async fn watch(
        &self,
        prefix: &str,
        from_revision: u64,
        predicate: Option<Predicate>,
    ) -> Result<WatchStream, StorageError> {
        watch::watch(self, prefix, from_revision, predicate).await
    }

    async fn list_and_feed(&self, prefix: &str) -> Result<(ListResult, Feed), StorageError> {
        let (revision, feed) = self.feeds.subscribe(self, prefix).await?;
        let opts = ListOptions {
            revision,
            ..ListOptions::default()
        };
        Ok((self.list(prefix, opts).await?, feed))
    }

    async fn current_revision(&self) -> Result<u64, StorageError> {
        // A linearizable read, shared with the reads that come with it: its
        // header carries the store's revision, and it needs a quorum, so it
        // also tells whether etcd serves.
        self.reads.revision().await
    }

    async fn compacted_revision(&self) -> Result<u64, StorageError> {
        compaction::compacted_revision(self).await
    }

    async fn compact(&self, revision: u64) -> Result<(), StorageError> {
        compaction::compact(self, revision).await
    }
}
