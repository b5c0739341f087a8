//! `networking.k8s.io/v1`.

mod defaults;
pub mod ingress;
pub mod ingressclass;
pub mod networkpolicy;
mod validation;

pub use ingress::Ingress;
pub use ingressclass::IngressClass;
pub use networkpolicy::NetworkPolicy;
