//! `storage.k8s.io/v1`.

pub mod volume_attachment;

pub use volume_attachment::VolumeAttachment;
