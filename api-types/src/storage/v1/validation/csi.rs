//! `ValidateCSIDriver`, `ValidateCSIDriverUpdate` and `ValidateCSINode`.

use std::collections::BTreeSet;

use kapi_runtime::validation::{FieldErrors, FieldPath, qualified_name_errors};

use super::super::csidriver::{CSIDriver, CSIDriverSpec, TokenRequest};
use super::super::csinode::{CSINode, CSINodeDriver, CSINodeSpec};
use crate::core::v1::pod::validation::csi_driver_name;
use crate::validation::{GoStrings, Raw, nonnegative};

/// The longest node ID (`csiNodeIDLongerMaxLength`, which kube-apiserver
/// 1.32 allows on every write).
const MAX_NODE_ID_LEN: usize = 256;
/// Bounds of a token's lifetime, in seconds.
const MIN_TOKEN_SECONDS: i64 = 10 * 60;
const MAX_TOKEN_SECONDS: i64 = 1 << 32;

/// The `CSIDriverSpec` hook (`validateCSIDriverSpec`). The booleans upstream
/// requires are defaulted; `attachRequired` is reported as
/// `attachedRequired`, as upstream spells it.
pub(crate) fn validate_csi_driver_spec(
    spec: &CSIDriverSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let required = [
        ("attachedRequired", spec.attach_required.is_none()),
        ("podInfoOnMount", spec.pod_info_on_mount.is_none()),
        ("storageCapacity", spec.storage_capacity.is_none()),
    ];
    for (field, missing) in required {
        if missing {
            errs.required(path.child(field), "");
        }
    }
    if let Some(policy) = spec.fs_group_policy.as_deref()
        && !matches!(policy, "File" | "None" | "ReadWriteOnceWithFSType")
    {
        errs.not_supported(
            path.child("fsGroupPolicy"),
            policy,
            &["File", "None", "ReadWriteOnceWithFSType"],
        );
    }
    let requests = spec.token_requests.as_deref().unwrap_or_default();
    token_requests(requests, &path.child("tokenRequests"), errs);
    for mode in spec.volume_lifecycle_modes.iter().flatten() {
        if !matches!(mode.as_str(), "Persistent" | "Ephemeral") {
            // Upstream points at the list, not the item.
            errs.not_supported(
                path.child("volumeLifecycleModes"),
                mode,
                &["Persistent", "Ephemeral"],
            );
        }
    }
}

/// `validateTokenRequests`: one request per audience, lifetimes between ten
/// minutes and 2^32 seconds.
fn token_requests(requests: &[TokenRequest], path: &FieldPath, errs: &mut FieldErrors) {
    let mut audiences = BTreeSet::new();
    for (i, request) in requests.iter().enumerate() {
        let item = path.index(i);
        if !audiences.insert(request.audience.as_str()) {
            errs.duplicate(item.child("audience"), request.audience.as_str());
            continue;
        }
        let Some(seconds) = request.expiration_seconds else {
            continue;
        };
        if seconds < MIN_TOKEN_SECONDS {
            errs.invalid(
                item.child("expirationSeconds"),
                seconds,
                "may not specify a duration less than 10 minutes",
            );
        }
        if seconds > MAX_TOKEN_SECONDS {
            errs.invalid(
                item.child("expirationSeconds"),
                seconds,
                "may not specify a duration larger than 2^32 seconds",
            );
        }
    }
}

/// The `CSIDriver` update hook: `attachRequired` (upstream's path says
/// `attachedRequired`) and the lifecycle modes are immutable.
pub(crate) fn validate_csi_driver_update(
    new: &CSIDriver,
    old: &CSIDriver,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let spec_path = path.child("spec");
    if new.spec.attach_required != old.spec.attach_required {
        let value = new
            .spec
            .attach_required
            .map_or("<nil>".to_owned(), |b| b.to_string());
        errs.invalid(
            spec_path.child("attachedRequired"),
            crate::validation::Raw(&value),
            "field is immutable",
        );
    }
    if new.spec.volume_lifecycle_modes != old.spec.volume_lifecycle_modes {
        let value = match &new.spec.volume_lifecycle_modes {
            None => "[]storage.VolumeLifecycleMode(nil)".to_owned(),
            Some(modes) => {
                let quoted: Vec<String> = modes.iter().map(|m| format!("{m:?}")).collect();
                format!("[]storage.VolumeLifecycleMode{{{}}}", quoted.join(", "))
            }
        };
        errs.invalid(
            spec_path.child("volumeLifecycleModes"),
            crate::validation::Raw(&value),
            "field is immutable",
        );
    }
}

/// The `CSINodeSpec` hook (`validateCSINodeDrivers`). Empty names and node
/// IDs are the field rules' `Required`. Topology key errors point at the
/// driver, as upstream's do.
pub(crate) fn validate_csi_node_spec(spec: &CSINodeSpec, path: &FieldPath, errs: &mut FieldErrors) {
    let mut names = BTreeSet::new();
    for (i, driver) in spec.drivers.iter().flatten().enumerate() {
        let item = path.child("drivers").index(i);
        csi_driver_name(&driver.name, &item.child("name"), errs);
        if driver.node_id.len() > MAX_NODE_ID_LEN {
            errs.invalid(
                item.child("nodeID"),
                driver.node_id.as_str(),
                &format!("must be {MAX_NODE_ID_LEN} characters or less"),
            );
        }
        let count = driver.allocatable.as_ref().and_then(|a| a.count);
        nonnegative(
            count.map(i64::from),
            &item.child("allocatable").child("count"),
            errs,
        );
        if !names.insert(driver.name.as_str()) {
            errs.duplicate(item.child("name"), driver.name.as_str());
        }
        let mut keys = BTreeSet::new();
        for key in driver.topology_keys.iter().flatten() {
            if key.is_empty() {
                errs.required(item.clone(), "");
            }
            if !keys.insert(key.as_str()) {
                errs.duplicate(item.clone(), key.as_str());
            }
            for detail in qualified_name_errors(key) {
                errs.invalid(item.clone(), key.as_str(), &detail);
            }
        }
    }
}

/// The `CSINode` update hook: a driver that the old object lists already
/// keeps its node ID, topology keys and allocatable resources. Each changed
/// driver is one error at upstream's path `CSINodeDriver`, naming the new
/// driver as Go prints it. kube-apiserver 1.32 validates the new spec twice
/// on update (once as a create, once inside the update check), so every
/// spec error, the field rules' `Required` ones included, comes twice.
pub(crate) fn validate_csi_node_update(
    new: &CSINode,
    old: &CSINode,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let spec_path = path.child("spec");
    for (i, driver) in new.spec.drivers.iter().flatten().enumerate() {
        let item = spec_path.child("drivers").index(i);
        if driver.name.is_empty() {
            errs.required(item.child("name"), "");
        }
        if driver.node_id.is_empty() {
            errs.required(item.child("nodeID"), "");
        }
    }
    validate_csi_node_spec(&new.spec, &spec_path, errs);
    for old_driver in old.spec.drivers.iter().flatten() {
        let same_name = new.spec.drivers.iter().flatten();
        for new_driver in same_name.filter(|d| d.name == old_driver.name) {
            if !same_driver(new_driver, old_driver) {
                errs.invalid(
                    path.child("CSINodeDriver"),
                    Raw(&go_driver(new_driver)),
                    "field is immutable",
                );
            }
        }
    }
}

/// Semantic equality: an empty topology key list equals an absent one.
fn same_driver(a: &CSINodeDriver, b: &CSINodeDriver) -> bool {
    let keys = |d: &CSINodeDriver| d.topology_keys.clone().unwrap_or_default();
    a.name == b.name
        && a.node_id == b.node_id
        && keys(a) == keys(b)
        && a.allocatable == b.allocatable
}

/// A driver as Go's `%#v` prints it. A set `allocatable` is a pointer there
/// (an address we cannot match); we print a placeholder.
fn go_driver(driver: &CSINodeDriver) -> String {
    let allocatable = match driver.allocatable {
        None => "(*storage.VolumeNodeResources)(nil)",
        Some(_) => "(*storage.VolumeNodeResources)(0xc000000000)",
    };
    format!(
        "storage.CSINodeDriver{{Name:{:?}, NodeID:{:?}, TopologyKeys:{:?}, Allocatable:{allocatable}}}",
        driver.name,
        driver.node_id,
        GoStrings(driver.topology_keys.as_deref()),
    )
}
