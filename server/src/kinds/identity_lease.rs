//! The server's identity lease, as kube-apiserver 1.32 keeps one (its
//! APIServerIdentity feature, on by default): a Lease `kube-system/apiserver-<id>`,
//! `<id>` the lower-case unpadded base32 of the first 16 bytes of the
//! SHA-256 of the host name, labelled `apiserver.kubernetes.io/identity:
//! kube-apiserver` and with the host name, held by `<name>_<uuid>` for an
//! hour and renewed every 10 s; and the garbage collector that deletes
//! such leases once expired (every hour). Other tools count API servers by
//! these leases, and kube-apiserver sharing the etcd sees kapi's.

use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use crate::controllers::client::{Client, ListParams, Resource};

/// The label naming an identity lease's component.
const IDENTITY_LABEL: &str = "apiserver.kubernetes.io/identity";
/// Its value for kube-apiserver (which kapi stands in for).
const KUBE_APISERVER: &str = "kube-apiserver";
/// How long a lease is held (IdentityLeaseDurationSeconds).
const DURATION_SECONDS: i64 = 3600;
/// How often it is renewed (IdentityLeaseRenewIntervalPeriod).
const RENEW_EVERY: Duration = Duration::from_secs(10);
/// How often expired leases are deleted (IdentityLeaseGCPeriod).
const GC_EVERY: Duration = Duration::from_secs(3600);

fn leases() -> Resource {
    Resource::new("coordination.k8s.io", "v1", "leases", true)
}

/// The host name, as Go's `os.Hostname` reads it on Linux.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// The server's identity (generic apiserver's APIServerID) on `host`.
pub fn server_id(host: &str) -> String {
    let hash = Sha256::digest(host.as_bytes());
    format!("apiserver-{}", base32_lower(&hash[..16]))
}

/// RFC 4648 base32, lower case, without padding.
fn base32_lower(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in bytes {
        buffer = (buffer << 8) | u32::from(*byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ALPHABET[((buffer >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((buffer << (5 - bits)) & 31) as usize]));
    }
    out
}

/// Now as a MicroTime (`2006-01-02T15:04:05.000000Z07:00`).
fn micro_now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%S.%6fZ")
        .to_string()
}

/// Keeps the lease until `shutdown`.
pub async fn renew(client: Client, mut shutdown: watch::Receiver<bool>) {
    let host = hostname();
    let name = server_id(&host);
    let holder = format!("{name}_{}", uuid::Uuid::new_v4());
    loop {
        if let Err(e) = renew_once(&client, &host, &name, &holder).await {
            tracing::debug!(error = %e, "could not renew the identity lease");
        }
        tokio::select! {
            () = tokio::time::sleep(RENEW_EVERY) => {}
            _ = shutdown.changed() => return,
        }
    }
}

async fn renew_once(client: &Client, host: &str, name: &str, holder: &str) -> Result<(), String> {
    let now = micro_now();
    let labels = json!({IDENTITY_LABEL: KUBE_APISERVER, "kubernetes.io/hostname": host});
    match client.get(&leases(), Some("kube-system"), name).await {
        Err(e) if e.is_not_found() => {
            let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": name, "namespace": "kube-system", "labels": labels},
                "spec": {"holderIdentity": holder, "leaseDurationSeconds": DURATION_SECONDS,
                    "renewTime": now}});
            client
                .create(&leases(), Some("kube-system"), &lease)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
        Ok(mut lease) => {
            lease["spec"]["holderIdentity"] = holder.into();
            lease["spec"]["leaseDurationSeconds"] = DURATION_SECONDS.into();
            lease["spec"]["renewTime"] = now.into();
            if let (Value::Object(have), Value::Object(want)) =
                (&mut lease["metadata"]["labels"], &labels)
            {
                have.extend(want.clone());
            } else {
                lease["metadata"]["labels"] = labels;
            }
            client
                .update(&leases(), Some("kube-system"), name, None, &lease)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    }
}

/// Deletes expired identity leases now and every hour until `shutdown`.
pub async fn collect(client: Client, mut shutdown: watch::Receiver<bool>) {
    loop {
        if let Err(e) = collect_once(&client).await {
            tracing::debug!(error = %e, "could not collect expired identity leases");
        }
        tokio::select! {
            () = tokio::time::sleep(GC_EVERY) => {}
            _ = shutdown.changed() => return,
        }
    }
}

async fn collect_once(client: &Client) -> Result<(), String> {
    let params = ListParams {
        label_selector: Some(format!("{IDENTITY_LABEL}={KUBE_APISERVER}")),
        ..ListParams::default()
    };
    let list = client
        .list(&leases(), Some("kube-system"), &params)
        .await
        .map_err(|e| e.to_string())?;
    let now = jiff::Timestamp::now();
    for lease in list["items"].as_array().into_iter().flatten() {
        let renewed = lease["spec"]["renewTime"]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        let seconds = lease["spec"]["leaseDurationSeconds"].as_i64().unwrap_or(0);
        let expired = renewed.is_none_or(|at| {
            at.checked_add(jiff::SignedDuration::from_secs(seconds))
                .is_ok_and(|until| until < now)
        });
        let name = lease["metadata"]["name"].as_str().unwrap_or_default();
        if expired && !name.is_empty() {
            // Only as read: a lease renewed meanwhile stays.
            let options = json!({"preconditions":
                {"resourceVersion": lease["metadata"]["resourceVersion"]}});
            match client
                .delete(&leases(), Some("kube-system"), name, &options)
                .await
            {
                Ok(_) => tracing::info!(lease = %name, "deleted an expired identity lease"),
                Err(e) if e.is_not_found() || e.is_conflict() => {}
                Err(e) => tracing::debug!(lease = %name, error = %e, "could not delete"),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_is_rfc_4648s() {
        assert_eq!(base32_lower(b""), "");
        assert_eq!(base32_lower(b"f"), "my");
        assert_eq!(base32_lower(b"foobar"), "mzxw6ytboi");
        assert_eq!(server_id("x").len(), "apiserver-".len() + 26);
    }
}
