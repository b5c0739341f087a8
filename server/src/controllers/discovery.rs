//! Which resources the server serves, read from discovery as client-go's
//! `ServerPreferredResources` does: each group in its preferred version,
//! subresources left out.

use serde_json::Value;

use super::client::{Client, ClientError, Resource};

/// One resource in discovery.
#[derive(Clone, Debug)]
pub struct Discovered {
    /// How to address it.
    pub resource: Resource,
    /// Its kind.
    pub kind: String,
    /// The verbs it supports.
    pub verbs: Vec<String>,
}

impl Discovered {
    /// Whether every one of `verbs` is supported.
    pub fn supports(&self, verbs: &[&str]) -> bool {
        verbs.iter().all(|v| self.verbs.iter().any(|s| s == v))
    }
}

/// The failure of discovering one group version, as upstream's
/// `ErrGroupDiscoveryFailed` keeps them apart from the rest.
#[derive(Debug)]
pub struct GroupFailure {
    /// `group/version`.
    pub group_version: String,
    /// Why.
    pub error: ClientError,
}

/// Every resource of the preferred version of every group; group versions that
/// failed are returned beside the ones that worked.
pub async fn preferred_resources(
    client: &Client,
) -> Result<(Vec<Discovered>, Vec<GroupFailure>), ClientError> {
    let mut group_versions = vec![(String::new(), "v1".to_owned())];
    let groups = client.get_path("/apis").await?;
    for group in groups["groups"].as_array().into_iter().flatten() {
        let name = group["name"].as_str().unwrap_or_default();
        let preferred = group["preferredVersion"]["version"]
            .as_str()
            .or_else(|| group["versions"][0]["version"].as_str());
        if let Some(version) = preferred.filter(|_| !name.is_empty()) {
            group_versions.push((name.to_owned(), version.to_owned()));
        }
    }
    let mut found = Vec::new();
    let mut failures = Vec::new();
    for (group, version) in group_versions {
        let path = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        match client.get_path(&path).await {
            Ok(list) => found.extend(resources_of(&group, &version, &list)),
            Err(error) => failures.push(GroupFailure {
                group_version: if group.is_empty() {
                    version
                } else {
                    format!("{group}/{version}")
                },
                error,
            }),
        }
    }
    Ok((found, failures))
}

fn resources_of(group: &str, version: &str, list: &Value) -> Vec<Discovered> {
    let mut found = Vec::new();
    for r in list["resources"].as_array().into_iter().flatten() {
        let Some(name) = r["name"].as_str().filter(|n| !n.contains('/')) else {
            continue;
        };
        let verbs = r["verbs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        found.push(Discovered {
            resource: Resource::new(
                group,
                version,
                name,
                r["namespaced"].as_bool().unwrap_or(false),
            ),
            kind: r["kind"].as_str().unwrap_or_default().to_owned(),
            verbs,
        });
    }
    found
}
