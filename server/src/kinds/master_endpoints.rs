//! The `kubernetes` Service's endpoints, kept as kube-apiserver 1.32 keeps
//! them with its default `--endpoint-reconciler-type=lease`
//! (pkg/controlplane/reconcilers/lease.go): every server holds a lease, a
//! v1 Endpoints under `/registry/masterleases/<ip>` written every 10 s to
//! expire 15 s later, and sets Endpoints `default/kubernetes` (labelled to
//! be left alone by the EndpointSlice mirroring) to the addresses of every
//! live lease, its EndpointSlice beside it. kapi and kube-apiserver on one
//! etcd thus both stay in the Service; a server that stops removes its lease
//! and itself.
//!
//! It runs only with an address pods can reach (`--advertise-address`, or
//! an address the server listens on that is neither loopback nor
//! unspecified), as Endpoints refuse loopback.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use kapi_api_types::core::v1::Endpoints;
use kapi_api_types::core::v1::endpoints::{EndpointAddress, EndpointSubset};
use kapi_runtime::scheme::KindEntry;
use kapi_storage::{ListOptions, Storage, StorageError, Update};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::body::Object;
use crate::controllers::client::{Client, Resource};
use crate::stored::{StorageMediaType, decode_stored};

/// Where the leases are kept.
const LEASES: &str = "/registry/masterleases/";
/// How often the lease is written and the endpoints set
/// (DefaultEndpointReconcilerInterval).
const INTERVAL: Duration = Duration::from_secs(10);
/// How long a lease outlives its last write (DefaultEndpointReconcilerTTL).
const TTL: Duration = Duration::from_secs(15);
/// The label that keeps the EndpointSlice mirroring controller away.
const SKIP_MIRROR: &str = "endpointslice.kubernetes.io/skip-mirror";

/// One server's reconciler.
pub struct MasterEndpoints {
    /// The store the leases live in.
    pub storage: Arc<dyn Storage>,
    /// Endpoints' kind (a lease is one).
    pub endpoints: KindEntry,
    /// How the leases are written.
    pub media_type: StorageMediaType,
    /// This server's address, as pods reach it.
    pub ip: IpAddr,
    /// Its port.
    pub port: u16,
    /// The API, as the server itself.
    pub client: Client,
}

impl MasterEndpoints {
    /// Every 10 s until `shutdown`; then this server's lease and address go.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        loop {
            if let Err(e) = self.reconcile().await {
                tracing::warn!(error = %e, "could not reconcile the kubernetes Service's endpoints");
            }
            tokio::select! {
                () = tokio::time::sleep(INTERVAL) => {}
                _ = shutdown.changed() => break,
            }
        }
        let key = format!("{LEASES}{}", self.ip);
        match self.storage.delete(&key, None).await {
            Ok(_) | Err(StorageError::NotFound(_)) => {}
            Err(e) => tracing::warn!(error = %e, "could not remove this server's master lease"),
        }
        if let Err(e) = self.set_endpoints().await {
            tracing::debug!(error = %e, "the kubernetes Service's endpoints were left as they are");
        }
    }

    /// One round: the lease written, then the endpoints set.
    async fn reconcile(&self) -> Result<(), String> {
        self.update_lease().await?;
        self.set_endpoints().await
    }

    /// Writes this server's lease for another 15 s (its generation counted
    /// up, so that the write happens and renews the TTL).
    async fn update_lease(&self) -> Result<(), String> {
        let key = format!("{LEASES}{}", self.ip);
        let ip = self.ip.to_string();
        let entry = &self.endpoints;
        let media_type = self.media_type;
        self.storage
            .guaranteed_update_expiring(&key, Some(TTL), &mut |current| {
                let mut lease = current
                    .and_then(|kv| decode_stored(entry, kv).ok())
                    .and_then(|object| object.downcast_ref::<Endpoints>().cloned())
                    .unwrap_or_default();
                lease.metadata.resource_version = None;
                lease.subsets = Some(vec![EndpointSubset {
                    addresses: Some(vec![EndpointAddress {
                        ip: ip.clone(),
                        ..EndpointAddress::default()
                    }]),
                    ..EndpointSubset::default()
                }]);
                lease.metadata.generation = Some(lease.metadata.generation.unwrap_or(0) + 1);
                let mut object = Object::new(Box::new(lease));
                media_type
                    .encode(entry, &mut object)
                    .map(Update::Write)
                    .map_err(StorageError::Internal)
            })
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// The addresses of the live leases, in key order.
    async fn lease_ips(&self) -> Result<Vec<String>, String> {
        let listed = self
            .storage
            .list(LEASES, ListOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let mut ips: Vec<String> = listed
            .items
            .iter()
            .filter_map(|kv| decode_stored(&self.endpoints, kv).ok())
            .filter_map(|object| {
                let lease = object.downcast_ref::<Endpoints>()?;
                let address = lease
                    .subsets
                    .as_ref()?
                    .first()?
                    .addresses
                    .as_ref()?
                    .first()?;
                (!address.ip.is_empty()).then(|| address.ip.clone())
            })
            .collect();
        ips.sort();
        Ok(ips)
    }

    /// Endpoints `default/kubernetes` as the leases say, and its
    /// EndpointSlice.
    async fn set_endpoints(&self) -> Result<(), String> {
        let ips = self.lease_ips().await?;
        if ips.is_empty() {
            return Err(
                "no API server IP addresses were listed in storage, refusing to erase all \
                 endpoints for the kubernetes Service"
                    .to_owned(),
            );
        }
        let resource = Resource::new("", "v1", "endpoints", true);
        let ports = json!([{"name": "https", "port": self.port, "protocol": "TCP"}]);
        let addresses: Vec<Value> = ips.iter().map(|ip| json!({"ip": ip})).collect();
        let found = self
            .client
            .get(&resource, Some("default"), "kubernetes")
            .await;
        let (mut endpoints, create) = match found {
            Ok(endpoints) => (endpoints, false),
            Err(e) if e.is_not_found() => (
                json!({"apiVersion": "v1", "kind": "Endpoints",
                    "metadata": {"name": "kubernetes", "namespace": "default"}}),
                true,
            ),
            Err(e) => return Err(e.to_string()),
        };
        let labelled = endpoints["metadata"]["labels"][SKIP_MIRROR] == "true";
        let subset = &endpoints["subsets"][0];
        let current_ips: Vec<&str> = subset["addresses"]
            .as_array()
            .map(|a| a.iter().filter_map(|a| a["ip"].as_str()).collect())
            .unwrap_or_default();
        let format_correct = endpoints["subsets"]
            .as_array()
            .is_some_and(|s| s.len() == 1)
            && subset["notReadyAddresses"]
                .as_array()
                .is_none_or(Vec::is_empty);
        let ips_correct = current_ips == ips.iter().map(String::as_str).collect::<Vec<_>>();
        let ports_correct = subset["ports"] == ports;
        if labelled && format_correct && ips_correct && ports_correct {
            return self.ensure_slice(&ips).await;
        }
        endpoints["metadata"]["labels"][SKIP_MIRROR] = "true".into();
        endpoints["subsets"] = json!([{"addresses": addresses, "ports": ports}]);
        tracing::info!(ips = ?ips, "resetting the endpoints of the kubernetes Service");
        let written = if create {
            self.client
                .create(&resource, Some("default"), &endpoints)
                .await
        } else {
            self.client
                .update(&resource, Some("default"), "kubernetes", None, &endpoints)
                .await
        };
        written.map_err(|e| e.to_string())?;
        self.ensure_slice(&ips).await
    }

    /// The EndpointSlice of Endpoints `default/kubernetes`, as upstream's
    /// EndpointsAdapter makes it.
    async fn ensure_slice(&self, ips: &[String]) -> Result<(), String> {
        let resource = Resource::new("discovery.k8s.io", "v1", "endpointslices", true);
        let address_type = if ips.iter().all(|ip| ip.contains(':')) {
            "IPv6"
        } else {
            "IPv4"
        };
        let endpoints: Vec<Value> = ips
            .iter()
            .filter(|ip| ip.contains(':') == (address_type == "IPv6"))
            .map(|ip| json!({"addresses": [ip], "conditions": {"ready": true}}))
            .collect();
        let ports = json!([{"name": "https", "port": self.port, "protocol": "TCP"}]);
        let labels = json!({"kubernetes.io/service-name": "kubernetes"});
        let wanted = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "kubernetes", "namespace": "default", "labels": labels},
            "addressType": address_type, "endpoints": endpoints, "ports": ports});
        match self
            .client
            .get(&resource, Some("default"), "kubernetes")
            .await
        {
            Err(e) if e.is_not_found() => {
                match self
                    .client
                    .create(&resource, Some("default"), &wanted)
                    .await
                {
                    Ok(_) => Ok(()),
                    Err(e) if e.code() == Some(409) => Ok(()),
                    Err(e) => Err(e.to_string()),
                }
            }
            Err(e) => Err(e.to_string()),
            Ok(current) if current["addressType"] != address_type => {
                // The type cannot change: the slice is made again, as
                // upstream's adapter makes it.
                let gone = self
                    .client
                    .delete(&resource, Some("default"), "kubernetes", &json!({}))
                    .await;
                if let Err(e) = gone
                    && !e.is_not_found()
                {
                    return Err(e.to_string());
                }
                self.client
                    .create(&resource, Some("default"), &wanted)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
            Ok(current) => {
                if current["endpoints"] == wanted["endpoints"]
                    && current["ports"] == wanted["ports"]
                    && current["metadata"]["labels"] == labels
                {
                    return Ok(());
                }
                let mut updated = wanted.clone();
                updated["metadata"]["resourceVersion"] =
                    current["metadata"]["resourceVersion"].clone();
                self.client
                    .update(&resource, Some("default"), "kubernetes", None, &updated)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        }
    }
}

/// The address the `kubernetes` Service's endpoints name: the advertised
/// one, else the one listened on when pods could reach it (neither
/// loopback nor unspecified).
pub fn advertised(advertise: Option<IpAddr>, listen: IpAddr) -> Option<IpAddr> {
    advertise
        .or(Some(listen))
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
}
