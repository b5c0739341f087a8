//! `ValidateCSIStorageCapacity` and `ValidateCSIStorageCapacityUpdate`.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::super::csistoragecapacity::CSIStorageCapacity;
use crate::validation::{
    GoSelector, Raw, dns1123_subdomain, nonnegative_quantity, validate_label_selector,
};

/// The `CSIStorageCapacity` hook: the node selector, a storage class named
/// as a DNS subdomain (an empty name gets the subdomain error, not
/// `Required`), and a capacity that is not negative. The largest volume size
/// is not checked, as upstream does not.
pub(crate) fn validate_csi_storage_capacity(
    capacity: &CSIStorageCapacity,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if let Some(selector) = &capacity.node_topology {
        validate_label_selector(selector, &path.child("nodeTopology"), errs);
    }
    dns1123_subdomain(
        &capacity.storage_class_name,
        &path.child("storageClassName"),
        errs,
    );
    if let Some(quantity) = &capacity.capacity {
        nonnegative_quantity(quantity, &path.child("capacity"), errs);
    }
}

/// The `CSIStorageCapacity` update hook: the inputs of the driver's capacity
/// query, the node selector and the storage class, are immutable.
pub(crate) fn validate_csi_storage_capacity_update(
    new: &CSIStorageCapacity,
    old: &CSIStorageCapacity,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if new.node_topology != old.node_topology {
        let path = path.child("nodeTopology");
        match &new.node_topology {
            None => errs.invalid(path, "null", "field is immutable"),
            Some(selector) => errs.invalid(
                path,
                Raw(&format!("{:?}", GoSelector(selector))),
                "field is immutable",
            ),
        }
    }
    if new.storage_class_name != old.storage_class_name {
        errs.invalid(
            path.child("storageClassName"),
            new.storage_class_name.as_str(),
            "field is immutable",
        );
    }
}
