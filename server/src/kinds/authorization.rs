//! The reviews of authorization.k8s.io, answered by the authorizer
//! (upstream's `pkg/registry/authorization`): SubjectAccessReview (may this
//! user do this?), LocalSubjectAccessReview (the same, within the review's
//! namespace), SelfSubjectAccessReview (may I? `kubectl auth can-i`), and
//! SelfSubjectRulesReview (what may I do here? `kubectl auth can-i --list`).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::authentication::answered;
use crate::api_error::{ApiError, ApiResult};
use crate::authz::{Attributes, Authorizer, Decision, Rules, Target};
use crate::registry::hooks::KindRest;
use crate::registry::{Object, Registry, Scope};
use crate::selectors::field::FieldSelector;
use crate::user::UserInfo;

/// Which review a hook answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Review {
    /// `subjectaccessreviews`: the user in the spec.
    Subject,
    /// `localsubjectaccessreviews`: the user in the spec, in the review's
    /// namespace.
    Local,
    /// `selfsubjectaccessreviews`: the caller.
    SelfSubject,
}

/// An access review answered by `authorizer`.
pub struct AccessReviewRest {
    /// Which review.
    pub review: Review,
    /// Who decides.
    pub authorizer: Arc<Authorizer>,
}

#[async_trait]
impl KindRest for AccessReviewRest {
    async fn answer(
        &self,
        registry: &Registry,
        scope: Scope<'_>,
        object: &mut Object,
        caller: &UserInfo,
    ) -> ApiResult<()> {
        let asked = object.to_value().map_err(ApiError::internal)?;
        let spec = &asked["spec"];
        if self.review == Review::Local {
            let namespace = scope.namespace.unwrap_or_default();
            let wanted = spec["resourceAttributes"]["namespace"]
                .as_str()
                .unwrap_or_default();
            if namespace.is_empty() || wanted != namespace {
                return Err(ApiError::bad_request(format!(
                    "spec.resourceAttributes.namespace must match namespace: {namespace}"
                )));
            }
        }
        let user = match self.review {
            Review::SelfSubject => caller.clone(),
            Review::Subject | Review::Local => spec_user(spec),
        };
        let fields = field_selector(&spec["resourceAttributes"]["fieldSelector"]);
        let status = match attributes_of(spec, &user, fields.as_ref()) {
            Some(request) => {
                let decision = self.authorizer.authorize(&request, registry).await;
                status_of(decision)
            }
            None => json!({"allowed": false}),
        };
        answered(scope, object, json!({"status": status}))
    }
}

/// The user a (Local)SubjectAccessReview asks about.
fn spec_user(spec: &Value) -> UserInfo {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let extra: BTreeMap<String, Vec<String>> = spec["extra"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), strings(v)))
        .collect();
    UserInfo {
        name: spec["user"].as_str().unwrap_or_default().to_owned(),
        uid: spec["uid"].as_str().unwrap_or_default().to_owned(),
        groups: strings(&spec["groups"]),
        extra,
    }
}

/// The request a review's spec describes.
fn attributes_of<'a>(
    spec: &'a Value,
    user: &'a UserInfo,
    fields: Option<&'a FieldSelector>,
) -> Option<Attributes<'a>> {
    let text = |v: &'a Value| v.as_str().unwrap_or_default();
    if let Some(resource) = spec["resourceAttributes"].as_object() {
        let field = |name: &str| {
            resource
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        return Some(Attributes {
            user,
            verb: field("verb"),
            target: Target::Resource {
                namespace: field("namespace"),
                group: field("group"),
                resource: field("resource"),
                subresource: field("subresource"),
                name: field("name"),
                fields,
            },
        });
    }
    let path = &spec["nonResourceAttributes"];
    path.is_object().then(|| Attributes {
        user,
        verb: text(&path["verb"]),
        target: Target::Path(text(&path["path"])),
    })
}

/// A review's field selector (upstream's `ResourceAttributesFrom`): the
/// raw text, or requirements of one value each (`In` is `=`, `NotIn` is
/// `!=`). One that does not convert is none, as upstream's authorizers see
/// a selector with an error.
fn field_selector(selector: &Value) -> Option<FieldSelector> {
    if let Some(raw) = selector["rawSelector"].as_str() {
        return FieldSelector::parse(raw).ok();
    }
    let requirements = selector["requirements"].as_array()?;
    let escape = |text: &str| {
        text.replace('\\', "\\\\")
            .replace(',', "\\,")
            .replace('=', "\\=")
    };
    let mut terms = Vec::with_capacity(requirements.len());
    for requirement in requirements {
        let key = requirement["key"].as_str()?;
        let [value] = requirement["values"].as_array()?.as_slice() else {
            return None;
        };
        let operator = match requirement["operator"].as_str()? {
            "In" => "=",
            "NotIn" => "!=",
            _ => return None,
        };
        terms.push(format!("{key}{operator}{}", escape(value.as_str()?)));
    }
    FieldSelector::parse(&terms.join(",")).ok()
}

/// A decision as a SubjectAccessReviewStatus.
fn status_of(decision: Decision) -> Value {
    let (mut status, reason) = match decision {
        Decision::Allow(reason) => (json!({"allowed": true}), reason),
        Decision::Deny(reason) => (json!({"allowed": false, "denied": true}), reason),
        Decision::NoOpinion(reason) => (json!({"allowed": false}), reason),
    };
    if !reason.is_empty() {
        status["reason"] = json!(reason);
    }
    status
}

/// `selfsubjectrulesreviews`: the caller's rules in the spec's namespace.
pub struct RulesReviewRest {
    /// Whose rules count.
    pub authorizer: Arc<Authorizer>,
}

#[async_trait]
impl KindRest for RulesReviewRest {
    async fn answer(
        &self,
        registry: &Registry,
        scope: Scope<'_>,
        object: &mut Object,
        caller: &UserInfo,
    ) -> ApiResult<()> {
        let asked = object.to_value().map_err(ApiError::internal)?;
        let namespace = asked["spec"]["namespace"].as_str().unwrap_or_default();
        let Rules {
            everything,
            rules,
            errors,
        } = self.authorizer.rules_for(caller, namespace, registry).await;
        let mut resource_rules = Vec::new();
        let mut path_rules = Vec::new();
        if everything {
            resource_rules.push(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
            path_rules.push(json!({"verbs": ["*"], "nonResourceURLs": ["*"]}));
        }
        for rule in rules {
            if rule.resources.is_empty() {
                if !rule.non_resource_urls.is_empty() {
                    path_rules.push(json!({"verbs": rule.verbs,
                        "nonResourceURLs": rule.non_resource_urls}));
                }
                continue;
            }
            let mut entry = json!({"verbs": rule.verbs, "apiGroups": rule.api_groups,
                "resources": rule.resources});
            if !rule.resource_names.is_empty() {
                entry["resourceNames"] = json!(rule.resource_names);
            }
            resource_rules.push(entry);
        }
        let mut status = json!({"resourceRules": resource_rules,
            "nonResourceRules": path_rules, "incomplete": !errors.is_empty()});
        if !errors.is_empty() {
            status["evaluationError"] = json!(match errors.as_slice() {
                [one] => one.clone(),
                many => format!("[{}]", many.join(", ")),
            });
        }
        answered(scope, object, json!({"status": status}))
    }
}
