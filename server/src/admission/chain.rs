//! The admission chain: plugins behind one trait, run in the order they were
//! given (kube-apiserver's built-in ones are assembled in upstream's order by
//! `crate::admission_plugins::builtin`). A plugin says which requests it
//! mutates and which it validates, and works on the typed object; a plugin
//! that needs the object's JSON (one for kinds defined at run time) asks for
//! it, made once per phase and not at all when none does.
//! A quota stage, which upstream runs last as the ResourceQuota plugin, stays
//! a stage of its own after the chain: its charge is made right before the
//! write and refunded when the write fails.

use async_trait::async_trait;

use super::Attributes;
use super::subject::{Subject, View};
use crate::api_error::ApiResult;
use crate::body::Object;
use crate::loopback::Loopback;
use crate::options::{Given, WriteOptions};
use crate::recorder::Recorder;
use crate::scope::{Endpoint, Scope};
use crate::user::UserInfo;
use kapi_runtime::Resource;
use kapi_runtime::meta::{DeleteOptions, ObjectMeta};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What a write does to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// A create.
    Create,
    /// An update or patch, through `endpoint`.
    Update,
    /// A delete.
    Delete,
}

/// The request a plugin sees besides the object (upstream's
/// `admission.Attributes`).
pub struct Request<'a> {
    /// What the write does.
    pub operation: Operation,
    /// The endpoint written through (`Main` for creates and deletes).
    pub endpoint: Endpoint,
    /// The kind, the name errors give and the namespace.
    pub attrs: Attributes<'a>,
    /// Who writes.
    pub user: &'a UserInfo,
    /// `dryRun=All`: nothing is persisted.
    pub dry_run: bool,
    /// The write's query options as the client gave them.
    pub given: Given<'a>,
    /// A delete's options.
    pub delete_options: Option<&'a DeleteOptions>,
    /// Where plugins note warnings and audit annotations (none for the
    /// server's own writes).
    pub recorder: Option<&'a Recorder>,
    /// When the request must be answered.
    pub deadline: Option<Instant>,
    /// The group, version and kind of an action's body (an Eviction on
    /// `pods/eviction`), when the object admitted is not the resource's.
    pub body_kind: Option<(&'static str, &'static str, &'static str)>,
    /// A write through `/scale`: the object changes through its main
    /// endpoint, but admission from outside sees the Scale (upstream admits
    /// `deployments/scale` with an autoscaling/v1 Scale).
    pub via_scale: bool,
    /// Whether the mutating plugins run a second time (upstream's
    /// reinvocation context).
    pub reinvocation: Reinvocation,
}

/// Upstream's reinvocation context: a mutating webhook that changed the
/// object has the whole mutating chain run once more (the built-in plugins
/// see what the webhooks added: a container a webhook injected gets its
/// LimitRange defaults), and the webhooks keep, across both runs, which of
/// them ask to be called again.
#[derive(Debug, Default)]
pub struct Reinvocation {
    /// The chain runs once more.
    should: AtomicBool,
    /// The second run is under way.
    reinvoking: AtomicBool,
    /// The webhook plugin's own record.
    pub webhooks: Mutex<WebhookReinvocation>,
}

impl Reinvocation {
    /// Asks for the chain to run once more.
    pub fn require(&self) {
        self.should.store(true, Ordering::Relaxed);
    }

    /// Whether this is the second run.
    pub fn is_reinvoke(&self) -> bool {
        self.reinvoking.load(Ordering::Relaxed)
    }
}

/// What the webhooks keep for their second run (upstream's
/// `webhookReinvokeContext`), by webhook key.
#[derive(Debug, Default)]
pub struct WebhookReinvocation {
    /// `IfNeeded` webhooks called since the object last changed.
    pub previously_invoked: Vec<String>,
    /// The webhooks to call in the second run.
    pub reinvoke: Vec<String>,
    /// The object as the webhooks last left it (to tell whether the
    /// built-in plugins changed it in the second run).
    pub last_output: Option<serde_json::Value>,
}

impl WebhookReinvocation {
    /// A change: the `IfNeeded` webhooks called before it are to be called
    /// again.
    pub fn require_previously_invoked(&mut self) {
        let invoked = std::mem::take(&mut self.previously_invoked);
        for key in invoked {
            if !self.reinvoke.contains(&key) {
                self.reinvoke.push(key);
            }
        }
    }
}

impl<'a> Request<'a> {
    /// A request writing the object of `meta` in `scope` with `opts`.
    /// Errors name the object, or its `generateName` while the name is still
    /// to be generated (as upstream).
    pub fn new(
        operation: Operation,
        endpoint: Endpoint,
        scope: Scope<'a>,
        meta: &ObjectMeta,
        opts: &WriteOptions<'a>,
    ) -> Request<'a> {
        let name = match meta.name.as_deref() {
            Some(name) if !name.is_empty() => name.to_owned(),
            _ => meta.generate_name.clone().unwrap_or_default(),
        };
        let namespace = meta.namespace.clone().filter(|ns| !ns.is_empty());
        Request {
            operation,
            endpoint,
            attrs: Attributes {
                scope,
                name,
                namespace,
            },
            user: opts.user,
            dry_run: opts.dry_run,
            given: opts.given,
            delete_options: None,
            recorder: opts.recorder,
            deadline: opts.deadline,
            body_kind: (opts.subresource == "scale").then_some(("autoscaling", "v1", "Scale")),
            via_scale: opts.subresource == "scale",
            reinvocation: Reinvocation::default(),
        }
    }

    /// A delete of `name` in `scope` (whose namespace is the object's) with
    /// `options`, for `opts`' user and request.
    pub fn delete(
        scope: Scope<'a>,
        name: &str,
        options: &'a DeleteOptions,
        opts: &WriteOptions<'a>,
    ) -> Request<'a> {
        Request {
            operation: Operation::Delete,
            endpoint: Endpoint::Main,
            attrs: Attributes {
                scope,
                name: name.to_owned(),
                namespace: scope.namespace.map(str::to_owned),
            },
            user: opts.user,
            dry_run: options
                .dry_run
                .as_ref()
                .is_some_and(|d| d.iter().any(|v| v == "All")),
            given: Given::default(),
            delete_options: Some(options),
            recorder: opts.recorder,
            deadline: opts.deadline,
            body_kind: None,
            via_scale: false,
            reinvocation: Reinvocation::default(),
        }
    }

    /// A POST of a body of kind `body_kind` to the action `subresource` of
    /// object `name` in `scope` (an Eviction to `pods/<name>/eviction`): a
    /// create, as upstream admits it.
    pub fn action(
        scope: Scope<'a>,
        subresource: &'static kapi_runtime::Subresource,
        name: &str,
        body_kind: (&'static str, &'static str, &'static str),
        opts: &WriteOptions<'a>,
    ) -> Request<'a> {
        Request {
            operation: Operation::Create,
            endpoint: Endpoint::Part(subresource),
            attrs: Attributes {
                scope,
                name: name.to_owned(),
                namespace: scope.namespace.map(str::to_owned),
            },
            user: opts.user,
            dry_run: opts.dry_run,
            given: opts.given,
            delete_options: None,
            recorder: opts.recorder,
            deadline: opts.deadline,
            body_kind: Some(body_kind),
            via_scale: false,
            reinvocation: Reinvocation::default(),
        }
    }

    /// The subresource written through (`""` for the object itself).
    pub fn subresource(&self) -> &'static str {
        if self.via_scale {
            return "scale";
        }
        match self.endpoint {
            Endpoint::Main => "",
            Endpoint::Status => "status",
            Endpoint::Part(part) => part.name,
        }
    }

    /// Whether the request writes `plural` of `group` (the core group is "").
    pub fn is(&self, group: &str, plural: &str) -> bool {
        let info = self.attrs.scope.info();
        (info.group, info.plural) == (group, plural)
    }

    /// Whether the request writes objects of the kind `K` (through any of
    /// its endpoints and any served version: the kind's group and resource).
    pub fn is_kind<K: Resource>(&self) -> bool {
        let info = self.attrs.scope.info();
        (info.group, info.plural) == (K::INFO.group, K::INFO.plural)
    }

    /// Whether the request updates the object through its main endpoint
    /// (not a subresource).
    pub fn main_update(&self) -> bool {
        self.operation == Operation::Update && self.endpoint == Endpoint::Main
    }
}

/// One admission plugin.
#[async_trait]
pub trait Plugin: Send + Sync {
    /// Upstream's name for it (`LimitRanger`, `PodSecurity`...).
    fn name(&self) -> &'static str;

    /// Whether [`Plugin::judge`] looks at this request.
    fn judges(&self, _request: &Request<'_>) -> bool {
        false
    }

    /// Refuses the request on what it addresses alone, without its object
    /// (a create in a namespace being deleted, a delete of a system
    /// object); these run first, before the object is shaped.
    async fn judge(&self, _request: &Request<'_>, _objects: &dyn Loopback) -> ApiResult<()> {
        Ok(())
    }

    /// Whether [`Plugin::admit`] looks at this request.
    fn mutates(&self, _request: &Request<'_>) -> bool {
        false
    }

    /// Whether [`Plugin::validate`] looks at this request.
    fn validates(&self, _request: &Request<'_>) -> bool {
        false
    }

    /// Shapes (or refuses) the object being written; `old` is the stored
    /// object on an update.
    async fn admit(
        &self,
        _request: &Request<'_>,
        _object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Whether the plugin's configuration selects this delete or action
    /// (reading what it needs to know), so that one no plugin looks at costs
    /// nothing more: the stored object is not read for a delete, an action's
    /// body not turned into JSON.
    async fn selects_request(
        &self,
        _request: &Request<'_>,
        _objects: &dyn Loopback,
    ) -> ApiResult<bool> {
        Ok(false)
    }

    /// Refuses a delete of `old` (the stored object): upstream runs both
    /// admission phases on deletes, with no new object.
    async fn admit_delete(
        &self,
        _request: &Request<'_>,
        _old: &View<'_>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Whether [`Plugin::admit_action`] looks at actions (bodies of other
    /// kinds posted to a subresource: an Eviction, a Binding).
    fn handles_actions(&self) -> bool {
        false
    }

    /// Shapes or refuses an action's body, as JSON of its own kind.
    async fn admit_action(
        &self,
        _request: &Request<'_>,
        _body: &mut serde_json::Value,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Refuses (or warns about) the object about to be stored.
    async fn validate(
        &self,
        _request: &Request<'_>,
        _object: &View<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        Ok(())
    }
}

/// The stage after the chain on a create (upstream's ResourceQuota plugin):
/// what to charge is worked out with the other checks, and charged right
/// before the object is stored.
#[async_trait]
pub trait Quota: Send + Sync {
    /// Checks a create of `object` in `scope` against its namespace's
    /// quotas; answers what to charge (nothing on a dry run, or when no
    /// quota counts the object).
    async fn reserve<'a>(
        &self,
        objects: &dyn Loopback,
        scope: Scope<'a>,
        object: &Object,
        dry_run: bool,
    ) -> ApiResult<Option<Box<dyn QuotaCharge + 'a>>>;
}

/// A charge [`Quota::reserve`] decided on.
#[async_trait]
pub trait QuotaCharge: Send + Sync {
    /// Adds the usage to the quotas' status; refuses when another write
    /// used the room first.
    async fn charge(&self, objects: &dyn Loopback) -> ApiResult<()>;

    /// Gives the usage back, after a write that failed once charged.
    async fn refund(&self, objects: &dyn Loopback);
}

/// The enabled plugins, in the order they run, and the quota stage.
#[derive(Default)]
pub struct Chain {
    plugins: Vec<Box<dyn Plugin>>,
    quota: Option<Box<dyn Quota>>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.plugins.iter().map(|p| p.name()).collect();
        f.debug_struct("Chain").field("plugins", &names).finish()
    }
}

impl Chain {
    /// A chain of `plugins`, run in this order, then `quota` on creates.
    pub fn new(plugins: Vec<Box<dyn Plugin>>, quota: Option<Box<dyn Quota>>) -> Chain {
        Chain { plugins, quota }
    }

    /// The same chain with `plugins` running after its own (before the
    /// quota stage).
    pub fn with_plugins(mut self, plugins: Vec<Box<dyn Plugin>>) -> Chain {
        self.plugins.extend(plugins);
        self
    }

    /// The same chain without the plugins (and the quota stage) named in
    /// `names` (`--disable-admission-plugins`).
    pub fn without(mut self, names: &[&str]) -> Chain {
        self.plugins.retain(|p| !names.contains(&p.name()));
        if names.contains(&"ResourceQuota") {
            self.quota = None;
        }
        self
    }

    /// The quota stage of a create: what to charge, if anything.
    pub async fn quota<'a>(
        &self,
        objects: &dyn Loopback,
        scope: Scope<'a>,
        object: &Object,
        dry_run: bool,
    ) -> ApiResult<Option<Box<dyn QuotaCharge + 'a>>> {
        match &self.quota {
            Some(quota) => quota.reserve(objects, scope, object, dry_run).await,
            None => Ok(None),
        }
    }

    /// The names of the plugins, in the order they run.
    pub fn names(&self) -> Vec<&'static str> {
        self.plugins.iter().map(|p| p.name()).collect()
    }

    /// The judging phase: the plugins that refuse a request on what it
    /// addresses alone, in order, without converting anything.
    pub async fn judge(&self, request: &Request<'_>, objects: &dyn Loopback) -> ApiResult<()> {
        for plugin in self.plugins.iter().filter(|p| p.judges(request)) {
            plugin.judge(request, objects).await?;
        }
        Ok(())
    }

    /// The mutating phase: every plugin that mutates the request shapes the
    /// object (already defaulted), typed, or through
    /// its JSON form made once for the plugins that work on JSON.
    pub async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Object,
        old: Option<&Object>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let plugins: Vec<&dyn Plugin> = self
            .plugins
            .iter()
            .map(|p| &**p)
            .filter(|p| p.mutates(request))
            .collect();
        if plugins.is_empty() {
            return Ok(());
        }
        // The object is defaulted already: a body as it was decoded (as
        // upstream's decoder defaults it), a stored object as it was read.
        let old = old.map(View::new);
        let mut subject = Subject::new(object, request.attrs.scope.entry);
        for plugin in &plugins {
            plugin
                .admit(request, &mut subject, old.as_ref(), objects)
                .await?;
        }
        // A webhook changed the object: every mutating plugin runs once
        // more (upstream's reinvoker), the webhooks only for those that ask.
        let reinvocation = &request.reinvocation;
        if reinvocation.should.load(Ordering::Relaxed) {
            reinvocation.reinvoking.store(true, Ordering::Relaxed);
            for plugin in &plugins {
                plugin
                    .admit(request, &mut subject, old.as_ref(), objects)
                    .await?;
            }
        }
        subject.finish()
    }

    /// Whether a plugin looks at this delete's stored object (so it must be
    /// read first).
    pub async fn selects_request(
        &self,
        request: &Request<'_>,
        objects: &dyn Loopback,
    ) -> ApiResult<bool> {
        for plugin in &self.plugins {
            if plugin.selects_request(request, objects).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Both phases of a delete of `old`, in the plugins' order.
    pub async fn admit_delete(
        &self,
        request: &Request<'_>,
        old: &Object,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let old = View::new(old);
        for plugin in &self.plugins {
            if plugin.selects_request(request, objects).await? {
                plugin.admit_delete(request, &old, objects).await?;
            }
        }
        Ok(())
    }

    /// An action's admission: the plugins that look at actions, in order,
    /// on its body as JSON.
    pub async fn admit_action(
        &self,
        request: &Request<'_>,
        body: &mut serde_json::Value,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        for plugin in self.plugins.iter().filter(|p| p.handles_actions()) {
            plugin.admit_action(request, body, objects).await?;
        }
        Ok(())
    }

    /// Whether a plugin looks at this action (see
    /// [`Plugin::selects_request`]).
    pub async fn selects_action(
        &self,
        request: &Request<'_>,
        objects: &dyn Loopback,
    ) -> ApiResult<bool> {
        for plugin in self.plugins.iter().filter(|p| p.handles_actions()) {
            if plugin.selects_request(request, objects).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The validating phase: every plugin that validates the request looks
    /// at the object; the first refusal wins.
    pub async fn validate(
        &self,
        request: &Request<'_>,
        object: &Object,
        old: Option<&Object>,
        objects: &dyn Loopback,
        warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let plugins: Vec<&dyn Plugin> = self
            .plugins
            .iter()
            .map(|p| &**p)
            .filter(|p| p.validates(request))
            .collect();
        if plugins.is_empty() {
            return Ok(());
        }
        let (object, old) = (View::new(object), old.map(View::new));
        for plugin in plugins {
            plugin
                .validate(request, &object, old.as_ref(), objects, warnings)
                .await?;
        }
        Ok(())
    }
}
