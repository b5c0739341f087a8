//! Where an APIService's Service listens, as kube-apiserver 1.32 finds it
//! (k8s.io/apiserver's `ResolveCluster` and `ResolveEndpoint`, behind
//! kube-aggregator's loopback resolver): the Service's cluster IP by
//! default, one of its endpoints with `--enable-aggregator-routing`, and
//! this server itself for `kubernetes.default.svc:443`. The objects are read
//! typed from the server's own cache.

use std::sync::Arc;

use async_trait::async_trait;
use kapi_api_types::core::v1::service::spec::ServicePort;
use kapi_api_types::core::v1::{Endpoints, Service};

use crate::loopback::{self, Loopback};
use crate::webhook_client::Resolve;

/// How a Service is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routing {
    /// To its cluster IP (kube-proxy takes it from there).
    ClusterIp,
    /// To one of its endpoints (`--enable-aggregator-routing=true`).
    Endpoints,
}

/// Resolves APIServices' Services from the server's own objects.
pub struct ServiceResolver {
    objects: Arc<dyn Loopback>,
    routing: Routing,
    /// This server's own address, for `kubernetes.default.svc`.
    own: (String, u16),
}

impl ServiceResolver {
    /// A resolver reading `objects`, routing as `routing` says, with
    /// `own` (host, port) as the address of the `kubernetes` Service.
    pub fn new(
        objects: Arc<dyn Loopback>,
        routing: Routing,
        own: (String, u16),
    ) -> ServiceResolver {
        ServiceResolver {
            objects,
            routing,
            own,
        }
    }
}

#[async_trait]
impl Resolve for ServiceResolver {
    async fn resolve(
        &self,
        namespace: &str,
        name: &str,
        port: i32,
    ) -> Result<(String, u16), String> {
        if namespace == "default" && name == "kubernetes" && port == 443 {
            return Ok(self.own.clone());
        }
        let service = loopback::get::<Service>(self.objects.as_ref(), Some(namespace), name)
            .await
            .map_err(|e| e.0.message.unwrap_or_default())?
            .ok_or_else(|| format!("service \"{name}\" not found"))?;
        match self.routing {
            Routing::ClusterIp => cluster(&service, port),
            Routing::Endpoints => {
                let endpoints =
                    loopback::get::<Endpoints>(self.objects.as_ref(), Some(namespace), name)
                        .await
                        .map_err(|e| e.0.message.unwrap_or_default())?
                        .ok_or_else(|| format!("endpoints \"{name}\" not found"))?;
                endpoint(&service, &endpoints, port)
            }
        }
    }
}

fn service_type(service: &Service) -> &str {
    service.spec.type_.as_deref().unwrap_or("ClusterIP")
}

/// The Service's port `port` (apiserver's `findServicePort`).
fn service_port(service: &Service, port: i32) -> Result<&ServicePort, String> {
    service
        .spec
        .ports
        .iter()
        .flatten()
        .find(|p| p.port == port)
        .ok_or_else(|| {
            format!(
                "no service port {port} found for service {:?}",
                service.metadata.name.as_deref().unwrap_or_default()
            )
        })
}

fn to_port(port: i32) -> Result<u16, String> {
    u16::try_from(port).map_err(|_| format!("invalid port {port}"))
}

/// `ResolveCluster`.
fn cluster(service: &Service, port: i32) -> Result<(String, u16), String> {
    let spec = &service.spec;
    let cluster_ip = spec.cluster_ip.as_deref().unwrap_or_default();
    match service_type(service) {
        "ClusterIP" if cluster_ip == "None" => {
            Err("cannot route to service with ClusterIP \"None\"".to_owned())
        }
        "ClusterIP" | "LoadBalancer" | "NodePort" => {
            let found = service_port(service, port)?;
            Ok((cluster_ip.to_owned(), to_port(found.port)?))
        }
        "ExternalName" => Ok((
            spec.external_name.clone().unwrap_or_default(),
            to_port(port)?,
        )),
        other => Err(format!("unsupported service type {other:?}")),
    }
}

/// `ResolveEndpoint`: a ready address of a subset that has the Service
/// port's name, picked at random as upstream picks.
fn endpoint(service: &Service, endpoints: &Endpoints, port: i32) -> Result<(String, u16), String> {
    let name = service.metadata.name.as_deref().unwrap_or_default();
    match service_type(service) {
        "ClusterIP" | "LoadBalancer" | "NodePort" => {}
        other => return Err(format!("unsupported service type {other:?}")),
    }
    let found = service_port(service, port)?;
    let subsets = endpoints.subsets.as_deref().unwrap_or_default();
    let none = || format!("no endpoints available for service {name:?}");
    if subsets.is_empty() {
        return Err(none());
    }
    let start = fastrand_index(subsets.len());
    for i in 0..subsets.len() {
        let subset = &subsets[(start + i) % subsets.len()];
        let addresses = subset.addresses.as_deref().unwrap_or_default();
        if addresses.is_empty() {
            continue;
        }
        for candidate in subset.ports.iter().flatten() {
            if candidate.name.as_deref().unwrap_or_default()
                == found.name.as_deref().unwrap_or_default()
            {
                let address = &addresses[fastrand_index(addresses.len())];
                return Ok((address.ip.clone(), to_port(candidate.port)?));
            }
        }
    }
    Err(none())
}

/// A number below `n` (n > 0), spread over calls.
fn fastrand_index(n: usize) -> usize {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    (hasher.finish() % n as u64) as usize
}
