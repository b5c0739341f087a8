//! Where a webhook named by a Service listens: an ExternalName Service's
//! name, else the address of one of the Service's ready endpoints behind
//! the port (kube-apiserver with `--enable-aggregator-routing`; kapi routes
//! to no Service IP), read typed through the loopback.

use async_trait::async_trait;
use kapi_api_types::core::v1::{Endpoints, Service};
use kapi_runtime::IntOrString;

use crate::loopback::{self, Loopback};
use crate::webhook_client::Resolve;

/// Resolves Services from the server's own objects.
pub struct Services<'a>(pub &'a dyn Loopback);

#[async_trait]
impl Resolve for Services<'_> {
    async fn resolve(
        &self,
        namespace: &str,
        name: &str,
        port: i32,
    ) -> Result<(String, u16), String> {
        let not_found = || format!("service \"{name}\" not found");
        let service = loopback::get::<Service>(self.0, Some(namespace), name)
            .await
            .map_err(|e| e.0.message.unwrap_or_default())?
            .ok_or_else(not_found)?;
        let spec = &service.spec;
        let service_port = spec
            .ports
            .iter()
            .flatten()
            .find(|p| p.port == port)
            .ok_or_else(|| format!("no service port {port} found for service \"{name}\""))?;
        if spec.type_.as_deref() == Some("ExternalName")
            && let Some(external) = &spec.external_name
        {
            let port = u16::try_from(port).map_err(|_| format!("invalid port {port}"))?;
            return Ok((external.clone(), port));
        }
        let none = || format!("no endpoints available for service \"{name}\"");
        let endpoints = loopback::get::<Endpoints>(self.0, Some(namespace), name)
            .await
            .map_err(|e| e.0.message.unwrap_or_default())?
            .ok_or_else(none)?;
        for subset in endpoints.subsets.iter().flatten() {
            let Some(address) = subset.addresses.iter().flatten().next() else {
                continue;
            };
            let chosen = subset
                .ports
                .iter()
                .flatten()
                .find(|p| match &service_port.target_port {
                    Some(IntOrString::String(named)) => p.name.as_deref() == Some(named),
                    Some(IntOrString::Int(number)) => p.port == *number,
                    None => p.port == port,
                });
            if let Some(p) = chosen.and_then(|p| u16::try_from(p.port).ok()) {
                return Ok((address.ip.clone(), p));
            }
        }
        Err(none())
    }
}
