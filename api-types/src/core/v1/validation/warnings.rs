//! The `Warning` headers of writes of core kinds other than pods, services
//! and service accounts, as kube-apiserver 1.32 sends them on create and
//! update alike: deprecated storage-class annotations, volume plugins, node
//! labels and fields, fractional byte sizes, and TLS secrets whose pair
//! does not load.

use std::collections::BTreeMap;

use kapi_runtime::Quantity;
use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::validation::FieldPath;

use crate::certificates::v1::validation::pem;
use crate::core::v1::pod::claim::{PersistentVolumeClaimSpec, VolumeResourceRequirements};
use crate::core::v1::pod::warnings::{fractional, node_selector_term_warnings};
use crate::core::v1::{Node, PersistentVolume, PersistentVolumeClaim, Secret};

const BETA_STORAGE_CLASS: &str = "volume.beta.kubernetes.io/storage-class";
const BETA_STORAGE_CLASS_MESSAGE: &str =
    "deprecated since v1.8; use \"storageClassName\" attribute instead";

/// `GetWarningsForPersistentVolume`.
pub(crate) fn pv_warnings(pv: &PersistentVolume, _old: Option<&PersistentVolume>) -> Vec<String> {
    let mut warnings = Vec::new();
    storage_class_annotation(&pv.metadata, &mut warnings);
    let spec = &pv.spec;
    if spec.persistent_volume_reclaim_policy.as_deref() == Some("Recycle") {
        warnings.push(
            "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. \
             Instead, the recommended approach is to use dynamic provisioning."
                .to_owned(),
        );
    }
    let terms = spec
        .node_affinity
        .as_ref()
        .and_then(|a| a.required.as_ref())
        .map(|r| r.node_selector_terms.as_slice())
        .unwrap_or_default();
    let terms_path = FieldPath::new("spec.nodeAffinity.required.nodeSelectorTerms");
    for (i, term) in terms.iter().enumerate() {
        node_selector_term_warnings(term, &terms_path.index(i), &mut warnings);
    }
    let plugins = [
        (
            spec.cephfs.is_some(),
            "cephfs",
            "deprecated in v1.28, non-functional in v1.31+",
        ),
        (
            spec.photon_persistent_disk.is_some(),
            "photonPersistentDisk",
            "deprecated in v1.11, non-functional in v1.16+",
        ),
        (
            spec.scale_io.is_some(),
            "scaleIO",
            "deprecated in v1.16, non-functional in v1.22+",
        ),
        (
            spec.storageos.is_some(),
            "storageOS",
            "deprecated in v1.22, non-functional in v1.25+",
        ),
        (
            spec.glusterfs.is_some(),
            "glusterfs",
            "deprecated in v1.25, non-functional in v1.26+",
        ),
        (
            spec.rbd.is_some(),
            "rbd",
            "deprecated in v1.28, non-functional in v1.31+",
        ),
    ];
    for (_, field, message) in plugins.iter().filter(|(used, ..)| *used) {
        warnings.push(format!("spec.{field}: {message}"));
    }
    warnings
}

/// `GetWarningsForPersistentVolumeClaim`.
pub(crate) fn pvc_warnings(
    pvc: &PersistentVolumeClaim,
    _old: Option<&PersistentVolumeClaim>,
) -> Vec<String> {
    let mut warnings = Vec::new();
    storage_class_annotation(&pvc.metadata, &mut warnings);
    claim_spec_warnings(&FieldPath::new("spec"), &pvc.spec, &mut warnings);
    warnings
}

/// `GetWarningsForPersistentVolumeClaimSpec` at `path` (a claim's `spec`,
/// or an ephemeral volume's claim template): storage sizes that are not a
/// whole number of bytes.
pub(crate) fn claim_spec_warnings(
    path: &FieldPath,
    spec: &PersistentVolumeClaimSpec,
    warnings: &mut Vec<String>,
) {
    let VolumeResourceRequirements { limits, requests } = &spec.resources;
    let resources = path.child("resources");
    for (name, amounts) in [("requests", requests), ("limits", limits)] {
        if let Some(text) = fractional_storage(amounts.as_ref()) {
            warnings.push(format!(
                "{}: fractional byte value {text:?} is invalid, must be an integer",
                resources.child(name).key("storage")
            ));
        }
    }
}

fn fractional_storage(amounts: Option<&BTreeMap<String, Quantity>>) -> Option<String> {
    fractional(&amounts?.get("storage")?.0)
}

fn storage_class_annotation(meta: &ObjectMeta, warnings: &mut Vec<String>) {
    let annotations = meta.annotations.as_ref();
    if annotations.is_some_and(|a| a.contains_key(BETA_STORAGE_CLASS)) {
        let field = FieldPath::new("metadata.annotations").key(BETA_STORAGE_CLASS);
        warnings.push(format!("{field}: {BETA_STORAGE_CLASS_MESSAGE}"));
    }
}

/// The node strategy's deprecated-field warning (`spec.externalID`).
pub(crate) fn node_warnings(node: &Node, _old: Option<&Node>) -> Vec<String> {
    match node.spec.external_id.as_deref() {
        Some(id) if !id.is_empty() => {
            vec![
                "spec.externalID: this field is deprecated, and is unused by Kubernetes".to_owned(),
            ]
        }
        _ => Vec::new(),
    }
}

/// A `kubernetes.io/tls` secret whose certificate and key do not load as a
/// pair (Go's `tls.X509KeyPair`), with Go's words.
pub(crate) fn secret_warnings(secret: &Secret, _old: Option<&Secret>) -> Vec<String> {
    if secret.type_.as_deref() != Some("kubernetes.io/tls") {
        return Vec::new();
    }
    let data = |key: &str| {
        let value = secret.data.as_ref().and_then(|d| d.get(key));
        value.map(|v| v.0.as_slice()).unwrap_or_default()
    };
    tls_pair_error(data("tls.crt"), data("tls.key"))
        .into_iter()
        .collect()
}

/// Why `tls.X509KeyPair` refuses the pair, as far as the PEM blocks and the
/// certificate's outline show it. Whether the private key parses and matches
/// the certificate is not checked.
fn tls_pair_error(cert: &[u8], key: &[u8]) -> Option<String> {
    let (certificates, skipped) = blocks(cert, |kind| kind == "CERTIFICATE");
    let Some(first) = certificates.first() else {
        return Some(match skipped.as_slice() {
            [] => "tls: failed to find any PEM data in certificate input".to_owned(),
            [one] if one.ends_with("PRIVATE KEY") => "tls: failed to find certificate PEM data \
                 in certificate input, but did find a private key; PEM inputs may have been switched"
                .to_owned(),
            _ => format!(
                "tls: failed to find \"CERTIFICATE\" PEM block in certificate input after \
                 skipping PEM blocks of the following types: [{}]",
                skipped.join(" ")
            ),
        });
    };
    let is_key = |kind: &str| kind == "PRIVATE KEY" || kind.ends_with(" PRIVATE KEY");
    let (keys, skipped) = blocks(key, is_key);
    if keys.is_empty() {
        return Some(match skipped.as_slice() {
            [] => "tls: failed to find any PEM data in key input".to_owned(),
            [one] if one == "CERTIFICATE" => {
                "tls: found a certificate rather than a key in the PEM for the private key"
                    .to_owned()
            }
            _ => format!(
                "tls: failed to find PEM block with type ending in \"PRIVATE KEY\" in key input \
                 after skipping PEM blocks of the following types: [{}]",
                skipped.join(" ")
            ),
        });
    }
    (!pem::is_certificate(first)).then(|| "x509: malformed certificate".to_owned())
}

/// The bodies of the PEM blocks of `data` that `wanted` accepts, and the
/// types of the others.
fn blocks(data: &[u8], wanted: impl Fn(&str) -> bool) -> (Vec<Vec<u8>>, Vec<String>) {
    let (mut found, mut skipped) = (Vec::new(), Vec::new());
    let mut rest = data;
    while let Some((block, after)) = pem::decode(rest) {
        if wanted(&block.kind) {
            found.push(block.der);
        } else {
            skipped.push(block.kind);
        }
        rest = after;
    }
    (found, skipped)
}
