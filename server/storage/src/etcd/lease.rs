//! Leases for keys that expire (Events), handed out as k8s.io/apiserver's
//! etcd3 leaseManager hands them out: one lease is shared by the writes of
//! about a minute, granted a little longer than asked (5% of the TTL, at most
//! 60 s: `--lease-reuse-duration-seconds`) so that every key attached to it
//! lives at least its TTL, and a new one is granted once 1,000 keys share it.
//! Upstream keeps a lease manager per resource; here one is kept per TTL
//! (Events' hour, the master leases' 15 s), which shares the same way.

use std::time::{Duration, Instant};

use etcd_client::LeaseClient;
use tokio::sync::Mutex;

use super::call::{Failure, Repeat, bounded};

/// Upstream's default `--lease-reuse-duration-seconds`.
const REUSE_SECONDS: u64 = 60;
/// The share of the TTL a lease is lengthened by (at most [`REUSE_SECONDS`]).
const REUSE_SHARE: f64 = 0.05;
/// Most keys attached to one lease.
const MAX_ATTACHED: u64 = 1000;

/// The lease being shared.
#[derive(Default)]
struct Current {
    id: i64,
    expires: Option<Instant>,
    attached: u64,
}

/// Leases of one store.
pub(super) struct Leases {
    client: LeaseClient,
    timeout: Duration,
    current: Mutex<std::collections::HashMap<u64, Current>>,
}

impl Leases {
    pub(super) fn new(client: LeaseClient, timeout: Duration) -> Leases {
        Leases {
            client,
            timeout,
            current: Mutex::default(),
        }
    }

    /// A lease a key written now with `ttl` may be attached to.
    pub(super) async fn for_ttl(&self, ttl: Duration) -> Result<i64, Failure> {
        let ttl = ttl.as_secs().max(1);
        let reuse = ((ttl as f64 * REUSE_SHARE) as u64).min(REUSE_SECONDS);
        let now = Instant::now();
        let mut leases = self.current.lock().await;
        let current = leases.entry(ttl).or_default();
        current.attached += 1;
        if let Some(expires) = current.expires {
            let valid = now + Duration::from_secs(ttl) < expires;
            let sufficient = now + Duration::from_secs(ttl + reuse) > expires;
            if valid && sufficient && current.attached <= MAX_ATTACHED {
                return Ok(current.id);
            }
        }
        let granted = ttl + reuse;
        let response = bounded(self.timeout, Repeat::IfNotSent, || {
            let mut client = self.client.clone();
            async move { client.grant(granted as i64, None).await }
        })
        .await?;
        *current = Current {
            id: response.id(),
            expires: Some(now + Duration::from_secs(granted)),
            attached: 1,
        };
        Ok(current.id)
    }
}
