//! Storage keys, laid out as Kubernetes lays them out in etcd so that an operator
//! who knows Kubernetes can read a dump: `/registry/<group>/<resource>/<ns>/<name>`,
//! the core group without its (empty) group segment.

use kapi_runtime::ResourceInfo;

/// The prefix under which all objects of a kind live, optionally in one namespace.
pub fn prefix(info: &ResourceInfo, namespace: Option<&str>) -> String {
    let mut key = String::from("/registry/");
    if !info.group.is_empty() {
        key.push_str(info.group);
        key.push('/');
    }
    key.push_str(info.plural);
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
