//! Admission CEL that asks the authorizer (the `authorizer` variable of
//! ValidatingAdmissionPolicies and of webhooks' matchConditions): an
//! evaluation runs with the answers known so far, and the checks it asked
//! for without one are put to the server's authorizer, as the request's
//! user or the service account named, before it runs again (see
//! `crate::custom::cel::authz`).

use std::sync::Arc;

use serde_json::Value;

use crate::authz::{Attributes, Authorizer, Decision, Target};
use crate::custom::cel::authz::{self, Answer, Check, Checks, Who};
use crate::loopback::Loopback;
use crate::selectors::field::FieldSelector;
use crate::user::UserInfo;

/// How many times an evaluation runs again for checks it asked for later
/// (a check whose arguments come from an earlier decision).
const ROUNDS: usize = 8;

/// The `authorizer` variable for the admission request `cel_request` (its
/// CEL form: `resource`, `subResource`, `namespace`, `name`).
pub fn authorizer_value(cel_request: &Value) -> cel::Value {
    fn text(value: &Value) -> &str {
        value.as_str().unwrap_or_default()
    }
    let resource = &cel_request["resource"];
    authz::authorizer_value(Some([
        text(&resource["group"]),
        text(&resource["resource"]),
        text(&cel_request["subResource"]),
        text(&cel_request["namespace"]),
        text(&cel_request["name"]),
    ]))
}

/// Runs `evaluate` until every authorization check it asks for has its
/// answer from `authorizer` (at most [`ROUNDS`] times more); an evaluation
/// that asks for none runs once.
pub async fn evaluate<R>(
    authorizer: &Arc<Authorizer>,
    objects: &dyn Loopback,
    user: &UserInfo,
    mut evaluate: impl FnMut() -> R,
) -> R {
    let mut checks = Checks::default();
    let mut result = authz::with_checks(&mut checks, &mut evaluate);
    for _ in 0..ROUNDS {
        let pending = checks.take_pending();
        if pending.is_empty() {
            break;
        }
        for check in pending {
            let answer = ask(authorizer, objects, user, &check).await;
            checks.answer(check, answer);
        }
        result = authz::with_checks(&mut checks, &mut evaluate);
    }
    result
}

/// The authorizer's answer to `check`.
async fn ask(
    authorizer: &Authorizer,
    objects: &dyn Loopback,
    user: &UserInfo,
    check: &Check,
) -> Answer {
    let Some(registry) = objects.as_any().downcast_ref::<crate::registry::Registry>() else {
        return Answer {
            error: Some("no authorizer".to_owned()),
            ..Answer::default()
        };
    };
    let account;
    let user = match &check.who {
        Who::RequestUser => user,
        Who::ServiceAccount { namespace, name } => {
            let group = format!("system:serviceaccounts:{namespace}");
            account = UserInfo::new(
                &format!("system:serviceaccount:{namespace}:{name}"),
                &["system:serviceaccounts", &group],
            );
            &account
        }
    };
    // A field selector that does not parse limits nothing (upstream
    // passes its error along, which the authorizers kapi has ignore); a
    // label selector is passed to no authorizer kapi has.
    let fields = match &check.target {
        authz::Target::Resource { field_selector, .. } if !field_selector.is_empty() => {
            FieldSelector::parse(field_selector).ok()
        }
        _ => None,
    };
    let target = match &check.target {
        authz::Target::Path(path) => Target::Path(path),
        authz::Target::Resource {
            group,
            resource,
            subresource,
            namespace,
            name,
            ..
        } => Target::Resource {
            namespace,
            group,
            resource,
            subresource,
            name,
            fields: fields.as_ref(),
        },
    };
    let attributes = Attributes {
        user,
        verb: &check.verb,
        target,
    };
    match authorizer.authorize(&attributes, registry).await {
        Decision::Allow(reason) => Answer {
            allowed: true,
            reason,
            error: None,
        },
        Decision::Deny(reason) | Decision::NoOpinion(reason) => Answer {
            allowed: false,
            reason,
            error: None,
        },
    }
}
