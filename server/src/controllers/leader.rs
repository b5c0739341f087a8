//! Leader election on a coordination.k8s.io/v1 Lease, as client-go's
//! leaderelection package does with its LeaseLock: the holder renews the lease
//! every `RETRY_PERIOD`; another candidate takes it over once it saw no
//! renewal for `leaseDurationSeconds`; a leader that could not renew for
//! `RENEW_DEADLINE` steps down. Controllers run only while leading, so several
//! replicas on one store run them once.

use std::time::{Duration, Instant};

use kapi_runtime::meta::MicroTime;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::client::{Client, ClientError, Resource};

/// Namespace of the lease.
pub const LEASE_NAMESPACE: &str = "kube-system";
/// Name of the lease.
pub const LEASE_NAME: &str = "kapi-controller-manager";
/// `leaseDurationSeconds`, kube-controller-manager's default.
const LEASE_DURATION: Duration = Duration::from_secs(15);
/// How long a leader keeps leading without a successful renewal.
const RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// How often candidates try and the leader renews.
const RETRY_PERIOD: Duration = Duration::from_secs(2);

fn leases() -> Resource {
    Resource::new("coordination.k8s.io", "v1", "leases", true)
}

/// `<hostname>_<random>`, as kube-controller-manager names its holder.
pub fn identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "kapi".to_owned());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// A candidate for the lease.
pub struct Elector {
    client: Client,
    identity: String,
    /// The lease spec last seen and when it was first seen (client-go judges
    /// expiry on its own clock, not on the holder's renewTime).
    observed: Option<(Value, Instant)>,
}

impl Elector {
    /// A candidate named `identity`.
    pub fn new(client: Client, identity: String) -> Elector {
        Elector {
            client,
            identity,
            observed: None,
        }
    }

    /// Campaigns until `shutdown`; while leading, runs what `start` spawns and
    /// stops it (aborting its tasks) when the lease is lost.
    pub async fn run(
        mut self,
        mut shutdown: watch::Receiver<bool>,
        start: impl Fn() -> JoinSet<()>,
    ) {
        loop {
            // Candidate: try until acquired.
            loop {
                if *shutdown.borrow() {
                    return;
                }
                match self.try_acquire_or_renew().await {
                    Ok(true) => break,
                    Ok(false) => {}
                    Err(e) => tracing::debug!(error = %e, "could not read the leader lease"),
                }
                tokio::select! {
                    () = tokio::time::sleep(RETRY_PERIOD) => {}
                    _ = shutdown.changed() => return,
                }
            }
            tracing::info!(identity = %self.identity, "became leader: starting controllers");
            let mut running = start();
            let mut renewed = Instant::now();
            loop {
                tokio::select! {
                    () = tokio::time::sleep(RETRY_PERIOD) => {}
                    _ = shutdown.changed() => {
                        running.shutdown().await;
                        self.release().await;
                        return;
                    }
                    Some(ended) = running.join_next(), if !running.is_empty() => {
                        // A controller never ends by itself: start them all
                        // again (kube-controller-manager would exit and leave
                        // the lease to another replica).
                        tracing::warn!(?ended, "a controller ended: restarting the controllers");
                        running.shutdown().await;
                        tokio::select! {
                            () = tokio::time::sleep(RETRY_PERIOD) => {}
                            _ = shutdown.changed() => {
                                self.release().await;
                                return;
                            }
                        }
                        break;
                    }
                }
                // A renewal may not outlast the renew deadline (client-go's
                // RenewDeadline): a leader that cannot renew in time steps down.
                let left = RENEW_DEADLINE.saturating_sub(renewed.elapsed());
                match tokio::time::timeout(left, self.try_acquire_or_renew()).await {
                    Ok(Ok(true)) => renewed = Instant::now(),
                    Ok(Ok(false)) => break,
                    Ok(Err(e)) if renewed.elapsed() >= RENEW_DEADLINE => {
                        tracing::warn!(error = %e, "could not renew the leader lease");
                        break;
                    }
                    Ok(Err(_)) => {}
                    Err(_) => {
                        tracing::warn!("renewing the leader lease took too long");
                        break;
                    }
                }
            }
            tracing::warn!(identity = %self.identity, "not leading: stopping controllers");
            running.shutdown().await;
        }
    }

    /// One attempt: `Ok(true)` when this candidate holds the lease afterwards.
    async fn try_acquire_or_renew(&mut self) -> Result<bool, ClientError> {
        let now = MicroTime::now().to_string();
        let current = match self
            .client
            .get(&leases(), Some(LEASE_NAMESPACE), LEASE_NAME)
            .await
        {
            Ok(lease) => lease,
            Err(e) if e.is_not_found() => {
                let lease = json!({
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": { "name": LEASE_NAME, "namespace": LEASE_NAMESPACE },
                    "spec": self.spec(&now, &now, 0),
                });
                return match self
                    .client
                    .create(&leases(), Some(LEASE_NAMESPACE), &lease)
                    .await
                {
                    Ok(created) => {
                        self.observe(&created["spec"]);
                        Ok(true)
                    }
                    Err(e) if e.is_conflict() => Ok(false),
                    Err(e) => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
        let spec = &current["spec"];
        self.observe(spec);
        let holder = spec["holderIdentity"].as_str().unwrap_or_default();
        let held_by_me = holder == self.identity;
        let duration = spec["leaseDurationSeconds"]
            .as_u64()
            .map_or(LEASE_DURATION, Duration::from_secs);
        let observed_at = self.observed.as_ref().map(|(_, at)| *at);
        if !holder.is_empty()
            && !held_by_me
            && observed_at.is_some_and(|at| at.elapsed() < duration)
        {
            return Ok(false);
        }
        let transitions = spec["leaseTransitions"].as_i64().unwrap_or(0);
        let (acquired, transitions) = if held_by_me {
            (
                spec["acquireTime"].as_str().unwrap_or(&now).to_owned(),
                transitions,
            )
        } else {
            (now.clone(), transitions + 1)
        };
        let mut lease = current.clone();
        lease["spec"] = self.spec(&acquired, &now, transitions);
        match self
            .client
            .update(&leases(), Some(LEASE_NAMESPACE), LEASE_NAME, None, &lease)
            .await
        {
            Ok(updated) => {
                self.observe(&updated["spec"]);
                Ok(true)
            }
            Err(e) if e.is_conflict() => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn spec(&self, acquired: &str, renewed: &str, transitions: i64) -> Value {
        json!({
            "holderIdentity": self.identity,
            "leaseDurationSeconds": LEASE_DURATION.as_secs(),
            "acquireTime": acquired,
            "renewTime": renewed,
            "leaseTransitions": transitions,
        })
    }

    fn observe(&mut self, spec: &Value) {
        if self.observed.as_ref().is_none_or(|(seen, _)| seen != spec) {
            self.observed = Some((spec.clone(), Instant::now()));
        }
    }

    /// Gives the lease up on shutdown, so another replica takes over at once
    /// (client-go's ReleaseOnCancel: an empty holder, a one-second duration).
    async fn release(&mut self) {
        let Ok(mut lease) = self
            .client
            .get(&leases(), Some(LEASE_NAMESPACE), LEASE_NAME)
            .await
        else {
            return;
        };
        if lease["spec"]["holderIdentity"].as_str() != Some(self.identity.as_str()) {
            return;
        }
        let now = MicroTime::now().to_string();
        let transitions = lease["spec"]["leaseTransitions"].as_i64().unwrap_or(0);
        lease["spec"] = json!({
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now,
            "renewTime": now,
            "leaseTransitions": transitions,
        });
        if let Err(e) = self
            .client
            .update(&leases(), Some(LEASE_NAMESPACE), LEASE_NAME, None, &lease)
            .await
        {
            tracing::debug!(error = %e, "could not release the leader lease");
        }
    }
}
