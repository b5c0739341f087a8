//! The recorded upstream cases of the smaller core kinds: endpoints, limit
//! ranges, resource quotas, pod templates and service accounts (one
//! `upstream_cases!` list per kind, as in `validation.rs`), and the `Warning`
//! headers kube-apiserver 1.32 answered for the core kinds
//! (`<case>.warnings.txt` beside the manifest).

use super::upstream;
use crate::common::{admit_clean, fixture};
use kapi_api_types::core::v1::{
    Endpoints, LimitRange, Node, PersistentVolume, PersistentVolumeClaim, Pod, PodTemplate,
    ResourceQuota, Secret, Service, ServiceAccount,
};
use kapi_runtime::Resource;

upstream_cases!(Endpoints, "core":
    endpoints_subsets,
    endpoints_single_port,
    endpoints_ip_forms,
    endpoints_update,
);

upstream_cases!(LimitRange, "core":
    limitrange_types,
    limitrange_relations,
    limitrange_pvc,
);

// `core/quota_status_update` was recorded by hand through `/status` (not by
// `capture.py`, which would send it to the main endpoint): its spec is the
// stored one, so the checks of the usage are all that answer.
upstream_cases!(ResourceQuota, "core":
    quota_hard,
    quota_scopes,
    quota_scope_selector,
    quota_update,
    quota_status_update,
);

upstream_cases!(PodTemplate, "core":
    podtemplate_spec,
    podtemplate_empty,
    podtemplate_update,
);

/// The texts of `<case>.warnings.txt`, one warning a line.
fn recorded_warnings(case: &str) -> Vec<String> {
    let path = format!(
        "{}/tests/fixtures/validation/core/{case}.warnings.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines().map(str::to_owned).collect()
}

/// Decodes and admits `core/<case>.in.json` (and `.old.json` for an update)
/// and returns the kind's warnings, sorted with the recorded ones.
fn warnings_of<K: Resource + serde::de::DeserializeOwned>(
    case: &str,
) -> (Vec<String>, Vec<String>) {
    let load = |suffix: &str| -> Option<K> {
        let path = format!(
            "{}/tests/fixtures/validation/core/{case}.{suffix}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(path).ok()?;
        let value = admit_clean::<K>(serde_json::from_str(&text).expect("JSON"));
        Some(serde_json::from_value(value).expect("the admitted object decodes"))
    };
    let new = load("in").expect("the case's manifest");
    let old = load("old");
    let mut ours = new.warnings(old.as_ref());
    let mut theirs = recorded_warnings(case);
    ours.sort();
    theirs.sort();
    (ours, theirs)
}

/// Anything goes in a service account's references (upstream validates only
/// its metadata), as kube-apiserver 1.32 accepted; the secrets keep only their
/// names, as it answered.
#[test]
fn service_account_references_are_not_validated() {
    let admitted =
        admit_clean::<ServiceAccount>(fixture("validation/core/serviceaccount_refs.in.json"));
    assert_eq!(
        admitted["secrets"],
        serde_json::json!([{"name": "Not_A_Valid Name"}, {}, {}])
    );
}

#[test]
fn service_account_warnings() {
    let (ours, theirs) = warnings_of::<ServiceAccount>("warn_serviceaccount");
    assert_eq!(ours, theirs);
}

/// Service addresses only the lenient parser reads, IPv6 addresses and
/// prefixes not in RFC 5952 form, the deprecated topology annotation, and
/// fields the type ignores: accepted with warnings, as kube-apiserver 1.32
/// answered.
#[test]
fn service_warnings() {
    for case in [
        "warn_service_ips",
        "warn_service_lb",
        "warn_service_external_name",
    ] {
        let (ours, theirs) = warnings_of::<Service>(case);
        assert_eq!(ours, theirs, "{case}");
    }
}

/// Deprecated storage-class annotations, reclaim policy, node labels and
/// volume plugins, and storage sizes that are not whole bytes (after the
/// rounding up to milli-units every resource list gets): accepted with
/// warnings, as kube-apiserver 1.32 answered.
#[test]
fn storage_warnings() {
    for case in ["warn_pv", "warn_pv_cephfs"] {
        let (ours, theirs) = warnings_of::<PersistentVolume>(case);
        assert_eq!(ours, theirs, "{case}");
    }
    for case in ["warn_pvc", "warn_pvc_micro"] {
        let (ours, theirs) = warnings_of::<PersistentVolumeClaim>(case);
        assert_eq!(ours, theirs, "{case}");
    }
}

/// A node's deprecated `externalID`, and a pod's deprecated node labels in
/// its node affinity and fractional sizes in its ephemeral volume claims.
#[test]
fn node_and_pod_warnings() {
    let (ours, theirs) = warnings_of::<Node>("warn_node");
    assert_eq!(ours, theirs);
    let (ours, theirs) = warnings_of::<Pod>("warn_pod_affinity");
    assert_eq!(ours, theirs);
}

/// A TLS secret whose certificate and key do not load as a pair: each of
/// Go's `tls.X509KeyPair` refusals that the PEM blocks decide, and a valid
/// pair without warnings.
#[test]
fn tls_secret_warnings() {
    for case in [
        "warn_secret_empty",
        "warn_secret_switched",
        "warn_secret_skipped",
        "warn_secret_nokey",
        "warn_secret_certkey",
        "warn_secret_malformed",
        "warn_secret_valid",
    ] {
        let (ours, theirs) = warnings_of::<Secret>(case);
        assert_eq!(ours, theirs, "{case}");
    }
}
