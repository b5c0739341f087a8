//! The root CA publisher: a ConfigMap `kube-root-ca.crt` with the cluster's CA
//! certificate under `ca.crt` in every namespace, re-created when deleted and
//! put back when its data or description annotation changes (upstream's
//! root-ca-certificate-publisher-controller).

use std::collections::BTreeMap;

use kapi_api_types::core::v1::ConfigMap;
use kapi_runtime::meta::ObjectMeta;

use super::per_namespace::Kept;

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

impl RootCaPublisher {
    /// The data the ConfigMap holds: the one key.
    fn data(&self) -> BTreeMap<String, String> {
        BTreeMap::from([(ROOT_CA_KEY.to_owned(), self.ca_pem.clone())])
    }
}

impl Kept for RootCaPublisher {
    type Object = ConfigMap;

    fn controller(&self) -> &'static str {
        "root-ca-certificate-publisher-controller"
    }

    fn name(&self) -> &'static str {
        ROOT_CA_CONFIG_MAP
    }

    fn desired(&self, namespace: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(ROOT_CA_CONFIG_MAP.to_owned()),
                namespace: Some(namespace.to_owned()),
                annotations: Some(BTreeMap::from([(
                    DESCRIPTION_ANNOTATION.to_owned(),
                    DESCRIPTION.to_owned(),
                )])),
                ..ObjectMeta::default()
            },
            data: Some(self.data()),
            ..ConfigMap::default()
        }
    }

    /// The data must be exactly the one key and the annotation non-empty.
    fn repaired(&self, current: &ConfigMap) -> Option<ConfigMap> {
        let data = self.data();
        let annotations = current.metadata.annotations.as_ref();
        let described = annotations
            .and_then(|a| a.get(DESCRIPTION_ANNOTATION))
            .is_some_and(|d| !d.is_empty());
        if current.data.as_ref() == Some(&data) && described {
            return None;
        }
        let mut repaired = current.clone();
        repaired.data = Some(data);
        repaired
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(DESCRIPTION_ANNOTATION.to_owned(), DESCRIPTION.to_owned());
        Some(repaired)
    }
}
