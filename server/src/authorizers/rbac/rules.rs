//! One rule of a role against one request, as k8s.io/kubernetes'
//! `rbac.RuleAllows`: verbs, API groups, resources (with `*`,
//! `<resource>/<subresource>` and `*/<subresource>`), resource names, and
//! non-resource URLs (with a trailing `*`).

use serde::Deserialize;

use crate::authz::{Attributes, Target};

/// A rule of a Role or ClusterRole (rbac.authorization.k8s.io/v1
/// PolicyRule), as its JSON reads.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicyRule {
    /// The verbs, or `*`.
    pub verbs: Vec<String>,
    /// The API groups, or `*`.
    pub api_groups: Vec<String>,
    /// The resources, or `*`.
    pub resources: Vec<String>,
    /// The names the rule is limited to (none: every name).
    pub resource_names: Vec<String>,
    /// The paths, or prefixes ending in `*`.
    #[serde(rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
}

impl From<&kapi_api_types::rbac::v1::role::PolicyRule> for PolicyRule {
    fn from(rule: &kapi_api_types::rbac::v1::role::PolicyRule) -> PolicyRule {
        let list = |l: &Option<Vec<String>>| l.clone().unwrap_or_default();
        PolicyRule {
            verbs: rule.verbs.clone(),
            api_groups: list(&rule.api_groups),
            resources: list(&rule.resources),
            resource_names: list(&rule.resource_names),
            non_resource_urls: list(&rule.non_resource_urls),
        }
    }
}

impl PolicyRule {
    /// Whether the rule allows `request`.
    pub fn allows(&self, request: &Attributes<'_>) -> bool {
        if !has_or_star(&self.verbs, request.verb) {
            return false;
        }
        match &request.target {
            Target::Resource {
                group,
                resource,
                subresource,
                name,
                ..
            } => {
                has_or_star(&self.api_groups, group)
                    && self.matches_resource(resource, subresource)
                    && (self.resource_names.is_empty()
                        || self.resource_names.iter().any(|n| n == name))
            }
            Target::Path(path) => self.non_resource_urls.iter().any(|url| {
                url == "*"
                    || url == path
                    || url
                        .strip_suffix('*')
                        .is_some_and(|prefix| path.starts_with(prefix))
            }),
        }
    }

    /// `resource` (or `resource/subresource`) against the rule's resources.
    fn matches_resource(&self, resource: &str, subresource: &str) -> bool {
        self.resources.iter().any(|rule| {
            if rule == "*" {
                return true;
            }
            if subresource.is_empty() {
                return rule == resource;
            }
            match rule.split_once('/') {
                Some((of, sub)) => sub == subresource && (of == resource || of == "*"),
                None => false,
            }
        })
    }
}

fn has_or_star(list: &[String], wanted: &str) -> bool {
    list.iter().any(|item| item == "*" || item == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user::UserInfo;

    fn rule(json: serde_json::Value) -> PolicyRule {
        serde_json::from_value(json).unwrap()
    }

    fn resource<'a>(
        user: &'a UserInfo,
        verb: &'a str,
        group: &'a str,
        resource: &'a str,
        subresource: &'a str,
        name: &'a str,
    ) -> Attributes<'a> {
        Attributes {
            user,
            verb,
            target: Target::Resource {
                namespace: "ns",
                group,
                resource,
                subresource,
                name,
                fields: None,
            },
        }
    }

    #[test]
    fn resources_subresources_and_names() {
        let user = UserInfo::default();
        let pods = rule(
            serde_json::json!({"verbs": ["get", "list"], "apiGroups": [""],
            "resources": ["pods", "pods/log"]}),
        );
        assert!(pods.allows(&resource(&user, "get", "", "pods", "", "p")));
        assert!(pods.allows(&resource(&user, "list", "", "pods", "", "")));
        assert!(pods.allows(&resource(&user, "get", "", "pods", "log", "p")));
        assert!(!pods.allows(&resource(&user, "get", "", "pods", "status", "p")));
        assert!(!pods.allows(&resource(&user, "delete", "", "pods", "", "p")));
        assert!(!pods.allows(&resource(&user, "get", "apps", "pods", "", "p")));

        let scale = rule(serde_json::json!({"verbs": ["*"], "apiGroups": ["*"],
            "resources": ["*/scale"]}));
        assert!(scale.allows(&resource(
            &user,
            "patch",
            "apps",
            "deployments",
            "scale",
            "d"
        )));
        assert!(!scale.allows(&resource(&user, "patch", "apps", "deployments", "", "d")));

        let every =
            rule(serde_json::json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
        assert!(every.allows(&resource(&user, "get", "x", "y", "z", "")));

        let named = rule(
            serde_json::json!({"verbs": ["get", "list"], "apiGroups": [""],
            "resources": ["configmaps"], "resourceNames": ["mine"]}),
        );
        assert!(named.allows(&resource(&user, "get", "", "configmaps", "", "mine")));
        assert!(!named.allows(&resource(&user, "get", "", "configmaps", "", "yours")));
        // A list names no object: a rule limited to names does not cover it.
        assert!(!named.allows(&resource(&user, "list", "", "configmaps", "", "")));
    }

    #[test]
    fn paths_match_exactly_or_by_prefix() {
        let user = UserInfo::default();
        let paths = rule(serde_json::json!({"verbs": ["get"],
            "nonResourceURLs": ["/healthz", "/healthz/*", "/version"]}));
        let path = |p| Attributes {
            user: &user,
            verb: "get",
            target: Target::Path(p),
        };
        assert!(paths.allows(&path("/healthz")));
        assert!(paths.allows(&path("/healthz/etcd")));
        assert!(paths.allows(&path("/version")));
        assert!(!paths.allows(&path("/version/")));
        assert!(!paths.allows(&path("/metrics")));
        // A resource rule covers no path, and a path rule no resource.
        let pods =
            rule(serde_json::json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
        assert!(!pods.allows(&path("/healthz")));
        assert!(!paths.allows(&resource(&user, "get", "", "pods", "", "")));
    }
}
