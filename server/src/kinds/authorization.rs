//! The reviews of authorization.k8s.io, answered by the authorizer
//! (upstream's `pkg/registry/authorization`): SubjectAccessReview (may this
//! user do this?), LocalSubjectAccessReview (the same, within the review's
//! namespace), SelfSubjectAccessReview (may I? `kubectl auth can-i`), and
//! SelfSubjectRulesReview (what may I do here? `kubectl auth can-i --list`).
//! Each is read and answered as its compiled kind.

use std::sync::Arc;

use async_trait::async_trait;
use kapi_api_types::authorization::v1::selfsubjectrulesreview::{NonResourceRule, ResourceRule};
use kapi_api_types::authorization::v1::subjectaccessreview::{
    FieldSelectorAttributes, NonResourceAttributes, ResourceAttributes, SubjectAccessReviewSpec,
    SubjectAccessReviewStatus,
};
use kapi_api_types::authorization::v1::{
    LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
};

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
        let (asked, status) = review_parts(object)?;
        if self.review == Review::Local {
            let namespace = scope.namespace.unwrap_or_default();
            let wanted = asked
                .resource
                .and_then(|r| r.namespace.as_deref())
                .unwrap_or_default();
            if namespace.is_empty() || wanted != namespace {
                return Err(ApiError::bad_request(format!(
                    "spec.resourceAttributes.namespace must match namespace: {namespace}"
                )));
            }
        }
        let user = match (self.review, asked.subject) {
            (Review::Subject | Review::Local, Some(spec)) => spec_user(spec),
            _ => caller.clone(),
        };
        let fields = asked
            .resource
            .and_then(|r| r.field_selector.as_ref())
            .and_then(field_selector);
        let answer = match attributes_of(&asked, &user, fields.as_ref()) {
            Some(request) => status_of(self.authorizer.authorize(&request, registry).await),
            None => SubjectAccessReviewStatus::default(),
        };
        *status = answer;
        Ok(())
    }
}

/// What an access review asks, whichever of the three it is.
struct Asked<'o> {
    /// The spec naming a user (not of a SelfSubjectAccessReview).
    subject: Option<&'o SubjectAccessReviewSpec>,
    resource: Option<&'o ResourceAttributes>,
    path: Option<&'o NonResourceAttributes>,
}

/// The question of the access review `object` and the status to answer in.
fn review_parts(object: &mut Object) -> ApiResult<(Asked<'_>, &mut SubjectAccessReviewStatus)> {
    let typed = object.typed_mut().as_any_mut();
    if typed.is::<SubjectAccessReview>() {
        let review = typed
            .downcast_mut::<SubjectAccessReview>()
            .ok_or_else(not_a_review)?;
        return Ok((asked_of(&review.spec), &mut review.status));
    }
    if typed.is::<LocalSubjectAccessReview>() {
        let review = typed
            .downcast_mut::<LocalSubjectAccessReview>()
            .ok_or_else(not_a_review)?;
        return Ok((asked_of(&review.spec), &mut review.status));
    }
    let review = typed
        .downcast_mut::<SelfSubjectAccessReview>()
        .ok_or_else(not_a_review)?;
    let asked = Asked {
        subject: None,
        resource: review.spec.resource_attributes.as_ref(),
        path: review.spec.non_resource_attributes.as_ref(),
    };
    Ok((asked, &mut review.status))
}

/// What a spec naming a user asks.
fn asked_of(spec: &SubjectAccessReviewSpec) -> Asked<'_> {
    Asked {
        subject: Some(spec),
        resource: spec.resource_attributes.as_ref(),
        path: spec.non_resource_attributes.as_ref(),
    }
}

fn not_a_review() -> ApiError {
    ApiError::internal("the object of an access review is no access review")
}

/// The user a (Local)SubjectAccessReview asks about.
fn spec_user(spec: &SubjectAccessReviewSpec) -> UserInfo {
    UserInfo {
        name: spec.user.clone().unwrap_or_default(),
        uid: spec.uid.clone().unwrap_or_default(),
        groups: spec.groups.clone().unwrap_or_default(),
        extra: spec
            .extra
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.items.clone()))
            .collect(),
    }
}

/// The request a review's spec describes.
fn attributes_of<'a>(
    asked: &Asked<'a>,
    user: &'a UserInfo,
    fields: Option<&'a FieldSelector>,
) -> Option<Attributes<'a>> {
    let text = |v: &'a Option<String>| v.as_deref().unwrap_or_default();
    if let Some(resource) = asked.resource {
        return Some(Attributes {
            user,
            verb: text(&resource.verb),
            target: Target::Resource {
                namespace: text(&resource.namespace),
                group: text(&resource.group),
                resource: text(&resource.resource),
                subresource: text(&resource.subresource),
                name: text(&resource.name),
                fields,
            },
        });
    }
    asked.path.map(|path| Attributes {
        user,
        verb: text(&path.verb),
        target: Target::Path(text(&path.path)),
    })
}

/// A review's field selector (upstream's `ResourceAttributesFrom`): the
/// raw text, or requirements of one value each (`In` is `=`, `NotIn` is
/// `!=`). One that does not convert is none, as upstream's authorizers see
/// a selector with an error.
fn field_selector(selector: &FieldSelectorAttributes) -> Option<FieldSelector> {
    if let Some(raw) = &selector.raw_selector {
        return FieldSelector::parse(raw).ok();
    }
    let requirements = selector.requirements.as_ref()?;
    let escape = |text: &str| {
        text.replace('\\', "\\\\")
            .replace(',', "\\,")
            .replace('=', "\\=")
    };
    let mut terms = Vec::with_capacity(requirements.len());
    for requirement in requirements {
        let [value] = requirement.values.as_deref()? else {
            return None;
        };
        let operator = match requirement.operator.as_str() {
            "In" => "=",
            "NotIn" => "!=",
            _ => return None,
        };
        terms.push(format!("{}{operator}{}", requirement.key, escape(value)));
    }
    FieldSelector::parse(&terms.join(",")).ok()
}

/// A decision as a SubjectAccessReviewStatus.
fn status_of(decision: Decision) -> SubjectAccessReviewStatus {
    let (allowed, denied, reason) = match decision {
        Decision::Allow(reason) => (true, None, reason),
        Decision::Deny(reason) => (false, Some(true), reason),
        Decision::NoOpinion(reason) => (false, None, reason),
    };
    SubjectAccessReviewStatus {
        allowed,
        denied,
        reason: (!reason.is_empty()).then_some(reason),
        ..SubjectAccessReviewStatus::default()
    }
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
        _scope: Scope<'_>,
        object: &mut Object,
        caller: &UserInfo,
    ) -> ApiResult<()> {
        let review = object
            .downcast_mut::<SelfSubjectRulesReview>()
            .ok_or_else(not_a_review)?;
        let namespace = review.spec.namespace.as_deref().unwrap_or_default();
        let Rules {
            everything,
            rules,
            errors,
        } = self.authorizer.rules_for(caller, namespace, registry).await;
        let status = &mut review.status;
        let all = || Some(vec!["*".to_owned()]);
        if everything {
            status.resource_rules.push(ResourceRule {
                verbs: vec!["*".to_owned()],
                api_groups: all(),
                resources: all(),
                resource_names: None,
            });
            status.non_resource_rules.push(NonResourceRule {
                verbs: vec!["*".to_owned()],
                non_resource_urls: all(),
            });
        }
        for rule in rules {
            if rule.resources.is_empty() {
                if !rule.non_resource_urls.is_empty() {
                    status.non_resource_rules.push(NonResourceRule {
                        verbs: rule.verbs,
                        non_resource_urls: Some(rule.non_resource_urls),
                    });
                }
                continue;
            }
            status.resource_rules.push(ResourceRule {
                verbs: rule.verbs,
                api_groups: Some(rule.api_groups),
                resources: Some(rule.resources),
                resource_names: (!rule.resource_names.is_empty()).then_some(rule.resource_names),
            });
        }
        status.incomplete = !errors.is_empty();
        status.evaluation_error = match errors.as_slice() {
            [] => None,
            [one] => Some(one.clone()),
            many => Some(format!("[{}]", many.join(", "))),
        };
        Ok(())
    }
}
