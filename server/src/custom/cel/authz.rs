//! The Kubernetes authorizer library of admission CEL (upstream's
//! `k8s.io/apiserver/pkg/cel/library/authz.go`): `authorizer.path(p)`,
//! `authorizer.group(g).resource(r)` with `.subresource(s)`,
//! `.namespace(n)`, `.name(n)`, `.fieldSelector(s)` and `.labelSelector(s)`,
//! `authorizer.serviceAccount(ns, name)`,
//! `authorizer.requestResource`, `.check(verb)`, and a decision's
//! `allowed()`, `reason()`, `errored()` and `error()`.
//!
//! An authorizer's answer is asynchronous and an expression's evaluation is
//! not: an evaluation runs with the answers known so far ([`with_checks`]),
//! and a check with no answer yet fails the evaluation and is noted as
//! pending. The caller asks the authorizer for the pending checks and
//! evaluates again (expressions have no side effects), until nothing is
//! pending.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use cel::extractors::This;
use cel::objects::{Key, Opaque};
use cel::{Context, ExecutionError, Value};

type Result<T> = std::result::Result<T, ExecutionError>;

/// Who a check is for: the request's user, or a service account.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Who {
    /// The user of the request being admitted.
    RequestUser,
    /// `system:serviceaccount:<namespace>:<name>`.
    ServiceAccount { namespace: String, name: String },
}

/// What a check asks about.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A path that is no resource.
    Path(String),
    /// A resource.
    Resource {
        group: String,
        resource: String,
        subresource: String,
        namespace: String,
        name: String,
        /// The selectors the check is limited by (`""`: none), as
        /// upstream's `AuthorizeWithSelectors` passes them.
        field_selector: String,
        label_selector: String,
    },
}

/// One authorization check an expression asks for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Check {
    pub who: Who,
    pub verb: String,
    pub target: Target,
}

/// An authorizer's answer to a check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answer {
    pub allowed: bool,
    pub reason: String,
    /// The authorizer's error, if it failed.
    pub error: Option<String>,
}

/// The answers known to an evaluation, and the checks it asked for that
/// have none yet.
#[derive(Debug, Default)]
pub struct Checks {
    answers: HashMap<Check, Answer>,
    pending: Vec<Check>,
}

impl Checks {
    /// The checks asked for with no answer, taken.
    pub fn take_pending(&mut self) -> Vec<Check> {
        std::mem::take(&mut self.pending)
    }

    /// Records the answer to `check`.
    pub fn answer(&mut self, check: Check, answer: Answer) {
        self.answers.insert(check, answer);
    }
}

thread_local! {
    /// The answers of the evaluation running on this thread.
    static CHECKS: RefCell<Option<Checks>> = const { RefCell::new(None) };
}

/// Runs `f` (an evaluation) with `checks`' answers; the checks it asked for
/// without an answer are pending in `checks` afterwards.
pub fn with_checks<R>(checks: &mut Checks, f: impl FnOnce() -> R) -> R {
    CHECKS.with(|slot| *slot.borrow_mut() = Some(std::mem::take(checks)));
    let result = f();
    CHECKS.with(|slot| {
        if let Some(back) = slot.borrow_mut().take() {
            *checks = back;
        }
    });
    result
}

/// The `authorizer` variable for a request on `request_resource` (group,
/// resource, subresource, namespace, name): the request user's authorizer,
/// with `requestResource`.
pub fn authorizer_value(request_resource: Option<[&str; 5]>) -> Value {
    let mut fields: HashMap<Key, Value> = HashMap::new();
    fields.insert(
        Key::String(Arc::new(WHO_KEY.to_owned())),
        Value::Opaque(Arc::new(Authorizer {
            who: Who::RequestUser,
        })),
    );
    if let Some([group, resource, subresource, namespace, name]) = request_resource {
        let check = ResourceCheck {
            who: Who::RequestUser,
            group: group.to_owned(),
            resource: resource.to_owned(),
            subresource: subresource.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            field_selector: String::new(),
            label_selector: String::new(),
        };
        fields.insert(
            Key::String(Arc::new("requestResource".to_owned())),
            Value::Opaque(Arc::new(check)),
        );
    }
    Value::Map(fields.into())
}

/// Where the `authorizer` map keeps its authorizer (a name no expression
/// can spell as a field).
const WHO_KEY: &str = "@authorizer";

/// Registers the library's functions on `ctx`.
pub fn install(ctx: &mut Context<'_, '_>) {
    let _ = ctx.add_function("path", path);
    let _ = ctx.add_function("group", group);
    let _ = ctx.add_function("serviceAccount", service_account);
    let _ = ctx.add_function("resource", resource);
    let _ = ctx.add_function("subresource", subresource);
    let _ = ctx.add_function("namespace", namespace);
    let _ = ctx.add_function("name", name);
    let _ = ctx.add_function("fieldSelector", field_selector);
    let _ = ctx.add_function("labelSelector", label_selector);
    let _ = ctx.add_function("check", check);
    let _ = ctx.add_function("allowed", allowed);
    let _ = ctx.add_function("reason", reason);
    let _ = ctx.add_function("errored", errored);
    let _ = ctx.add_function("error", error);
}

/// The functions of this library, for the type checker.
pub const FUNCTIONS: &[&str] = &[
    "path",
    "group",
    "serviceAccount",
    "resource",
    "subresource",
    "namespace",
    "name",
    "fieldSelector",
    "labelSelector",
    "check",
    "allowed",
    "reason",
    "errored",
    "error",
];

#[derive(Debug, PartialEq, Eq)]
struct Authorizer {
    who: Who,
}

#[derive(Debug, PartialEq, Eq)]
struct PathCheck {
    who: Who,
    path: String,
}

#[derive(Debug, PartialEq, Eq)]
struct GroupCheck {
    who: Who,
    group: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct ResourceCheck {
    who: Who,
    group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
    field_selector: String,
    label_selector: String,
}

#[derive(Debug, PartialEq, Eq)]
struct Decision(Answer);

impl Opaque for Authorizer {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.Authorizer"
    }
}

impl Opaque for PathCheck {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.PathCheck"
    }
}

impl Opaque for GroupCheck {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.GroupCheck"
    }
}

impl Opaque for ResourceCheck {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.ResourceCheck"
    }
}

impl Opaque for Decision {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.authorization.Decision"
    }
}

fn no_overload(function: &str, value: &Value) -> ExecutionError {
    ExecutionError::no_such_member_overload(function, vec![format!("{:?}", value.type_of())])
}

fn text(value: &Value, function: &str) -> Result<String> {
    match value {
        Value::String(s) => Ok(s.to_string()),
        other => Err(no_overload(function, other)),
    }
}

/// The authorizer `this` is: the `authorizer` variable, or a service
/// account's.
fn who(this: &Value, function: &str) -> Result<Who> {
    match this {
        Value::Opaque(o) => o
            .downcast_ref::<Authorizer>()
            .map(|a| a.who.clone())
            .ok_or_else(|| no_overload(function, this)),
        Value::Map(map) => match map.get(&Key::String(Arc::new(WHO_KEY.to_owned()))) {
            Some(Value::Opaque(o)) => o
                .downcast_ref::<Authorizer>()
                .map(|a| a.who.clone())
                .ok_or_else(|| no_overload(function, this)),
            _ => Err(no_overload(function, this)),
        },
        _ => Err(no_overload(function, this)),
    }
}

fn path(This(this): This<Value>, path: Value) -> Result<Value> {
    let who = who(&this, "path")?;
    let path = text(&path, "path")?;
    Ok(Value::Opaque(Arc::new(PathCheck { who, path })))
}

fn group(This(this): This<Value>, group: Value) -> Result<Value> {
    let who = who(&this, "group")?;
    let group = text(&group, "group")?;
    Ok(Value::Opaque(Arc::new(GroupCheck { who, group })))
}

fn service_account(This(this): This<Value>, namespace: Value, name: Value) -> Result<Value> {
    who(&this, "serviceAccount")?;
    let who = Who::ServiceAccount {
        namespace: text(&namespace, "serviceAccount")?,
        name: text(&name, "serviceAccount")?,
    };
    Ok(Value::Opaque(Arc::new(Authorizer { who })))
}

fn resource(This(this): This<Value>, resource: Value) -> Result<Value> {
    let Value::Opaque(o) = &this else {
        return Err(no_overload("resource", &this));
    };
    let group = o
        .downcast_ref::<GroupCheck>()
        .ok_or_else(|| no_overload("resource", &this))?;
    Ok(Value::Opaque(Arc::new(ResourceCheck {
        who: group.who.clone(),
        group: group.group.clone(),
        resource: text(&resource, "resource")?,
        subresource: String::new(),
        namespace: String::new(),
        name: String::new(),
        field_selector: String::new(),
        label_selector: String::new(),
    })))
}

/// `this`, a resource check, with one of its parts set by `set`.
fn with_part(
    this: &Value,
    value: &Value,
    function: &str,
    set: impl FnOnce(&mut ResourceCheck, String),
) -> Result<Value> {
    let Value::Opaque(o) = this else {
        return Err(no_overload(function, this));
    };
    let mut check = o
        .downcast_ref::<ResourceCheck>()
        .ok_or_else(|| no_overload(function, this))?
        .clone();
    set(&mut check, text(value, function)?);
    Ok(Value::Opaque(Arc::new(check)))
}

fn subresource(This(this): This<Value>, value: Value) -> Result<Value> {
    with_part(&this, &value, "subresource", |c, v| c.subresource = v)
}

fn namespace(This(this): This<Value>, value: Value) -> Result<Value> {
    with_part(&this, &value, "namespace", |c, v| c.namespace = v)
}

fn name(This(this): This<Value>, value: Value) -> Result<Value> {
    with_part(&this, &value, "name", |c, v| c.name = v)
}

fn field_selector(This(this): This<Value>, value: Value) -> Result<Value> {
    with_part(&this, &value, "fieldSelector", |c, v| c.field_selector = v)
}

fn label_selector(This(this): This<Value>, value: Value) -> Result<Value> {
    with_part(&this, &value, "labelSelector", |c, v| c.label_selector = v)
}

fn check(This(this): This<Value>, verb: Value) -> Result<Value> {
    let verb = text(&verb, "check")?;
    let Value::Opaque(o) = &this else {
        return Err(no_overload("check", &this));
    };
    let (who, target) = if let Some(p) = o.downcast_ref::<PathCheck>() {
        (p.who.clone(), Target::Path(p.path.clone()))
    } else if let Some(r) = o.downcast_ref::<ResourceCheck>() {
        let target = Target::Resource {
            group: r.group.clone(),
            resource: r.resource.clone(),
            subresource: r.subresource.clone(),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
            field_selector: r.field_selector.clone(),
            label_selector: r.label_selector.clone(),
        };
        (r.who.clone(), target)
    } else {
        return Err(no_overload("check", &this));
    };
    let asked = Check { who, verb, target };
    let answer = CHECKS.with(|slot| {
        let mut slot = slot.borrow_mut();
        let checks = slot.as_mut()?;
        match checks.answers.get(&asked) {
            Some(answer) => Some(answer.clone()),
            None => {
                if !checks.pending.contains(&asked) {
                    checks.pending.push(asked);
                }
                None
            }
        }
    });
    match answer {
        Some(answer) => Ok(Value::Opaque(Arc::new(Decision(answer)))),
        None => Err(ExecutionError::function_error(
            "check",
            "authorization decision not yet known",
        )),
    }
}

fn decision<'a>(this: &'a Value, function: &str) -> Result<&'a Answer> {
    match this {
        Value::Opaque(o) => o
            .downcast_ref::<Decision>()
            .map(|d| &d.0)
            .ok_or_else(|| no_overload(function, this)),
        other => Err(no_overload(function, other)),
    }
}

fn allowed(This(this): This<Value>) -> Result<bool> {
    Ok(decision(&this, "allowed")?.allowed)
}

fn reason(This(this): This<Value>) -> Result<Value> {
    Ok(Value::String(Arc::new(
        decision(&this, "reason")?.reason.clone(),
    )))
}

fn errored(This(this): This<Value>) -> Result<bool> {
    Ok(decision(&this, "errored")?.error.is_some())
}

fn error(This(this): This<Value>) -> Result<Value> {
    let error = decision(&this, "error")?.error.clone().unwrap_or_default();
    Ok(Value::String(Arc::new(error)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::custom::cel::{parse, with_activation};
    use serde_json::Value as Json;

    /// Evaluates `text` with the answers of `checks`.
    fn run(text: &str, checks: &mut Checks) -> std::result::Result<Value, String> {
        let program = parse(text).unwrap();
        let authorizer = authorizer_value(Some(["apps", "deployments", "", "team", "web"]));
        with_checks(checks, || {
            with_activation(&[("object", &Json::Null)], |activation| {
                activation.set_value("authorizer", authorizer.clone());
                activation.evaluate(&program)
            })
        })
    }

    #[test]
    fn a_check_waits_for_its_answer_then_reads_it() {
        let mut checks = Checks::default();
        let text = "authorizer.group('').resource('secrets').namespace('team').name('s').check('get').allowed()";
        assert!(run(text, &mut checks).is_err());
        let pending = checks.take_pending();
        assert_eq!(
            pending,
            vec![Check {
                who: Who::RequestUser,
                verb: "get".into(),
                target: Target::Resource {
                    group: String::new(),
                    resource: "secrets".into(),
                    subresource: String::new(),
                    namespace: "team".into(),
                    name: "s".into(),
                    field_selector: String::new(),
                    label_selector: String::new(),
                },
            }]
        );
        let allowed = Answer {
            allowed: true,
            reason: "RBAC: allowed by RoleBinding".into(),
            error: None,
        };
        checks.answer(pending[0].clone(), allowed);
        assert_eq!(run(text, &mut checks).unwrap(), Value::Bool(true));
        let reason = text.replace("allowed()", "reason()");
        assert_eq!(
            run(&reason, &mut checks).unwrap(),
            Value::String(Arc::new("RBAC: allowed by RoleBinding".into()))
        );
        let errored = text.replace("allowed()", "errored()");
        assert_eq!(run(&errored, &mut checks).unwrap(), Value::Bool(false));
        assert!(checks.take_pending().is_empty());
    }

    #[test]
    fn a_check_carries_its_selectors() {
        let mut checks = Checks::default();
        let text = "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1')\
                    .labelSelector('app=web').check('list').allowed()";
        assert!(run(text, &mut checks).is_err());
        let pending = checks.take_pending();
        assert_eq!(
            pending[0].target,
            Target::Resource {
                group: String::new(),
                resource: "pods".into(),
                subresource: String::new(),
                namespace: String::new(),
                name: String::new(),
                field_selector: "spec.nodeName=n1".into(),
                label_selector: "app=web".into(),
            }
        );
    }

    #[test]
    fn paths_service_accounts_and_the_request_resource() {
        let mut checks = Checks::default();
        // Both sides of a logical operator are evaluated (CEL's errors are
        // absorbed by the side that decides): both checks are asked at once.
        let text = "authorizer.path('/healthz').check('get').allowed() || \
                    authorizer.requestResource.subresource('scale').check('update').allowed()";
        assert!(run(text, &mut checks).is_err());
        let pending = checks.take_pending();
        let scale = Check {
            who: Who::RequestUser,
            verb: "update".into(),
            target: Target::Resource {
                group: "apps".into(),
                resource: "deployments".into(),
                subresource: "scale".into(),
                namespace: "team".into(),
                name: "web".into(),
                field_selector: String::new(),
                label_selector: String::new(),
            },
        };
        assert_eq!(pending[0].target, Target::Path("/healthz".into()));
        assert_eq!(pending[1], scale);
        checks.answer(pending[0].clone(), Answer::default());
        // One allowed side decides, whatever the other is.
        checks.answer(
            scale,
            Answer {
                allowed: true,
                ..Answer::default()
            },
        );
        assert_eq!(run(text, &mut checks).unwrap(), Value::Bool(true));
        let mut checks = Checks::default();
        let text = "authorizer.serviceAccount('team', 'robot').group('').resource('pods').check('list').allowed()";
        let _ = run(text, &mut checks);
        let pending = checks.take_pending();
        assert_eq!(
            pending[0].who,
            Who::ServiceAccount {
                namespace: "team".into(),
                name: "robot".into()
            }
        );
    }
}
