//! Where a Service's webhook listens, for the webhook client: the external
//! name of an ExternalName Service, else the address of one of its ready
//! endpoints (kube-apiserver with `--enable-aggregator-routing`: kapi routes
//! to no Service IP).

use async_trait::async_trait;
use serde_json::Value;

use super::client::{Client, Resource};
use crate::webhook_client::Resolve;

/// Resolves Services through the server's own client.
pub struct Endpoints(pub Client);

#[async_trait]
impl Resolve for Endpoints {
    async fn resolve(
        &self,
        namespace: &str,
        name: &str,
        port: i32,
    ) -> Result<(String, u16), String> {
        service_endpoint(&self.0, namespace, name, i64::from(port)).await
    }
}

/// The address and port of an endpoint of Service `namespace/name` behind
/// its port `port`, worded as upstream's service resolver words what fails.
async fn service_endpoint(
    client: &Client,
    namespace: &str,
    name: &str,
    port: i64,
) -> Result<(String, u16), String> {
    let services = Resource::new("", "v1", "services", true);
    let service = client
        .get(&services, Some(namespace), name)
        .await
        .map_err(|_| format!("service \"{name}\" not found"))?;
    let service_port = service["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["port"].as_i64() == Some(port))
        .ok_or_else(|| format!("no service port {port} found for service \"{name}\""))?;
    // An ExternalName service is its external name, at the service port.
    if service["spec"]["type"] == "ExternalName"
        && let Some(external) = service["spec"]["externalName"].as_str()
    {
        let port = u16::try_from(port).map_err(|_| format!("invalid port {port}"))?;
        return Ok((external.to_owned(), port));
    }
    let target = &service_port["targetPort"];
    let endpoints = Resource::new("", "v1", "endpoints", true);
    let endpoints = client
        .get(&endpoints, Some(namespace), name)
        .await
        .map_err(|_| format!("no endpoints available for service \"{name}\""))?;
    for subset in endpoints["subsets"].as_array().into_iter().flatten() {
        let Some(address) = subset["addresses"][0]["ip"].as_str() else {
            continue;
        };
        let chosen = subset["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| match target {
                Value::String(named) => p["name"] == named.as_str(),
                Value::Number(n) => p["port"].as_i64() == n.as_i64(),
                _ => p["port"].as_i64() == Some(port),
            });
        if let Some(p) = chosen
            .and_then(|p| p["port"].as_u64())
            .and_then(|p| u16::try_from(p).ok())
        {
            return Ok((address.to_owned(), p));
        }
    }
    Err(format!("no endpoints available for service \"{name}\""))
}
