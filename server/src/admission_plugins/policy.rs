//! ValidatingAdmissionPolicy: the cluster's policies and their bindings,
//! evaluated in the validating phase as kube-apiserver 1.32 evaluates them
//! (k8s.io/apiserver's `pkg/admission/plugin/policy/validating`), on the
//! CEL engine of the CRD rules.
//!
//! - A policy counts once a binding names it. Its `matchConstraints`
//!   (resource rules with names, exclusions, namespace and object
//!   selectors), then the binding's `matchResources`, select the requests.
//! - Params: the binding's `paramRef` (a name or a selector, in a namespace
//!   or the request's) finds objects of the policy's `paramKind`; each one
//!   is evaluated on its own; none found is allowed or denied as
//!   `parameterNotFoundAction` says.
//! - `variables`, `matchConditions`, `validations` (`message`,
//!   `messageExpression`, `reason`) and `auditAnnotations` see `object`,
//!   `oldObject`, `request`, `params`, `namespaceObject` and `variables`.
//! - A failed validation (or an error under `failurePolicy: Fail`) is
//!   answered as `validationActions` say: Deny (upstream's refusal, 422 or
//!   the reason's code), Warn (a warning), Audit (an audit annotation).
//!
//! The `authorizer` variable asks the server's authorizers
//! (`super::authorizing`). Under `matchPolicy: Equivalent` (the default) a
//! policy whose rules name another served version of the resource sees the
//! object, and `request`, in that version. Expressions keep to upstream's
//! CEL cost limits. The type checking written into
//! `status.typeChecking` is the built-in controller's
//! (`builtin_controllers::policy_status`), as it is kube-controller-manager's
//! upstream.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;

use async_trait::async_trait;
use kapi_api_types::admissionregistration::v1::rule::{MatchResources, NamedRuleWithOperations};
use kapi_api_types::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use kapi_api_types::core::v1::Namespace;
use kapi_runtime::meta::{Status, StatusCause, StatusDetails};
use kapi_runtime::scheme::KindEntry;
use serde_json::{Map, Value, json};

use super::authorizing;
use super::matching;
use super::webhook::review;
use crate::admission::{Plugin, Request, View};
use crate::api_error::{ApiError, ApiResult};
use crate::authz::Authorizer;
use crate::body::Object;
use crate::custom::cel::{Activation, MATCH_CONDITIONS_BUDGET, OUT_OF_BUDGET, RUNTIME_BUDGET};
use crate::loopback::{self, Loopback};
use crate::selectors::label::LabelSelector;

/// The plugin, with each policy compiled once per resourceVersion.
#[derive(Default)]
pub struct ValidatingAdmissionPolicyPlugin {
    /// What the `authorizer` variable asks.
    authorizer: Arc<Authorizer>,
    /// By policy name: its resourceVersion, its compiled form, the policy
    /// as the server holds it (kept so that the next write finds it decoded).
    compiled: Mutex<HashMap<String, (String, Arc<Compiled>, Arc<Object>)>>,
    /// The bindings last read, kept decoded.
    bindings: Mutex<Vec<Arc<Object>>>,
    metrics: PolicyMetrics,
}

type Labels = Vec<(&'static str, String)>;

/// Upstream's metrics of policy checks (k8s.io/apiserver's
/// `policy/validating/metrics`): each decision other than a plain admit,
/// by policy, binding, error type and what was done with it.
#[derive(Clone)]
pub struct PolicyMetrics {
    checks: Family<Labels, Counter>,
    latency: Family<Labels, Histogram, fn() -> Histogram>,
}

impl Default for PolicyMetrics {
    fn default() -> PolicyMetrics {
        PolicyMetrics {
            checks: Family::default(),
            latency: Family::new_with_constructor(|| {
                Histogram::new([0.0000005, 0.001, 0.01, 0.1, 1.0])
            }),
        }
    }
}

impl PolicyMetrics {
    /// Adds the families to `registry` (prometheus_client adds `_total` to
    /// the counter, as upstream's name ends).
    pub fn register(&self, registry: &mut prometheus_client::registry::Registry) {
        registry.register(
            "apiserver_validating_admission_policy_check",
            "[BETA] Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.",
            self.checks.clone(),
        );
        registry.register(
            "apiserver_validating_admission_policy_check_duration_seconds",
            "[BETA] Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.",
            self.latency.clone(),
        );
    }

    /// One decision of `policy` through `binding` that failed with
    /// `message`, and what was done (`allow` for an error let through,
    /// `deny`, `warn`, `audit`).
    fn observe(&self, policy: &str, binding: &str, message: &str, action: &str, elapsed: Duration) {
        // Upstream's error types, told by the message's words.
        let error_type = if message.starts_with("compilation") {
            "compile_error"
        } else if message.starts_with(OUT_OF_BUDGET) {
            "out_of_budget"
        } else {
            "invalid_error"
        };
        let labels = vec![
            ("policy", policy.to_owned()),
            ("policy_binding", binding.to_owned()),
            ("error_type", error_type.to_owned()),
            ("enforcement_action", action.to_owned()),
        ];
        self.checks.get_or_create(&labels).inc();
        self.latency
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }
}

/// The resources no policy sees (upstream's policy plugin and
/// kube-apiserver's exclusion list).
fn ignored(request: &Request<'_>) -> bool {
    let info = request.attrs.scope.info();
    matches!(
        (info.group, info.plural),
        (
            "admissionregistration.k8s.io",
            "validatingadmissionpolicies"
                | "validatingadmissionpolicybindings"
                | "mutatingadmissionpolicies"
                | "mutatingadmissionpolicybindings"
        ) | (
            "authentication.k8s.io",
            "selfsubjectreviews" | "tokenreviews"
        ) | (
            "authorization.k8s.io",
            "localsubjectaccessreviews"
                | "selfsubjectaccessreviews"
                | "selfsubjectrulesreviews"
                | "subjectaccessreviews"
        )
    )
}

/// An expression and its compiled program.
struct Expression {
    text: String,
    program: Result<cel::Program, String>,
}

impl Expression {
    fn new(text: &str) -> Expression {
        Expression {
            text: text.to_owned(),
            program: crate::custom::cel::parse(text),
        }
    }
}

struct CompiledValidation {
    expression: Expression,
    message: Option<String>,
    message_expression: Option<Expression>,
    reason: Option<String>,
}

/// A policy, ready to evaluate.
struct Compiled {
    fail: bool,
    /// `group`, `version`, `kind` of `paramKind`.
    param_kind: Option<(String, String, String)>,
    constraints: Option<MatchResources>,
    /// `matchPolicy: Equivalent` (the default) in the constraints.
    equivalent: bool,
    conditions: Vec<Expression>,
    variables: Vec<(String, Expression)>,
    validations: Vec<CompiledValidation>,
    audit: Vec<(String, Expression)>,
    /// Whether an expression reads `namespaceObject` (read only then).
    uses_namespace: bool,
}

impl Compiled {
    fn of(policy: &ValidatingAdmissionPolicy) -> Compiled {
        let spec = &policy.spec;
        let uses_namespace =
            serde_json::to_string(spec).is_ok_and(|text| text.contains("namespaceObject"));
        Compiled {
            uses_namespace,
            equivalent: spec
                .match_constraints
                .as_ref()
                .and_then(|c| c.match_policy.as_deref())
                != Some("Exact"),
            fail: spec.failure_policy.as_deref() != Some("Ignore"),
            param_kind: spec.param_kind.as_ref().map(|k| {
                let api_version = k.api_version.clone().unwrap_or_default();
                let (group, version) = match api_version.split_once('/') {
                    Some((g, v)) => (g.to_owned(), v.to_owned()),
                    None => (String::new(), api_version),
                };
                (group, version, k.kind.clone().unwrap_or_default())
            }),
            constraints: spec.match_constraints.clone(),
            conditions: spec
                .match_conditions
                .iter()
                .flatten()
                .map(|c| Expression::new(&c.expression))
                .collect(),
            variables: spec
                .variables
                .iter()
                .flatten()
                .map(|v| (v.name.clone(), Expression::new(&v.expression)))
                .collect(),
            validations: spec
                .validations
                .iter()
                .flatten()
                .map(|v| CompiledValidation {
                    expression: Expression::new(&v.expression),
                    message: v.message.clone(),
                    message_expression: v.message_expression.as_deref().map(Expression::new),
                    reason: v.reason.clone(),
                })
                .collect(),
            audit: spec
                .audit_annotations
                .iter()
                .flatten()
                .map(|a| (a.key.clone(), Expression::new(&a.value_expression)))
                .collect(),
        }
    }
}

/// A refusal the bindings decided on.
struct Denial {
    policy: String,
    binding: Option<String>,
    message: String,
    reason: String,
}

/// What evaluating one policy, binding and param found.
#[derive(Default)]
struct Outcome {
    /// Failed validations and errors: (message, reason, validation index).
    failures: Vec<(String, String, usize)>,
    /// Errors let through under `failurePolicy: Ignore`.
    ignored: Vec<String>,
    /// Audit annotation values by key.
    annotations: Vec<(String, String)>,
}

#[async_trait]
impl Plugin for ValidatingAdmissionPolicyPlugin {
    fn name(&self) -> &'static str {
        "ValidatingAdmissionPolicy"
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        !ignored(request)
    }

    async fn selects_request(
        &self,
        request: &Request<'_>,
        objects: &dyn Loopback,
    ) -> ApiResult<bool> {
        if ignored(request) {
            return Ok(false);
        }
        let policies = loopback::list_shared::<ValidatingAdmissionPolicy>(objects, None).await?;
        if policies.is_empty() {
            return Ok(false);
        }
        let bindings =
            loopback::list_shared::<ValidatingAdmissionPolicyBinding>(objects, None).await?;
        Ok(!bindings.is_empty())
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        old: Option<&View<'_>>,
        objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        // No JSON form of the object unless a bound policy may look at it.
        if !self.selects_request(request, objects).await? {
            return Ok(());
        }
        // The object as the client wrote it (its version, not the stored
        // one).
        let json = &*client_form(request, object)?;
        let old = match old {
            Some(old) => Some(client_form(request, old)?),
            None => None,
        };
        let old = old.as_deref();
        if request.via_scale {
            // A write through /scale is judged as its Scale.
            let info = request.attrs.scope.served.info;
            let scale = |o: &Value| {
                objects.scale_of(info, o)?.ok_or_else(|| {
                    ApiError::internal("a write through /scale of a kind without it")
                })
            };
            let json = scale(json)?;
            let old = old.map(scale).transpose()?;
            return self
                .admit_with(request, Some(&json), old.as_ref(), objects)
                .await;
        }
        self.admit_with(request, Some(json), old, objects).await
    }

    fn handles_actions(&self) -> bool {
        true
    }

    async fn admit_action(
        &self,
        request: &Request<'_>,
        body: &mut Value,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        if ignored(request) {
            return Ok(());
        }
        self.admit_with(request, Some(&*body), None, objects).await
    }

    async fn admit_delete(
        &self,
        request: &Request<'_>,
        old: &View<'_>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let old = client_form(request, old)?;
        self.admit_with(request, None, Some(&old), objects).await
    }
}

impl ValidatingAdmissionPolicyPlugin {
    /// The plugin, its `authorizer` variable asking `authorizer`, its
    /// metrics in `metrics`.
    pub fn new(
        authorizer: Arc<Authorizer>,
        metrics: PolicyMetrics,
    ) -> ValidatingAdmissionPolicyPlugin {
        ValidatingAdmissionPolicyPlugin {
            authorizer,
            metrics,
            ..ValidatingAdmissionPolicyPlugin::default()
        }
    }

    async fn admit_with(
        &self,
        request: &Request<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let shared_policies =
            loopback::list_shared::<ValidatingAdmissionPolicy>(objects, None).await?;
        if shared_policies.is_empty() {
            return Ok(());
        }
        let shared_bindings =
            loopback::list_shared::<ValidatingAdmissionPolicyBinding>(objects, None).await?;
        // Kept so that the next write finds them decoded.
        *self.bindings.lock().unwrap_or_else(PoisonError::into_inner) = shared_bindings.clone();
        if shared_bindings.is_empty() {
            return Ok(());
        }
        let mut policies: Vec<(&ValidatingAdmissionPolicy, &Arc<Object>)> = shared_policies
            .iter()
            .filter_map(|o| Some((o.downcast_ref::<ValidatingAdmissionPolicy>()?, o)))
            .collect();
        let bindings: Vec<&ValidatingAdmissionPolicyBinding> = shared_bindings
            .iter()
            .filter_map(|o| o.downcast_ref::<ValidatingAdmissionPolicyBinding>())
            .collect();
        policies.sort_by(|a, b| a.0.metadata.name.cmp(&b.0.metadata.name));
        let name = object
            .or(old)
            .and_then(|o| o.pointer("/metadata/name"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| request.attrs.name.clone());
        let mut context = Context {
            authorizer: &self.authorizer,
            request,
            object: object.map(Cow::Borrowed),
            old: old.map(Cow::Borrowed),
            invoked: request.attrs.scope.served.info,
            name: &name,
            objects,
            namespace: None,
            cel_request: None,
        };
        let mut denials = Vec::new();
        let mut audit_failures = Vec::new();
        for (policy, object) in policies {
            let policy_name = policy.metadata.name.clone().unwrap_or_default();
            let bound: Vec<&ValidatingAdmissionPolicyBinding> = bindings
                .iter()
                .copied()
                .filter(|b| b.spec.policy_name.as_deref() == Some(policy_name.as_str()))
                .collect();
            if bound.is_empty() {
                continue;
            }
            let compiled = self.compiled(policy, object);
            let Some(constraints) = &compiled.constraints else {
                if compiled.fail {
                    denials.push(Denial {
                        policy: policy_name.clone(),
                        binding: None,
                        message: "failed to configure policy: policy contained no match constraints, a required field".to_owned(),
                        reason: "Invalid".to_owned(),
                    });
                }
                continue;
            };
            let Some(invoked_in) = context
                .matched(constraints, false, compiled.equivalent)
                .await?
            else {
                continue;
            };
            // Matched in an equivalent version: the object, and the
            // request, as they are in that version.
            let mut there;
            let context = match &invoked_in {
                None => &mut context,
                Some(entry) => {
                    let convert = |json: Option<&Value>| {
                        json.map(|j| super::webhook::to_version(request, j, entry))
                            .transpose()
                    };
                    there = Context {
                        authorizer: context.authorizer,
                        request: context.request,
                        object: convert(context.object.as_deref())?.map(Cow::Owned),
                        old: convert(context.old.as_deref())?.map(Cow::Owned),
                        invoked: entry.info,
                        name: context.name,
                        objects: context.objects,
                        namespace: None,
                        cel_request: None,
                    };
                    &mut there
                }
            };
            let mut published: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for binding in bound {
                let binding_name = binding.metadata.name.clone().unwrap_or_default();
                if let Some(resources) = &binding.spec.match_resources {
                    let equivalent = resources.match_policy.as_deref() != Some("Exact");
                    if context
                        .matched(resources, true, equivalent)
                        .await?
                        .is_none()
                    {
                        continue;
                    }
                }
                let params = match context.params(&compiled, binding).await {
                    Ok(params) => params,
                    Err(e) => {
                        if compiled.fail {
                            denials.push(Denial {
                                policy: policy_name.clone(),
                                binding: Some(binding_name.clone()),
                                message: format!("failed to configure binding: {e}"),
                                reason: "Invalid".to_owned(),
                            });
                        }
                        continue;
                    }
                };
                let actions = binding.spec.validation_actions.clone().unwrap_or_default();
                for param in params {
                    let started = Instant::now();
                    let outcome = context.evaluate(&compiled, &param).await?;
                    // Each decision is counted with the time of the whole
                    // evaluation (upstream times each expression).
                    let elapsed = started.elapsed();
                    for message in &outcome.ignored {
                        self.metrics.observe(
                            &policy_name,
                            &binding_name,
                            message,
                            "allow",
                            elapsed,
                        );
                    }
                    for (key, value) in outcome.annotations {
                        let values = published.entry(key).or_default();
                        if !values.contains(&value) {
                            values.push(value);
                        }
                    }
                    for (message, reason, index) in outcome.failures {
                        for action in &actions {
                            let done = action.to_ascii_lowercase();
                            self.metrics.observe(
                                &policy_name,
                                &binding_name,
                                &message,
                                &done,
                                elapsed,
                            );
                            match action.as_str() {
                                "Deny" => denials.push(Denial {
                                    policy: policy_name.clone(),
                                    binding: Some(binding_name.clone()),
                                    message: message.clone(),
                                    reason: reason.clone(),
                                }),
                                "Warn" => {
                                    if let Some(recorder) = request.recorder {
                                        recorder.warn(&format!(
                                            "Validation failed for ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}': {message}"
                                        ));
                                    }
                                }
                                "Audit" => audit_failures.push(json!({
                                    "message": message, "policy": policy_name,
                                    "binding": binding_name, "expressionIndex": index,
                                    "validationActions": actions})),
                                _ => {}
                            }
                        }
                    }
                }
            }
            if let Some(recorder) = request.recorder {
                for (key, values) in published {
                    let mut value = values.join(", ");
                    if value.len() > 10240 {
                        let mut cut = 10240;
                        while !value.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        value.truncate(cut);
                    }
                    recorder.annotate(format!("{policy_name}/{key}"), value);
                }
            }
        }
        if let Some(recorder) = request.recorder
            && !audit_failures.is_empty()
        {
            recorder.annotate(
                "validation.policy.admission.k8s.io/validation_failure".to_owned(),
                Value::Array(audit_failures).to_string(),
            );
        }
        match denials.into_iter().next() {
            Some(denial) => Err(refusal(request, &name, object.or(old), denial)),
            None => Ok(()),
        }
    }

    /// The compiled form of `policy`, kept until its resourceVersion changes.
    fn compiled(&self, policy: &ValidatingAdmissionPolicy, object: &Arc<Object>) -> Arc<Compiled> {
        let name = policy.metadata.name.clone().unwrap_or_default();
        let version = policy.metadata.resource_version.clone().unwrap_or_default();
        let mut compiled = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((v, c, _)) = compiled.get(&name)
            && *v == version
        {
            return c.clone();
        }
        let c = Arc::new(Compiled::of(policy));
        compiled.insert(name, (version, c.clone(), object.clone()));
        c
    }
}

/// One request as the policies see it.
struct Context<'a> {
    authorizer: &'a Arc<Authorizer>,
    request: &'a Request<'a>,
    /// The object and the stored one, in the version the policy matched.
    object: Option<Cow<'a, Value>>,
    old: Option<Cow<'a, Value>>,
    /// The resource version the policy matched (the request's, or an
    /// equivalent one).
    invoked: &'a kapi_runtime::ResourceInfo,
    name: &'a str,
    objects: &'a dyn Loopback,
    /// `namespaceObject`, read once.
    namespace: Option<Value>,
    /// `request`, made once.
    cel_request: Option<Value>,
}

impl Context<'_> {
    /// Whether `resources` select the request, and in which version: the
    /// request's own (`Some(None)`) or, with `equivalent`, another served
    /// version of its resource that the rules name (`Some(Some(entry))`).
    /// A binding's empty rule list selects what its policy does.
    async fn matched(
        &self,
        resources: &MatchResources,
        binding: bool,
        equivalent: bool,
    ) -> ApiResult<Option<Option<KindEntry>>> {
        let rules = resources.resource_rules.as_deref().unwrap_or_default();
        let listed = |rules: &[NamedRuleWithOperations], info: &kapi_runtime::ResourceInfo| {
            rules.iter().any(|rule| {
                let names = rule.resource_names.as_deref().unwrap_or_default();
                matching::rule_matches_at(&rule.rule_with_operations, self.request, info)
                    && (names.is_empty() || names.iter().any(|n| n == self.name))
            })
        };
        let own = self.request.attrs.scope.served.info;
        if listed(
            resources
                .exclude_resource_rules
                .as_deref()
                .unwrap_or_default(),
            own,
        ) {
            return Ok(None);
        }
        let invoked = if (binding && rules.is_empty()) || listed(rules, own) {
            None
        } else if equivalent && converts(self.request) {
            let equivalents = self
                .objects
                .equivalents_of(self.request.attrs.scope.entry.info);
            match equivalents.into_iter().find(|entry| {
                !matching::same_resource(entry.info, own) && listed(rules, entry.info)
            }) {
                Some(entry) => Some(entry),
                None => return Ok(None),
            }
        } else {
            return Ok(None);
        };
        let selector = |s: Option<&kapi_runtime::meta::LabelSelector>| match s {
            None => Ok(LabelSelector::everything()),
            Some(s) => LabelSelector::from_meta(Some(s)).map_err(ApiError::internal),
        };
        let namespaces = selector(resources.namespace_selector.as_ref())?;
        if !matching::namespace_matches(
            &namespaces,
            self.request,
            self.name,
            self.object.as_deref(),
            self.old.as_deref(),
            self.objects,
        )
        .await?
        {
            return Ok(None);
        }
        let labels = selector(resources.object_selector.as_ref())?;
        Ok(
            matching::object_matches(&labels, self.object.as_deref(), self.old.as_deref())
                .then_some(invoked),
        )
    }

    /// The params a binding evaluates its policy with (`null` when the
    /// policy takes none); `Err` is a binding configuration error.
    async fn params(
        &self,
        compiled: &Compiled,
        binding: &ValidatingAdmissionPolicyBinding,
    ) -> Result<Vec<Value>, String> {
        let (Some((group, version, kind)), Some(reference)) =
            (&compiled.param_kind, &binding.spec.param_ref)
        else {
            return Ok(vec![Value::Null]);
        };
        let Some((plural, namespaced)) = self.objects.resource_of_kind(group, version, kind) else {
            return Err(format!(
                "failed to find resource referenced by paramKind: '{group}/{version}, Kind={kind}'"
            ));
        };
        let given = reference.namespace.as_deref().filter(|n| !n.is_empty());
        let namespace = match (namespaced, given) {
            (true, Some(namespace)) => Some(namespace.to_owned()),
            (true, None) => match self.request.attrs.namespace.as_deref() {
                Some(namespace) if !namespace.is_empty() => Some(namespace.to_owned()),
                _ => {
                    return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".to_owned());
                }
            },
            (false, Some(_)) => {
                return Err(
                    "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
                        .to_owned(),
                );
            }
            (false, None) => None,
        };
        let resource = (group.as_str(), version.as_str(), plural.as_str());
        let found = match (&reference.name, &reference.selector) {
            (Some(name), _) if !name.is_empty() => self
                .objects
                .read(resource, namespace.as_deref(), name)
                .await
                .map_err(|e| e.0.message.unwrap_or_default())?
                .into_iter()
                .collect(),
            (_, selector) => {
                let selector = match selector {
                    Some(s) => LabelSelector::from_meta(Some(s))?,
                    None => LabelSelector::everything(),
                };
                self.objects
                    .read_all(resource, namespace.as_deref())
                    .await
                    .map_err(|e| e.0.message.unwrap_or_default())?
                    .into_iter()
                    .filter(|o| {
                        let labels = o
                            .pointer("/metadata/labels")
                            .and_then(|l| serde_json::from_value(l.clone()).ok());
                        selector.matches(labels.as_ref())
                    })
                    .collect::<Vec<_>>()
            }
        };
        if found.is_empty() && reference.parameter_not_found_action.as_deref() == Some("Deny") {
            return Err(
                "no params found for policy binding with `Deny` parameterNotFoundAction".to_owned(),
            );
        }
        Ok(found)
    }

    /// `namespaceObject`: the request's Namespace (its metadata fields
    /// upstream keeps, spec and status); null for cluster-scoped requests
    /// and for Namespaces themselves.
    async fn namespace_object(&mut self) -> ApiResult<Value> {
        if let Some(namespace) = &self.namespace {
            return Ok(namespace.clone());
        }
        let namespace = self.request.attrs.namespace.as_deref().unwrap_or_default();
        let value = if namespace.is_empty() || matching::is_namespace(self.request) {
            Value::Null
        } else {
            match loopback::get::<Namespace>(self.objects, None, namespace).await? {
                Some(ns) => {
                    let full = serde_json::to_value(&ns).map_err(ApiError::internal)?;
                    let mut kept = Map::new();
                    let mut meta = Map::new();
                    for key in [
                        "name",
                        "generateName",
                        "namespace",
                        "uid",
                        "resourceVersion",
                        "generation",
                        "creationTimestamp",
                        "deletionTimestamp",
                        "deletionGracePeriodSeconds",
                        "labels",
                        "annotations",
                        "finalizers",
                    ] {
                        if let Some(v) = full.pointer(&format!("/metadata/{key}")) {
                            meta.insert(key.to_owned(), v.clone());
                        }
                    }
                    kept.insert("metadata".into(), Value::Object(meta));
                    for key in ["spec", "status"] {
                        if let Some(v) = full.get(key) {
                            kept.insert(key.into(), v.clone());
                        }
                    }
                    Value::Object(kept)
                }
                None => {
                    return Err(ApiError::not_found(crate::api_error::Target {
                        group: "",
                        resource: "namespaces",
                        name: namespace,
                    }));
                }
            }
        };
        self.namespace = Some(value.clone());
        Ok(value)
    }

    /// Evaluates one policy with one param.
    async fn evaluate(&mut self, compiled: &Compiled, params: &Value) -> ApiResult<Outcome> {
        let namespace = if compiled.uses_namespace {
            self.namespace_object().await?
        } else {
            Value::Null
        };
        let (invoked, name) = (self.invoked, self.name);
        let request = self
            .cel_request
            .get_or_insert_with(|| review::cel_request(self.request, invoked, name));
        let null = Value::Null;
        let authorizer = authorizing::authorizer_value(request);
        let bindings = [
            ("object", self.object.as_deref().unwrap_or(&null)),
            ("oldObject", self.old.as_deref().unwrap_or(&null)),
            ("request", &*request),
            ("params", params),
            ("namespaceObject", &namespace),
        ];
        let evaluate = || {
            crate::custom::cel::with_eval_stack(|| {
                evaluate_policy(compiled, &bindings, &authorizer)
            })
        };
        let user = self.request.user;
        Ok(authorizing::evaluate(self.authorizer, self.objects, user, evaluate).await)
    }
}

/// Evaluates a policy's variables, match conditions, validations and audit
/// annotations with `bindings` and the `authorizer` variable.
fn evaluate_policy(
    compiled: &Compiled,
    bindings: &[(&str, &Value)],
    authorizer: &cel::Value,
) -> Outcome {
    crate::custom::cel::with_activation(bindings, |activation| {
        activation.set_value("authorizer", authorizer.clone());
        evaluate_in(compiled, activation)
    })
}

/// A viewed object as JSON in the version the client wrote it in (its
/// stored form when the two are the same).
fn client_form<'v>(request: &Request<'_>, view: &'v View<'_>) -> ApiResult<Cow<'v, Value>> {
    if request.attrs.scope.is_served_as_stored() {
        view.json().map(Cow::Borrowed)
    } else {
        super::webhook::versioned_view(request, view).map(Cow::Owned)
    }
}

/// Whether the request's object can be seen in another version: a write
/// of the resource itself or its status (not a Scale, nor an action's
/// body of its own kind).
fn converts(request: &Request<'_>) -> bool {
    !request.via_scale
        && request.body_kind.is_none()
        && matches!(request.subresource(), "" | "status")
}

/// What the expressions of one rule set (the match conditions, the
/// validations, their messages, the audit annotations) may still spend,
/// and the variables whose cost the set has paid: cel-go evaluates a
/// variable when a set's expression first reads it, and keeps its value
/// for the rest of the set.
struct Spend {
    left: u64,
    paid: Vec<usize>,
}

impl Spend {
    fn new(budget: u64) -> Spend {
        Spend {
            left: budget,
            paid: Vec::new(),
        }
    }
}

/// [`evaluate_policy`] in `activation`.
fn evaluate_in(compiled: &Compiled, activation: &mut Activation<'_>) -> Outcome {
    let mut outcome = Outcome::default();
    // Variables in order, each seeing the ones before it.
    let mut variables = Map::new();
    let mut broken: Vec<(String, String)> = Vec::new();
    let mut variable_costs = Vec::with_capacity(compiled.variables.len());
    for (name, expression) in &compiled.variables {
        activation.set("variables", &Value::Object(variables.clone()));
        let (result, cost) = run(expression, activation);
        variable_costs.push(cost);
        match result {
            Ok(value) => {
                variables.insert(name.clone(), value);
            }
            Err(e) => broken.push((
                name.clone(),
                match e {
                    Failure::Compile(e) => {
                        format!("composited variable \"{name}\" fails to compile: {e}")
                    }
                    Failure::Run(e) => {
                        format!("composited variable \"{name}\" fails to evaluate: {e}")
                    }
                    Failure::Variable(e) => e,
                },
            )),
        }
    }
    activation.set("variables", &Value::Object(variables));
    // An expression that reads a variable that failed fails with it.
    let uses_broken = |text: &str| {
        broken
            .iter()
            .find(|(name, _)| text.contains(&format!("variables.{name}")))
            .map(|(_, e)| e.clone())
    };
    // An expression's cost is its own and, the first time its set reads a
    // variable (or a variable read through another), the variable's.
    // `None`: the set's budget is spent.
    let activation = &*activation;
    let evaluate = |expression: &Expression, spend: &mut Spend| {
        let (result, mut cost) = match uses_broken(&expression.text) {
            Some(e) => (Err(Failure::Variable(e)), 0),
            None => run(expression, activation),
        };
        let mut reads = Vec::new();
        variables_read(compiled, &expression.text, &mut reads);
        for index in reads {
            if !spend.paid.contains(&index) {
                spend.paid.push(index);
                cost = cost.saturating_add(variable_costs.get(index).copied().unwrap_or(0));
            }
        }
        if cost > spend.left {
            return None;
        }
        spend.left -= cost;
        Some(result)
    };
    let spent = |fail: bool| {
        let mut outcome = Outcome::default();
        if fail {
            outcome
                .failures
                .push((OUT_OF_BUDGET.to_owned(), "Invalid".to_owned(), 0));
        } else {
            outcome.ignored.push(OUT_OF_BUDGET.to_owned());
        }
        outcome
    };
    // Match conditions: a false one skips the policy for this param.
    let mut errors = Vec::new();
    let mut spend = Spend::new(MATCH_CONDITIONS_BUDGET);
    for condition in &compiled.conditions {
        match evaluate(condition, &mut spend) {
            None => return spent(compiled.fail),
            Some(Ok(Value::Bool(true))) => {}
            Some(Ok(Value::Bool(false))) => return outcome,
            Some(Ok(_)) => errors.push(format!(
                "expression '{}' resulted in error: the expression did not evaluate to a bool",
                condition.text
            )),
            Some(Err(e)) => errors.push(condition_error(&condition.text, e)),
        }
    }
    if !errors.is_empty() {
        if compiled.fail {
            let message = if errors.len() == 1 {
                errors.remove(0)
            } else {
                format!("[{}]", errors.join(", "))
            };
            outcome.failures.push((message, "Invalid".to_owned(), 0));
        }
        return outcome;
    }
    // Validations, then every message expression with what they left (as
    // upstream evaluates them: all of them, one set after the other).
    let mut spend = Spend::new(RUNTIME_BUDGET);
    let mut results = Vec::with_capacity(compiled.validations.len());
    for validation in &compiled.validations {
        match evaluate(&validation.expression, &mut spend) {
            Some(result) => results.push(result),
            None => return spent(compiled.fail),
        }
    }
    let mut spend = Spend::new(spend.left);
    let mut messages = Vec::with_capacity(compiled.validations.len());
    let mut messages_spent = false;
    for validation in &compiled.validations {
        let message = match &validation.message_expression {
            Some(expression) => match evaluate(expression, &mut spend) {
                Some(result) => result.ok(),
                None => {
                    messages_spent = true;
                    break;
                }
            },
            None => None,
        };
        messages.push(message);
    }
    for (index, (validation, result)) in compiled.validations.iter().zip(results).enumerate() {
        let reason = validation
            .reason
            .clone()
            .unwrap_or_else(|| "Invalid".to_owned());
        match result {
            Err(e) if compiled.fail => outcome.failures.push((
                condition_error(&validation.expression.text, e),
                reason,
                index,
            )),
            Err(e) => outcome
                .ignored
                .push(condition_error(&validation.expression.text, e)),
            Ok(_) if messages_spent => {
                if compiled.fail {
                    outcome.failures.push((
                        format!("failed messageExpression: {OUT_OF_BUDGET}"),
                        reason,
                        index,
                    ));
                }
            }
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => {
                let from_expression = match messages.get(index) {
                    Some(Some(Value::String(text))) => Some(text.trim().to_owned()),
                    _ => None,
                }
                .filter(|t| !t.is_empty() && !t.contains('\n') && t.len() <= 5120);
                let message = from_expression
                    .or_else(|| {
                        validation
                            .message
                            .as_deref()
                            .map(str::trim)
                            .filter(|m| !m.is_empty())
                            .map(str::to_owned)
                    })
                    .unwrap_or_else(|| {
                        format!("failed expression: {}", validation.expression.text.trim())
                    });
                outcome.failures.push((message, reason, index));
            }
            Ok(_) if compiled.fail => outcome.failures.push((
                format!(
                    "expression '{}' resulted in error: the expression did not evaluate to a bool",
                    validation.expression.text
                ),
                reason,
                index,
            )),
            Ok(_) => {}
        }
    }
    let mut spend = Spend::new(RUNTIME_BUDGET);
    for (key, expression) in &compiled.audit {
        match evaluate(expression, &mut spend) {
            // The set's budget spent: that error is the policy's only
            // decision.
            None => return spent(compiled.fail),
            Some(Ok(Value::String(text))) => {
                let text = text.trim();
                if !text.is_empty() {
                    outcome.annotations.push((key.clone(), text.to_owned()));
                }
            }
            Some(Ok(Value::Null)) => {}
            Some(Ok(other)) => {
                if compiled.fail {
                    outcome.failures.push((
                        format!(
                            "valueExpression '{}' resulted in unsupported return type: {}. Return type must be either string or null.",
                            expression.text,
                            cel_type(&other)
                        ),
                        "Invalid".to_owned(),
                        0,
                    ));
                }
            }
            Some(Err(e)) if compiled.fail => {
                outcome.failures.push((
                    condition_error(&expression.text, e),
                    "Invalid".to_owned(),
                    0,
                ));
            }
            Some(Err(e)) => outcome.ignored.push(condition_error(&expression.text, e)),
        }
    }
    outcome
}

/// The indexes of the variables `text` reads, directly or through other
/// variables.
fn variables_read(compiled: &Compiled, text: &str, found: &mut Vec<usize>) {
    for (index, (name, expression)) in compiled.variables.iter().enumerate() {
        if !found.contains(&index) && text.contains(&format!("variables.{name}")) {
            found.push(index);
            variables_read(compiled, &expression.text, found);
        }
    }
}

/// The words of an expression that failed: a compile error or a run-time
/// one.
fn condition_error(text: &str, error: Failure) -> String {
    match error {
        Failure::Compile(e) => format!("compilation error: compilation failed: {e}"),
        Failure::Run(e) => format!("expression '{text}' resulted in error: {e}"),
        Failure::Variable(e) => e,
    }
}

/// Why an expression gave no value.
enum Failure {
    Compile(String),
    Run(String),
    /// A variable it reads failed (the text is the variable's error).
    Variable(String),
}

/// Runs an expression in `activation`: its value as JSON, and what the
/// evaluation cost (cancelled past the per-call limit).
fn run(expression: &Expression, activation: &Activation<'_>) -> (Result<Value, Failure>, u64) {
    let program = match &expression.program {
        Ok(program) => program,
        Err(e) => return (Err(Failure::Compile(e.clone())), 0),
    };
    let (value, cost) = activation.evaluate_counted(program);
    (value.map(|v| to_json(&v)).map_err(Failure::Run), cost)
}

/// A CEL value as JSON (what variables and results carry on).
fn to_json(value: &cel::Value) -> Value {
    match value {
        cel::Value::Null => Value::Null,
        cel::Value::Bool(b) => json!(b),
        cel::Value::Int(i) => json!(i),
        cel::Value::UInt(u) => json!(u),
        cel::Value::Float(f) => json!(f),
        cel::Value::String(s) => json!(s.as_str()),
        cel::Value::List(items) => Value::Array(items.iter().map(to_json).collect()),
        cel::Value::Map(map) => Value::Object(
            map.map
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        cel::objects::Key::String(s) => s.to_string(),
                        cel::objects::Key::Int(i) => i.to_string(),
                        cel::objects::Key::Uint(u) => u.to_string(),
                        cel::objects::Key::Bool(b) => b.to_string(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        cel::Value::Timestamp(t) => json!(t.to_rfc3339()),
        other => json!(format!("{other:?}")),
    }
}

/// CEL's name of a value's type, for errors.
fn cel_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null_type",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "double",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

/// The refusal of the first Deny decision (upstream's policy dispatcher:
/// `admission.NewForbidden` with the decision's reason and its code).
fn refusal(request: &Request<'_>, name: &str, object: Option<&Value>, denial: Denial) -> ApiError {
    let text = match &denial.binding {
        Some(binding) => format!(
            "ValidatingAdmissionPolicy '{}' with binding '{binding}' denied request: {}",
            denial.policy, denial.message
        ),
        None => format!(
            "ValidatingAdmissionPolicy '{}' denied request: {}",
            denial.policy, denial.message
        ),
    };
    let info = request.attrs.scope.info();
    let resource = if info.group.is_empty() {
        info.plural.to_owned()
    } else {
        format!("{}.{}", info.plural, info.group)
    };
    let shown = if !name.is_empty() {
        name.to_owned()
    } else {
        object
            .and_then(|o| o.pointer("/metadata/generateName"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .unwrap_or("Unknown")
            .to_owned()
    };
    let code = match denial.reason.as_str() {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    let mut status = Status::failure(
        code,
        &denial.reason,
        format!("{resource} \"{shown}\" is forbidden: {text}"),
    );
    status.details = Some(StatusDetails {
        name: Some(shown),
        group: (!info.group.is_empty()).then(|| info.group.to_owned()),
        kind: Some(info.plural.to_owned()),
        causes: Some(vec![StatusCause {
            message: Some(text),
            ..StatusCause::default()
        }]),
        ..StatusDetails::default()
    });
    ApiError(Box::new(status), Vec::new())
}
