//! The ClusterRole aggregation controller (upstream's
//! clusterrole-aggregation-controller): a ClusterRole with an
//! `aggregationRule` holds the rules of every other ClusterRole its label
//! selectors pick, by name order, each rule once, kept current as those roles
//! come and go. This is how `admin`, `edit` and `view` get their rules.

use std::collections::BTreeMap;

use kapi_api_types::rbac::v1::ClusterRole;
use kapi_api_types::rbac::v1::role::PolicyRule;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::controllers::client::{Client, Resource};
use crate::controllers::informer::{self, Event, Source};
use crate::selectors::label::LabelSelector;

/// Runs the controller until aborted.
pub async fn run(client: Client) {
    let mut tasks = JoinSet::new();
    let (tx, mut rx) = mpsc::channel::<((), Event<ClusterRole>)>(256);
    informer::spawn(
        &mut tasks,
        client.clone(),
        Source::all(Resource::of::<ClusterRole>()),
        (),
        tx,
    );
    let mut roles: BTreeMap<String, ClusterRole> = BTreeMap::new();
    while let Some(((), event)) = rx.recv().await {
        note(&mut roles, event);
        // Take what else arrived before syncing once.
        while let Ok(((), event)) = rx.try_recv() {
            note(&mut roles, event);
        }
        for (name, role) in &roles {
            let Some(rules) = aggregated(role, &roles) else {
                continue;
            };
            let mut updated = role.clone();
            updated.rules = rules;
            if let Err(e) = client.update_typed(None, name, None, &updated).await {
                // A conflict means a newer state is on its way to the informer.
                tracing::debug!(role = %name, error = %e, "could not aggregate");
            }
        }
    }
}

/// The roles after `event`.
fn note(roles: &mut BTreeMap<String, ClusterRole>, event: Event<ClusterRole>) {
    match event {
        Event::Listed(all) => *roles = all.into_iter().map(|r| (name(&r), r)).collect(),
        Event::Applied(role) => {
            roles.insert(name(&role), role);
        }
        Event::Deleted(role) => {
            roles.remove(&name(&role));
        }
    }
}

fn name(role: &ClusterRole) -> String {
    role.metadata.name.clone().unwrap_or_default()
}

/// The rules `role` should hold when it aggregates and they differ from its
/// own; `None` when it does not aggregate or is current.
fn aggregated(
    role: &ClusterRole,
    roles: &BTreeMap<String, ClusterRole>,
) -> Option<Vec<PolicyRule>> {
    let selectors = role
        .aggregation_rule
        .as_ref()?
        .cluster_role_selectors
        .as_ref()?;
    let own = name(role);
    let mut rules: Vec<PolicyRule> = Vec::new();
    for selector in selectors {
        let Ok(selector) = LabelSelector::from_meta(Some(selector)) else {
            continue;
        };
        for (other, picked) in roles {
            if *other == own {
                continue;
            }
            if !selector.matches(picked.metadata.labels.as_ref()) {
                continue;
            }
            for rule in &picked.rules {
                if !rules.contains(rule) {
                    rules.push(rule.clone());
                }
            }
        }
    }
    (role.rules != rules).then_some(rules)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn typed<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn an_aggregated_role_holds_the_picked_roles_rules_once_by_name() {
        let role = |name: &str, labels: Value, rules: Value| -> ClusterRole {
            typed(json!({"metadata": {"name": name, "labels": labels}, "rules": rules}))
        };
        let get = json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]});
        let list = json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]});
        let mut roles = BTreeMap::new();
        roles.insert(
            "b".to_owned(),
            role("b", json!({"agg": "yes"}), json!([list, get])),
        );
        roles.insert(
            "a".to_owned(),
            role("a", json!({"agg": "yes"}), json!([get])),
        );
        roles.insert(
            "c".to_owned(),
            role("c", json!({"agg": "no"}), json!([{"verbs": ["*"]}])),
        );
        let mut view: ClusterRole = typed(json!({"metadata": {"name": "view"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "yes"}}]}}));
        let (get, list): (PolicyRule, PolicyRule) = (typed(get), typed(list));
        assert_eq!(
            aggregated(&view, &roles),
            Some(vec![get.clone(), list.clone()])
        );
        view.rules = vec![get, list];
        assert_eq!(aggregated(&view, &roles), None, "current");
        assert_eq!(aggregated(&roles["a"], &roles), None, "aggregates nothing");
    }
}
