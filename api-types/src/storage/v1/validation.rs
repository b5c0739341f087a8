//! The checks of pkg/apis/storage/validation, one module per kind.

pub(super) mod csi;
pub(super) mod csistoragecapacity;
pub(super) mod storageclass;
pub(super) mod volume_attachment;
