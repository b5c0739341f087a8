//! The root CA publisher: a ConfigMap `kube-root-ca.crt` with the cluster's CA
//! certificate under `ca.crt` in every namespace, re-created when deleted and
//! put back when its data or description annotation changes (upstream's
//! root-ca-certificate-publisher-controller).

use serde_json::{Value, json};

use super::per_namespace::Kept;
use crate::controllers::client::Resource;

/// The ConfigMap's name.
pub const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";
/// The key of the certificate in its data.
pub const ROOT_CA_KEY: &str = "ca.crt";
/// The annotation describing the ConfigMap.
pub const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
/// Upstream's description, word for word (clients may compare it).
pub const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver \
     when using internal endpoints such as the internal service IP or kubernetes.default.svc. \
     No other usage is guaranteed across distributions of Kubernetes clusters.";

/// The publisher of one CA certificate (PEM).
pub struct RootCaPublisher {
    /// The certificate, PEM.
    pub ca_pem: String,
}

impl Kept for RootCaPublisher {
    fn controller(&self) -> &'static str {
        "root-ca-certificate-publisher-controller"
    }

    fn resource(&self) -> Resource {
        Resource::new("", "v1", "configmaps", true)
    }

    fn name(&self) -> &'static str {
        ROOT_CA_CONFIG_MAP
    }

    fn desired(&self, namespace: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": ROOT_CA_CONFIG_MAP,
                "namespace": namespace,
                "annotations": { DESCRIPTION_ANNOTATION: DESCRIPTION },
            },
            "data": { ROOT_CA_KEY: self.ca_pem },
        })
    }

    /// The data must be exactly the one key and the annotation non-empty.
    fn repaired(&self, current: &Value) -> Option<Value> {
        let data = json!({ ROOT_CA_KEY: self.ca_pem });
        let described = current["metadata"]["annotations"][DESCRIPTION_ANNOTATION]
            .as_str()
            .is_some_and(|d| !d.is_empty());
        if current["data"] == data && described {
            return None;
        }
        let mut repaired = current.clone();
        repaired["data"] = data;
        let metadata = &mut repaired["metadata"];
        if !metadata["annotations"].is_object() {
            metadata["annotations"] = json!({});
        }
        metadata["annotations"][DESCRIPTION_ANNOTATION] = json!(DESCRIPTION);
        Some(repaired)
    }
}
