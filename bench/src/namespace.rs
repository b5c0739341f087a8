//! The namespace a run works in: `bench-<random>`, created with the `default`
//! ServiceAccount pods need (kube-apiserver alone has no controller to make it),
//! deleted at the end.

use anyhow::{Result, bail};
use hyper::{Method, StatusCode};
use serde_json::json;

use crate::http::{Client, status_error};
use crate::objects::{body, collection};
use crate::random::Rng;

/// A fresh namespace name.
pub fn random_name() -> String {
    format!("bench-{:08x}", Rng::new().next_u64() as u32)
}

/// Creates `namespace` and its `default` ServiceAccount.
pub async fn create(client: &mut Client, namespace: &str) -> Result<()> {
    let manifest = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": { "name": namespace, "labels": { "app": "kapi-bench" } },
    });
    client
        .call_ok(Method::POST, "/api/v1/namespaces", Some(body(&manifest)))
        .await?;
    let account = json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": { "name": "default" },
    });
    let path = collection(namespace, "serviceaccounts");
    let (status, answer) = client
        .call(Method::POST, &path, Some(body(&account)))
        .await?;
    // A server with a service account controller (kapi) may have made it already.
    if !status.is_success() && status != StatusCode::CONFLICT {
        bail!("POST {path}: {}", status_error(status, &answer));
    }
    Ok(())
}

/// Deletes `namespace` without waiting for it to be emptied (kube-apiserver alone
/// has no namespace controller, so there it stays Terminating).
pub async fn delete(client: &mut Client, namespace: &str) -> Result<()> {
    let path = format!("/api/v1/namespaces/{namespace}");
    client.call_ok(Method::DELETE, &path, None).await?;
    Ok(())
}
