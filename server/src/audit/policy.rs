//! The audit policy (`--audit-policy-file`, an audit.k8s.io/v1 Policy):
//! rules in order, the first that matches a request sets its level and the
//! stages left out, as k8s.io/apiserver's `policy.Checker`.

use serde::Deserialize;

use crate::authz::Target;
use crate::user::UserInfo;

/// How much of a request an event records.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Nothing: no event.
    #[default]
    None,
    /// Who asked what, and the answer's status.
    Metadata,
    /// And the request's object.
    Request,
    /// And the response's object.
    RequestResponse,
}

impl Level {
    /// The level's name in an event.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "None",
            Level::Metadata => "Metadata",
            Level::Request => "Request",
            Level::RequestResponse => "RequestResponse",
        }
    }
}

/// When an event is written.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum Stage {
    /// As the request arrives.
    RequestReceived,
    /// When a long-running request's answer starts (a watch).
    ResponseStarted,
    /// When the answer is complete.
    ResponseComplete,
    /// When the handler panicked.
    Panic,
}

impl Stage {
    /// The stage's name in an event.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::RequestReceived => "RequestReceived",
            Stage::ResponseStarted => "ResponseStarted",
            Stage::ResponseComplete => "ResponseComplete",
            Stage::Panic => "Panic",
        }
    }
}

/// The policy file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Policy {
    kind: String,
    api_version: String,
    rules: Vec<Rule>,
    omit_stages: Vec<Stage>,
    omit_managed_fields: bool,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Rule {
    level: Level,
    users: Vec<String>,
    user_groups: Vec<String>,
    verbs: Vec<String>,
    resources: Vec<GroupResources>,
    namespaces: Vec<String>,
    #[serde(rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    omit_stages: Vec<Stage>,
    omit_managed_fields: Option<bool>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct GroupResources {
    group: String,
    resources: Vec<String>,
    resource_names: Vec<String>,
}

/// What the policy says of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The level.
    pub level: Level,
    /// The stages not written.
    pub omit_stages: Vec<Stage>,
    /// Whether objects are written without their managedFields.
    pub omit_managed_fields: bool,
}

impl Decision {
    /// Whether `stage` is written.
    pub fn writes(&self, stage: Stage) -> bool {
        self.level != Level::None && !self.omit_stages.contains(&stage)
    }
}

impl Policy {
    /// Reads a policy file's text (YAML or JSON).
    pub fn parse(text: &str) -> Result<Policy, String> {
        let policy: Policy = serde_saphyr::from_str(text).map_err(|e| e.to_string())?;
        if policy.kind != "Policy" {
            return Err(format!("kind {:?} is not Policy", policy.kind));
        }
        if !matches!(
            policy.api_version.as_str(),
            "audit.k8s.io/v1" | "audit.k8s.io/v1beta1"
        ) {
            return Err(format!(
                "apiVersion {:?} is not audit.k8s.io/v1",
                policy.api_version
            ));
        }
        if policy.rules.is_empty() {
            return Err("the policy has no rules".to_owned());
        }
        Ok(policy)
    }

    /// The decision for `user` doing `verb` to `target`: the first rule
    /// that matches, or level None.
    pub fn decide(&self, user: &UserInfo, verb: &str, target: &Target<'_>) -> Decision {
        let Some(rule) = self.rules.iter().find(|r| r.matches(user, verb, target)) else {
            return Decision {
                level: Level::None,
                omit_stages: Vec::new(),
                omit_managed_fields: false,
            };
        };
        let mut omit_stages = self.omit_stages.clone();
        omit_stages.extend(rule.omit_stages.iter().copied());
        Decision {
            level: rule.level,
            omit_stages,
            omit_managed_fields: rule.omit_managed_fields.unwrap_or(self.omit_managed_fields),
        }
    }
}

impl Rule {
    fn matches(&self, user: &UserInfo, verb: &str, target: &Target<'_>) -> bool {
        if !self.users.is_empty() && !self.users.contains(&user.name) {
            return false;
        }
        if !self.user_groups.is_empty() && !user.groups.iter().any(|g| self.user_groups.contains(g))
        {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.iter().any(|v| v == verb) {
            return false;
        }
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return self.matches_resource(target);
        }
        if !self.non_resource_urls.is_empty() {
            let Target::Path(path) = target else {
                return false;
            };
            return self.non_resource_urls.iter().any(|url| {
                url == path
                    || url
                        .strip_suffix('*')
                        .is_some_and(|prefix| path.starts_with(prefix))
            });
        }
        true
    }

    fn matches_resource(&self, target: &Target<'_>) -> bool {
        let Target::Resource {
            namespace,
            group,
            resource,
            subresource,
            name,
            ..
        } = target
        else {
            return false;
        };
        if !self.namespaces.is_empty() && !self.namespaces.iter().any(|n| n == namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let combined = if subresource.is_empty() {
            (*resource).to_owned()
        } else {
            format!("{resource}/{subresource}")
        };
        self.resources
            .iter()
            .filter(|gr| gr.group == *group)
            .any(|gr| {
                if gr.resources.is_empty() {
                    return true;
                }
                let named =
                    gr.resource_names.is_empty() || gr.resource_names.iter().any(|n| n == name);
                named
                    && gr.resources.iter().any(|res| {
                        res == "*"
                            || *res == combined
                            || (!subresource.is_empty()
                                && res.strip_prefix("*/") == Some(*subresource))
                            || res.strip_suffix("/*") == Some(*resource)
                    })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-proxy"]
- level: None
  resources: [{group: "", resources: [events]}]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps], resourceNames: [app]}]
- level: Request
  verbs: [create, update]
  namespaces: [prod]
  resources: [{group: apps, resources: ["deployments/*"]}, {group: "", resources: ["*/status"]}]
- level: None
  nonResourceURLs: ["/healthz*", /version]
- level: Metadata
  userGroups: [system:authenticated]
  omitStages: [ResponseStarted]
"#;

    fn resource<'a>(
        ns: &'a str,
        group: &'a str,
        resource: &'a str,
        sub: &'a str,
        name: &'a str,
    ) -> Target<'a> {
        Target::Resource {
            namespace: ns,
            group,
            resource,
            subresource: sub,
            name,
            fields: None,
        }
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let policy = Policy::parse(POLICY).unwrap();
        let alice = UserInfo::new("alice", &["system:authenticated"]);
        let proxy = UserInfo::new("system:kube-proxy", &["system:authenticated"]);
        let level = |user: &UserInfo, verb: &str, target: Target<'_>| {
            policy.decide(user, verb, &target).level
        };
        assert_eq!(
            level(&proxy, "get", resource("", "", "nodes", "", "")),
            Level::None
        );
        assert_eq!(
            level(&alice, "get", resource("a", "", "events", "", "")),
            Level::None
        );
        assert_eq!(
            level(&alice, "get", resource("a", "", "configmaps", "", "app")),
            Level::RequestResponse
        );
        assert_eq!(
            level(&alice, "get", resource("a", "", "configmaps", "", "other")),
            Level::Metadata
        );
        assert_eq!(
            level(
                &alice,
                "update",
                resource("prod", "apps", "deployments", "scale", "d")
            ),
            Level::Request
        );
        assert_eq!(
            level(
                &alice,
                "update",
                resource("prod", "", "pods", "status", "p")
            ),
            Level::Request
        );
        assert_eq!(
            level(&alice, "update", resource("dev", "", "pods", "status", "p")),
            Level::Metadata
        );
        assert_eq!(
            level(&alice, "get", Target::Path("/healthz/etcd")),
            Level::None
        );
        assert_eq!(level(&alice, "get", Target::Path("/version")), Level::None);
        assert_eq!(level(&alice, "get", Target::Path("/api")), Level::Metadata);
        let anonymous = UserInfo::new("system:anonymous", &["system:unauthenticated"]);
        assert_eq!(level(&anonymous, "get", Target::Path("/api")), Level::None);
        let decision = policy.decide(&alice, "get", &Target::Path("/api"));
        assert!(!decision.writes(Stage::RequestReceived));
        assert!(!decision.writes(Stage::ResponseStarted));
        assert!(decision.writes(Stage::ResponseComplete));
    }

    #[test]
    fn a_file_that_is_no_policy_is_refused() {
        assert!(Policy::parse("kind: Policy\napiVersion: v1\nrules: [{level: None}]").is_err());
        assert!(Policy::parse("kind: Policy\napiVersion: audit.k8s.io/v1\nrules: []").is_err());
        assert!(
            Policy::parse("kind: Policy\napiVersion: audit.k8s.io/v1\nrules: [{level: Loud}]")
                .is_err()
        );
    }
}
