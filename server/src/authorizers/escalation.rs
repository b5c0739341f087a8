//! Escalation prevention: a user may write a role only with rules they hold
//! themselves, and bind a role only when they hold its rules, unless they
//! have the `escalate` (roles) or `bind` (bindings) verb on it, as
//! kube-apiserver's policy-based RBAC storage checks (`ConfirmNoEscalation`
//! and `Covers` of k8s.io/kubernetes' rbac validation).

use super::rbac::rules::PolicyRule;

/// The rules of `requested` that none of `owned` covers, broken down to one
/// verb, group, resource (or URL) and name each, as upstream compares them.
pub fn uncovered(owned: &[PolicyRule], requested: &[PolicyRule]) -> Vec<PolicyRule> {
    requested
        .iter()
        .flat_map(breakdown)
        .filter(|simple| !owned.iter().any(|owner| covers(owner, simple)))
        .collect()
}

/// One rule as simple ones (upstream's `BreakdownRule`).
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut simple = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let one = |names: Vec<String>| PolicyRule {
                    api_groups: vec![group.clone()],
                    resources: vec![resource.clone()],
                    verbs: vec![verb.clone()],
                    resource_names: names,
                    non_resource_urls: Vec::new(),
                };
                if rule.resource_names.is_empty() {
                    simple.push(one(Vec::new()));
                } else {
                    simple.extend(rule.resource_names.iter().map(|n| one(vec![n.clone()])));
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            simple.push(PolicyRule {
                verbs: vec![verb.clone()],
                non_resource_urls: vec![url.clone()],
                ..PolicyRule::default()
            });
        }
    }
    simple
}

/// Whether `owner` covers all of `requested` (upstream's `ruleCovers`).
fn covers(owner: &PolicyRule, requested: &PolicyRule) -> bool {
    let all_or = |set: &[String], wanted: &[String], star: &str| {
        set.iter().any(|s| s == star) || wanted.iter().all(|w| set.contains(w))
    };
    let names = if requested.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        owner.resource_names.is_empty()
            || requested
                .resource_names
                .iter()
                .all(|n| owner.resource_names.contains(n))
    };
    all_or(&owner.verbs, &requested.verbs, "*")
        && all_or(&owner.api_groups, &requested.api_groups, "*")
        && resources_cover(&owner.resources, &requested.resources)
        && names
        && urls_cover(&owner.non_resource_urls, &requested.non_resource_urls)
}

fn resources_cover(owned: &[String], wanted: &[String]) -> bool {
    if owned.iter().any(|r| r == "*") {
        return true;
    }
    wanted.iter().all(|path| {
        owned.contains(path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| owned.contains(&format!("*/{sub}")))
    })
}

fn urls_cover(owned: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|url| {
        owned.iter().any(|own| {
            own == url
                || own
                    .strip_suffix('*')
                    .is_some_and(|prefix| url.starts_with(prefix))
        })
    })
}

/// Upstream's words for what a user lacks: the missing rules compacted
/// (verbs of the same group, resource and name merged), one per line,
/// sorted.
pub fn describe_missing(user: &str, groups: &[String], missing: &[PolicyRule]) -> String {
    let mut merged: Vec<PolicyRule> = Vec::new();
    for rule in missing {
        let same = merged.iter_mut().find(|m| {
            m.api_groups == rule.api_groups
                && m.resources == rule.resources
                && m.resource_names == rule.resource_names
                && m.non_resource_urls == rule.non_resource_urls
        });
        match same {
            Some(m) => {
                for verb in &rule.verbs {
                    if !m.verbs.contains(verb) {
                        m.verbs.push(verb.clone());
                    }
                }
            }
            None => merged.push(rule.clone()),
        }
    }
    let mut lines: Vec<String> = merged.iter().map(compact).collect();
    lines.sort();
    lines.dedup();
    format!(
        "user {user:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        go_quoted(groups),
        lines.join("\n")
    )
}

/// Upstream's `CompactString` of a rule.
fn compact(rule: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (name, values) in [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("ResourceNames", &rule.resource_names),
        ("Verbs", &rule.verbs),
    ] {
        if !values.is_empty() {
            parts.push(format!("{name}:{}", go_quoted(values)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// Go's `%q` of a string slice.
fn go_quoted(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(value: serde_json::Value) -> Vec<PolicyRule> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn owned_rules_cover_what_they_hold() {
        let owned = rules(json!([
            {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods", "*/scale"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]},
            {"verbs": ["get"], "nonResourceURLs": ["/logs/*"]},
        ]));
        let fine = rules(json!([
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "deployments/scale"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"]},
            {"verbs": ["get"], "nonResourceURLs": ["/logs/x"]},
        ]));
        assert!(uncovered(&owned, &fine).is_empty());
        let more = rules(json!([
            {"verbs": ["get", "delete", "patch"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]},
        ]));
        let missing = uncovered(&owned, &more);
        assert_eq!(
            describe_missing("bob", &["system:authenticated".to_owned()], &missing),
            "user \"bob\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"get\"]}\n\
             {APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\" \"patch\"]}"
        );
    }
}
