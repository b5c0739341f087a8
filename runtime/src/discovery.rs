//! Discovery documents computed from a [`Scheme`]: served by the server and
//! written to `generated/` by the build script (one function, so they agree).

use std::collections::BTreeMap;

use crate::meta::{
    APIGroup, APIGroupDiscovery, APIGroupDiscoveryList, APIGroupList, APIResource,
    APIResourceDiscovery, APIResourceList, APISubresourceDiscovery, APIVersionDiscovery,
    GroupVersionForDiscovery, GroupVersionKind, ListMeta, ObjectMeta, TypeMeta,
};
use crate::resource_info::{BodyKind, ResourceInfo, Subresource};
use crate::scheme::{KindEntry, Scheme};

/// The verbs every kind serves, in the order Kubernetes lists them.
pub const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The verbs of a `/status` subresource.
pub const STATUS_VERBS: &[&str] = &["get", "patch", "update"];

fn types(kind: &str, api_version: &str) -> TypeMeta {
    TypeMeta {
        kind: kind.into(),
        api_version: api_version.into(),
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn non_empty(items: &[&str]) -> Option<Vec<String>> {
    (!items.is_empty()).then(|| strings(items))
}

/// kube-apiserver's order of the built-in groups in `/apis` (its group
/// priorities): clients resolving a short or plural name that two groups share
/// take the first, so the order is part of the wire contract. Other groups
/// follow, by name.
const GROUP_ORDER: &[&str] = &[
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

/// Versions of each group (the first is preferred), groups in kube-apiserver's
/// order.
fn groups(scheme: &Scheme) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut groups: BTreeMap<(usize, &str), Vec<&str>> = BTreeMap::new();
    for entry in scheme.entries() {
        let group = entry.info.group;
        let rank = GROUP_ORDER
            .iter()
            .position(|g| *g == group)
            .unwrap_or(GROUP_ORDER.len());
        let versions = groups.entry((rank, group)).or_default();
        if !versions.contains(&entry.info.version) {
            versions.push(entry.info.version);
        }
    }
    groups
        .into_iter()
        .map(|((_, g), mut v)| {
            v.sort_by_key(|version| version_priority(version));
            (g, v)
        })
        .collect()
}

/// The sort key of a version in discovery, Kubernetes' kube-aware order: GA
/// versions first, then beta, then alpha, each newest first (`v2`, `v1`,
/// `v2beta1`, `v1beta2`, `v1alpha1`); other strings last, by name. The first
/// is the group's preferred version.
pub fn version_priority(
    version: &str,
) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, &str) {
    use std::cmp::Reverse;
    let parsed = version.strip_prefix('v').and_then(|rest| {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let (level, minor) = match &rest[digits..] {
            "" => (0, ""),
            tail if tail.starts_with("beta") => (1, &tail[4..]),
            tail if tail.starts_with("alpha") => (2, &tail[5..]),
            _ => return None,
        };
        let minor: u64 = match minor {
            "" if level == 0 => 0,
            minor => minor.parse().ok()?,
        };
        Some((level, major, minor))
    });
    match parsed {
        Some((level, major, minor)) => (level, Reverse(major), Reverse(minor), ""),
        None => (3, Reverse(0), Reverse(0), version),
    }
}

fn group_version(group: &str, version: &str) -> GroupVersionForDiscovery {
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    GroupVersionForDiscovery {
        group_version,
        version: version.to_owned(),
    }
}

/// `/apis/<group>`: one named group, or `None` when not served.
pub fn group(scheme: &Scheme, name: &str) -> Option<APIGroup> {
    let groups = groups(scheme);
    let versions = groups
        .iter()
        .find(|(g, _)| *g == name && !name.is_empty())
        .map(|(_, v)| v)?;
    let versions: Vec<_> = versions.iter().map(|v| group_version(name, v)).collect();
    Some(APIGroup {
        types: types("APIGroup", "v1"),
        name: name.to_owned(),
        preferred_version: versions.first().cloned().unwrap_or_default(),
        versions,
        server_address_by_client_cidrs: None,
    })
}

/// `/apis`: every named group.
pub fn group_list(scheme: &Scheme) -> APIGroupList {
    let groups = groups(scheme)
        .into_iter()
        .map(|(g, _)| g)
        .filter(|g| !g.is_empty())
        .filter_map(|g| group(scheme, g))
        .map(|mut g| {
            g.types = TypeMeta::default();
            g
        })
        .collect();
    APIGroupList {
        types: types("APIGroupList", "v1"),
        groups,
    }
}

/// `/api/v1`, `/apis/<group>/<version>`: or `None` when not served.
pub fn resource_list(scheme: &Scheme, group: &str, version: &str) -> Option<APIResourceList> {
    let mut resources = Vec::new();
    for entry in scheme
        .entries()
        .filter(|e| e.info.group == group && e.info.version == version)
    {
        let info = entry.info;
        resources.push(api_resource(entry));
        for sub in listed_subresources(entry) {
            // Named only when they differ from the resource's own.
            let (group, version) = match sub.body {
                Some(b) if (b.group, b.version) != (info.group, info.version) => {
                    (Some(b.group.to_owned()), Some(b.version.to_owned()))
                }
                _ => (None, None),
            };
            resources.push(APIResource {
                name: format!("{}/{}", info.plural, sub.name),
                singular_name: String::new(),
                namespaced: info.namespaced,
                group,
                version,
                kind: sub.body.map_or(info.kind, |b| b.kind).to_owned(),
                verbs: strings(sub.verbs),
                ..APIResource::default()
            });
        }
    }
    if resources.is_empty() {
        return None;
    }
    Some(APIResourceList {
        types: types("APIResourceList", "v1"),
        group_version: group_version(group, version).group_version,
        resources,
    })
}

/// Every subresource of a kind, `status` and `scale` included, in name order
/// (as kube-apiserver lists them).
pub fn subresources(info: &ResourceInfo) -> Vec<Subresource> {
    let mut all: Vec<Subresource> = info.subresources.to_vec();
    if info.status_subresource {
        all.push(Subresource {
            name: "status",
            verbs: STATUS_VERBS,
            body: None,
        });
    }
    if info.scale.is_some() {
        all.push(Subresource {
            name: "scale",
            verbs: STATUS_VERBS,
            body: Some(BodyKind {
                group: "autoscaling",
                version: "v1",
                kind: "Scale",
            }),
        });
    }
    all.sort_by_key(|s| s.name);
    all
}

/// The subresources discovery lists: in name order, but `status` before
/// `scale` for a custom resource, as upstream's handler lists them.
fn listed_subresources(entry: &KindEntry) -> Vec<Subresource> {
    let mut all = subresources(entry.info);
    if entry.is_custom() {
        all.sort_by_key(|s| match s.name {
            "status" => 0,
            "scale" => 1,
            _ => 2,
        });
    }
    all
}

/// The hash of the version a kind is stored in, as discovery publishes it
/// for storage migrators: the first 8 bytes of the SHA-256 of
/// `group/version/kind`, in base64 (upstream's `StorageVersionHash`).
pub fn storage_version_hash(info: &ResourceInfo) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let gvk = format!("{}/{}/{}", info.group, info.version, info.kind);
    let digest = sha2::Sha256::digest(gvk.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

fn api_resource(entry: &KindEntry) -> APIResource {
    let info = entry.info;
    let stored = entry.hub().unwrap_or(info);
    APIResource {
        name: info.plural.to_owned(),
        singular_name: info.singular.to_owned(),
        namespaced: info.namespaced,
        group: None,
        version: None,
        kind: info.kind.to_owned(),
        verbs: strings(info.verbs),
        short_names: non_empty(info.short_names),
        categories: non_empty(info.categories),
        storage_version_hash: Some(storage_version_hash(stored)),
    }
}

/// Aggregated discovery (`apidiscovery.k8s.io/v2`) of the core group (`/api`,
/// `core = true`) or of the named groups (`/apis`).
pub fn aggregated(scheme: &Scheme, core: bool) -> APIGroupDiscoveryList {
    let items = groups(scheme)
        .into_iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, versions)| APIGroupDiscovery {
            metadata: ObjectMeta {
                name: (!g.is_empty()).then(|| g.to_owned()),
                ..ObjectMeta::default()
            },
            versions: versions
                .iter()
                .map(|v| version_discovery(scheme, g, v))
                .collect(),
        })
        .collect();
    APIGroupDiscoveryList {
        types: types("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2"),
        metadata: ListMeta::default(),
        items,
    }
}

fn version_discovery(scheme: &Scheme, group: &str, version: &str) -> APIVersionDiscovery {
    let resources = scheme
        .entries()
        .filter(|e| e.info.group == group && e.info.version == version)
        .map(|entry| {
            let info = entry.info;
            let kind = GroupVersionKind {
                group: group.into(),
                version: version.into(),
                kind: info.kind.into(),
            };
            let subresources: Vec<_> = listed_subresources(entry)
                .into_iter()
                .map(|sub| APISubresourceDiscovery {
                    subresource: sub.name.into(),
                    response_kind: Some(match sub.body {
                        Some(body) => GroupVersionKind {
                            group: body.group.into(),
                            version: body.version.into(),
                            kind: body.kind.into(),
                        },
                        None => kind.clone(),
                    }),
                    verbs: strings(sub.verbs),
                })
                .collect();
            let subresources = (!subresources.is_empty()).then_some(subresources);
            APIResourceDiscovery {
                resource: info.plural.into(),
                response_kind: kind,
                scope: if info.namespaced {
                    "Namespaced"
                } else {
                    "Cluster"
                }
                .into(),
                singular_resource: info.singular.into(),
                verbs: strings(info.verbs),
                short_names: non_empty(info.short_names),
                categories: non_empty(info.categories),
                subresources,
            }
        })
        .collect();
    APIVersionDiscovery {
        version: version.into(),
        resources,
        freshness: Some("Current".into()),
    }
}

/// Every discovery document of a scheme as (file name, pretty JSON), for the
/// checked-in `generated/` directory.
pub fn documents(scheme: &Scheme) -> Vec<(String, String)> {
    let mut docs = vec![("kinds.json".to_owned(), kinds_table(scheme))];
    let mut push = |name: String, value: serde_json::Result<String>| {
        docs.push((name, value.unwrap_or_default() + "\n"));
    };
    push(
        "discovery/api.json".into(),
        serde_json::to_string_pretty(&aggregated(scheme, true)),
    );
    push(
        "discovery/apis.json".into(),
        serde_json::to_string_pretty(&aggregated(scheme, false)),
    );
    for (group, versions) in groups(scheme) {
        for version in versions {
            let file = if group.is_empty() {
                format!("discovery/api_{version}.json")
            } else {
                format!("discovery/apis_{group}_{version}.json")
            };
            push(
                file,
                serde_json::to_string_pretty(&resource_list(scheme, group, version)),
            );
        }
    }
    docs
}

/// One row of `generated/kinds.json`: what the scheme knows about a kind.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct KindRow {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    plural: &'static str,
    singular: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    categories: &'static [&'static str],
    status_subresource: bool,
    selectable_fields: &'static [&'static str],
    printer_columns: Vec<String>,
}

/// The table of every kind in a scheme, as pretty JSON.
pub fn kinds_table(scheme: &Scheme) -> String {
    let rows: Vec<KindRow> = scheme
        .entries()
        .map(|e| e.info)
        .map(|i| KindRow {
            group: i.group,
            version: i.version,
            kind: i.kind,
            plural: i.plural,
            singular: i.singular,
            namespaced: i.namespaced,
            short_names: i.short_names,
            categories: i.categories,
            status_subresource: i.status_subresource,
            selectable_fields: i.selectable_fields,
            printer_columns: i
                .printer_columns
                .iter()
                .map(|c| format!("{} ({}) {}", c.name, c.type_, c.json_path))
                .collect(),
        })
        .collect();
    serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::version_priority;

    #[test]
    fn versions_sort_as_kubernetes_prefers_them() {
        let mut versions = vec![
            "v1alpha1", "v1", "v2beta1", "v1beta2", "v2", "foo", "v10", "v1beta10", "v1alpha",
        ];
        versions.sort_by_key(|v| version_priority(v));
        assert_eq!(
            versions,
            [
                "v10", "v2", "v1", "v2beta1", "v1beta10", "v1beta2", "v1alpha1", "foo", "v1alpha"
            ]
        );
    }
}
