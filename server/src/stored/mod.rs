//! Objects as the storage backend keeps them: the key of each object (the
//! resource prefixes kube-apiserver writes under) and its encoding in the
//! storage version (JSON or protobuf, `--storage-media-type`). Below the
//! watch cache and the registry, which both read stored objects.

pub mod codec;
pub mod keys;
pub mod migrate;

pub use codec::{StorageMediaType, decode_stored};
