//! The webhooks of the cluster's Mutating- and ValidatingWebhookConfigurations,
//! compiled once per configuration and resourceVersion: the configurations
//! sorted by name, their webhooks in order (upstream's webhook managers).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use kapi_api_types::admissionregistration::v1::mutatingwebhookconfiguration::MutatingWebhook;
use kapi_api_types::admissionregistration::v1::rule::{MatchCondition, RuleWithOperations};
use kapi_api_types::admissionregistration::v1::validatingwebhookconfiguration::ValidatingWebhook;
use kapi_api_types::admissionregistration::v1::webhook::WebhookClientConfig;
use kapi_api_types::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kapi_runtime::meta::LabelSelector as MetaSelector;

use crate::api_error::ApiResult;
use crate::body::Object;
use crate::loopback::{self, Loopback};
use crate::selectors::label::LabelSelector;
use crate::webhook_client::{self, Target};

/// One webhook, ready to match and call.
pub struct Hook {
    /// Its configuration's name.
    pub configuration: String,
    /// Its own name.
    pub name: String,
    pub rules: Vec<RuleWithOperations>,
    /// `failurePolicy: Fail` (the default), else Ignore.
    pub fail: bool,
    pub namespace_selector: Result<LabelSelector, String>,
    pub object_selector: Result<LabelSelector, String>,
    pub side_effects: Option<String>,
    pub timeout: Duration,
    /// The AdmissionReview version the webhook accepts first.
    pub review_version: Option<&'static str>,
    pub target: Result<Target, String>,
    /// `matchConditions`: each expression, compiled.
    pub conditions: Vec<Condition>,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    pub reinvoke: bool,
    /// `matchPolicy: Equivalent` (the default): called for requests to
    /// other versions of the resources its rules name.
    pub equivalent: bool,
}

/// One of a webhook's `matchConditions`.
pub struct Condition {
    pub expression: String,
    pub program: Result<cel::Program, String>,
}

/// What both webhook kinds share, as the compiled form reads it.
struct Fields<'a> {
    name: &'a str,
    client_config: &'a WebhookClientConfig,
    rules: Option<&'a Vec<RuleWithOperations>>,
    failure_policy: Option<&'a str>,
    namespace_selector: Option<&'a MetaSelector>,
    object_selector: Option<&'a MetaSelector>,
    side_effects: Option<&'a String>,
    timeout_seconds: Option<i32>,
    admission_review_versions: &'a [String],
    match_conditions: &'a [MatchCondition],
    reinvocation_policy: Option<&'a str>,
    match_policy: Option<&'a str>,
}

impl Hook {
    fn compile(configuration: &str, fields: Fields<'_>) -> Hook {
        let selector = |s: Option<&MetaSelector>| match s {
            None => Ok(LabelSelector::everything()),
            Some(s) => LabelSelector::from_meta(Some(s)),
        };
        let config = fields.client_config;
        Hook {
            configuration: configuration.to_owned(),
            name: fields.name.to_owned(),
            rules: fields.rules.cloned().unwrap_or_default(),
            fail: fields.failure_policy != Some("Ignore"),
            namespace_selector: selector(fields.namespace_selector),
            object_selector: selector(fields.object_selector),
            side_effects: fields.side_effects.cloned(),
            timeout: Duration::from_secs(
                u64::try_from(fields.timeout_seconds.unwrap_or(10)).unwrap_or(10),
            ),
            review_version: fields.admission_review_versions.iter().find_map(|v| {
                match v.as_str() {
                    "v1" => Some("v1"),
                    "v1beta1" => Some("v1beta1"),
                    _ => None,
                }
            }),
            target: Target::new(&webhook_client::Config {
                url: config.url.clone(),
                service: config.service.as_ref().map(|s| webhook_client::ServiceRef {
                    namespace: s.namespace.clone(),
                    name: s.name.clone(),
                    path: s.path.clone(),
                    port: s.port,
                }),
                ca_bundle: config
                    .ca_bundle
                    .as_ref()
                    .map(|b| b.0.clone())
                    .unwrap_or_default(),
            }),
            conditions: fields
                .match_conditions
                .iter()
                .map(|c| Condition {
                    expression: c.expression.clone(),
                    program: crate::custom::cel::parse(&c.expression),
                })
                .collect(),
            reinvoke: fields.reinvocation_policy == Some("IfNeeded"),
            equivalent: fields.match_policy != Some("Exact"),
        }
    }
}

/// A configuration kind: its webhooks, compiled.
pub trait Configuration: kapi_runtime::Resource {
    /// Its webhooks in order.
    fn hooks(&self) -> Vec<Arc<Hook>>;
}

fn numbered<'a, W>(
    configuration: &str,
    webhooks: &'a [W],
    fields: impl Fn(&'a W) -> Fields<'a>,
) -> Vec<Arc<Hook>> {
    webhooks
        .iter()
        .map(|w| Arc::new(Hook::compile(configuration, fields(w))))
        .collect()
}

impl Configuration for MutatingWebhookConfiguration {
    fn hooks(&self) -> Vec<Arc<Hook>> {
        let name = self.metadata.name.as_deref().unwrap_or_default();
        let webhooks = self.webhooks.as_deref().unwrap_or_default();
        numbered(name, webhooks, |w: &MutatingWebhook| Fields {
            name: &w.name,
            client_config: &w.client_config,
            rules: w.rules.as_ref(),
            failure_policy: w.failure_policy.as_deref(),
            namespace_selector: w.namespace_selector.as_ref(),
            object_selector: w.object_selector.as_ref(),
            side_effects: w.side_effects.as_ref(),
            timeout_seconds: w.timeout_seconds,
            admission_review_versions: &w.admission_review_versions,
            match_conditions: w.match_conditions.as_deref().unwrap_or_default(),
            reinvocation_policy: w.reinvocation_policy.as_deref(),
            match_policy: w.match_policy.as_deref(),
        })
    }
}

impl Configuration for ValidatingWebhookConfiguration {
    fn hooks(&self) -> Vec<Arc<Hook>> {
        let name = self.metadata.name.as_deref().unwrap_or_default();
        let webhooks = self.webhooks.as_deref().unwrap_or_default();
        numbered(name, webhooks, |w: &ValidatingWebhook| Fields {
            name: &w.name,
            client_config: &w.client_config,
            rules: w.rules.as_ref(),
            failure_policy: w.failure_policy.as_deref(),
            namespace_selector: w.namespace_selector.as_ref(),
            object_selector: w.object_selector.as_ref(),
            side_effects: w.side_effects.as_ref(),
            timeout_seconds: w.timeout_seconds,
            admission_review_versions: &w.admission_review_versions,
            match_conditions: w.match_conditions.as_deref().unwrap_or_default(),
            reinvocation_policy: None,
            match_policy: w.match_policy.as_deref(),
        })
    }
}

/// The compiled hooks of one configuration kind, kept by configuration name
/// and resourceVersion.
#[derive(Default)]
pub struct Source {
    compiled: Mutex<Compiled>,
}

/// Hooks by configuration name.
type Compiled = HashMap<String, Entry>;

/// One configuration's hooks, compiled at its resourceVersion.
struct Entry {
    version: String,
    hooks: Vec<Arc<Hook>>,
    /// The configuration as the server holds it: kept so that reading it on
    /// the next write finds it decoded.
    _object: Arc<Object>,
}

impl Source {
    /// Every webhook of the configurations of kind `C`: configurations by
    /// name, webhooks in their order.
    pub async fn hooks<C: Configuration>(
        &self,
        objects: &dyn Loopback,
    ) -> ApiResult<Vec<Arc<Hook>>> {
        let shared = loopback::list_shared::<C>(objects, None).await?;
        let mut compiled = self.compiled.lock().unwrap_or_else(PoisonError::into_inner);
        if shared.is_empty() {
            compiled.clear();
            return Ok(Vec::new());
        }
        let mut configurations: Vec<(&C, &Arc<Object>)> = shared
            .iter()
            .filter_map(|o| Some((o.downcast_ref::<C>()?, o)))
            .collect();
        configurations.sort_by(|a, b| a.0.metadata().name.cmp(&b.0.metadata().name));
        let mut kept = HashMap::with_capacity(configurations.len());
        let mut all = Vec::new();
        for (configuration, object) in configurations {
            let meta = configuration.metadata();
            let name = meta.name.clone().unwrap_or_default();
            let version = meta.resource_version.clone().unwrap_or_default();
            let hooks = match compiled.remove(&name) {
                Some(entry) if entry.version == version => entry,
                _ => Entry {
                    version,
                    hooks: configuration.hooks(),
                    _object: object.clone(),
                },
            };
            all.extend(hooks.hooks.iter().cloned());
            kept.insert(name, hooks);
        }
        *compiled = kept;
        Ok(all)
    }
}
