//! Storage keys, laid out as kube-apiserver 1.32 lays them out in etcd so
//! that kapi and kube-apiserver can share one etcd, and an operator who knows
//! Kubernetes can read a dump: `/registry/<storage prefix>/<ns>/<name>`, where
//! the storage prefix is the kind's ([`ResourceInfo::storage_prefix`]: the
//! bare plural or an older name for kube-apiserver's own kinds,
//! `<group>/<plural>` for the others). The etcd backend puts `/registry` under
//! `--etcd-prefix`.

use kapi_runtime::ResourceInfo;

/// The root every object key starts with.
pub const ROOT: &str = "/registry/";

/// The prefix under which all objects of a kind live, optionally in one namespace.
pub fn prefix(info: &ResourceInfo, namespace: Option<&str>) -> String {
    let mut key = String::with_capacity(
        ROOT.len() + info.storage_prefix.len() + namespace.map_or(0, str::len) + 2,
    );
    key.push_str(ROOT);
    key.push_str(info.storage_prefix);
    key.push('/');
    if let Some(ns) = namespace.filter(|_| info.namespaced) {
        key.push_str(ns);
        key.push('/');
    }
    key
}

/// The key of one object.
pub fn object(info: &ResourceInfo, namespace: Option<&str>, name: &str) -> String {
    let mut key = prefix(info, namespace);
    key.push_str(name);
    key
}
