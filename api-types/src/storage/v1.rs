//! `storage.k8s.io/v1`.

pub mod csidriver;
pub mod csinode;
pub mod csistoragecapacity;
mod defaults;
pub mod storageclass;
mod validation;
pub mod volume_attachment;

pub use csidriver::CSIDriver;
pub use csinode::CSINode;
pub use csistoragecapacity::CSIStorageCapacity;
pub use storageclass::StorageClass;
pub use volume_attachment::VolumeAttachment;
