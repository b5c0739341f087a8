//! Where the server's keys live in etcd.
//!
//! The server names every object `/registry/<...>`, as Kubernetes does. An
//! [`EtcdStore`](super::EtcdStore) with the default prefix `/registry` stores
//! keys exactly as given, so an etcd dump reads like a Kubernetes one. With
//! another prefix, say `/cluster-b`, the leading `/registry` segment is replaced
//! by it (`/registry/configmaps/default/app` is stored at
//! `/cluster-b/configmaps/default/app`), so several kapi clusters can share one
//! etcd without seeing each other's objects. Keys outside `/registry` (tests,
//! tools) are stored as given.
//!
//! The rule keeps prefixes: a key under a prefix maps under the prefix's image,
//! so the keys a range or a watch returns are turned back into the caller's
//! names by swapping the mapped prefix for the caller's one.

/// The name the server gives the root of its keys.
const SERVER_ROOT: &str = "/registry";

/// Maps the server's keys onto etcd keys (see the module documentation).
#[derive(Clone, Debug)]
pub(super) struct KeyMap {
    /// The configured prefix without a trailing `/`.
    prefix: String,
}

impl KeyMap {
    /// The map for `--etcd-prefix=<prefix>`, read as kube-apiserver reads
    /// it (`path.Join("/", prefix)`): `registry`, `/registry` and
    /// `/registry/` are one prefix, and `//a/./b` is `/a/b`.
    pub(super) fn new(prefix: &str) -> KeyMap {
        KeyMap {
            prefix: clean(prefix),
        }
    }

    /// The etcd key (or key prefix) for a key (or key prefix) of the server.
    pub(super) fn to_etcd(&self, key: &str) -> String {
        match key.strip_prefix(SERVER_ROOT) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                format!("{}{rest}", self.prefix)
            }
            _ => key.to_owned(),
        }
    }

    /// A key or prefix given by a caller together with its etcd image.
    pub(super) fn scope(&self, caller: &str) -> Scope {
        Scope {
            etcd: self.to_etcd(caller),
            caller: caller.to_owned(),
        }
    }
}

/// Go's `path.Join("/", prefix)` without its trailing `/` (empty for the
/// root): empty and `.` segments dropped, `..` taking one back.
fn clean(prefix: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in prefix.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    segments.iter().fold(String::new(), |mut path, s| {
        path.push('/');
        path.push_str(s);
        path
    })
}

/// A caller's key prefix and its etcd image, to name returned keys back.
#[derive(Clone, Debug)]
pub(super) struct Scope {
    pub(super) caller: String,
    pub(super) etcd: String,
}

impl Scope {
    /// The caller's name of an etcd key under this scope; `None` for a key
    /// outside it (which a range or watch over the scope never returns).
    pub(super) fn to_caller(&self, etcd_key: &str) -> Option<String> {
        let rest = etcd_key.strip_prefix(&self.etcd)?;
        Some(format!("{}{rest}", self.caller))
    }
}

/// The end of etcd's range of keys starting with `prefix` (exclusive): the
/// prefix with its last byte below 0xff incremented, as clientv3's
/// `GetPrefixRangeEnd`; `\0` (to the end of the keyspace) when there is none.
pub(super) fn prefix_range_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// The first key strictly after `key`: ranges resume there after a page.
pub(super) fn key_after(key: &str) -> Vec<u8> {
    let mut next = key.as_bytes().to_vec();
    next.push(0);
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_prefix_keeps_keys_as_given() {
        let map = KeyMap::new("/registry");
        assert_eq!(map.to_etcd("/registry/pods/ns/a"), "/registry/pods/ns/a");
        assert_eq!(map.to_etcd("/conformance/1/x"), "/conformance/1/x");
    }

    #[test]
    fn other_prefix_replaces_the_registry_segment_only() {
        let map = KeyMap::new("/cluster-b/");
        assert_eq!(map.to_etcd("/registry/pods/ns/a"), "/cluster-b/pods/ns/a");
        assert_eq!(map.to_etcd("/registry/"), "/cluster-b/");
        assert_eq!(map.to_etcd("/registry"), "/cluster-b");
        assert_eq!(map.to_etcd("/registryx/a"), "/registryx/a");
        assert_eq!(map.to_etcd("/other/a"), "/other/a");
    }

    #[test]
    fn the_prefix_is_read_as_kube_apiserver_joins_it() {
        for given in [
            "registry",
            "/registry",
            "/registry/",
            "//registry//",
            "/a/../registry",
        ] {
            let map = KeyMap::new(given);
            assert_eq!(
                map.to_etcd("/registry/pods/ns/a"),
                "/registry/pods/ns/a",
                "{given}"
            );
        }
        assert_eq!(KeyMap::new("/").to_etcd("/registry/pods/a"), "/pods/a");
        assert_eq!(KeyMap::new("a/./b").to_etcd("/registry/x"), "/a/b/x");
    }

    #[test]
    fn scope_names_keys_back() {
        let scope = KeyMap::new("/b").scope("/registry/pods/");
        assert_eq!(scope.etcd, "/b/pods/");
        assert_eq!(
            scope.to_caller("/b/pods/ns/a").as_deref(),
            Some("/registry/pods/ns/a")
        );
        assert_eq!(scope.to_caller("/c/pods/ns/a"), None);
    }

    #[test]
    fn range_ends() {
        assert_eq!(prefix_range_end(b"/a/"), b"/a0".to_vec());
        assert_eq!(prefix_range_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_range_end(b"\xff"), vec![0]);
        assert_eq!(key_after("/a"), b"/a\0".to_vec());
    }
}
