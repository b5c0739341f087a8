//! What a kind does beyond the common strategy, behind hooks the generic
//! registry calls at fixed points. Upstream keeps this in each kind's own
//! storage (`pkg/registry/<group>/<kind>/storage`) around the generic Store;
//! here the kinds' modules (`crate::kinds`) implement [`KindRest`] and
//! [`Action`], and the table of them ([`Hooks`]) is assembled at start-up.
//! The registry names no kind: it asks the table.
//!
//! The fixed points, in a write's order: [`KindRest::before_create`] and
//! [`KindRest::before_update`] after validation and validating admission,
//! right before the object is stored (what they take outside the object is
//! given back when the write does not happen); [`KindRest::delete_step`]
//! inside a delete's read-modify-write, before the common graceful-deletion
//! rules; [`KindRest::after_delete`] once the object is gone. A kind served
//! from elsewhere than storage reads through [`KindRest::read_all`]; a kind
//! that is never stored (a review) is answered by [`KindRest::answer`]. An
//! [`Action`] is a POST whose body is another kind than the resource's (a
//! pod's `binding` and `eviction`, a service account's `token`).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use kapi_runtime::ResourceInfo;
use kapi_runtime::meta::DeleteOptions;
use kapi_runtime::validation::FieldErrors;
use kapi_storage::Storage;
use serde_json::Value;

use super::{Input, Object, Registry, Scope};
use crate::api_error::ApiResult;
use crate::user::UserInfo;

/// Something a write took outside the object (a Service's addresses and
/// ports), given back when the write does not happen, or once the stored
/// object no longer holds it.
#[async_trait]
pub trait Held: Send + Sync {
    /// Gives it back; failures are the holder's to log (the write's outcome
    /// stands either way).
    async fn release(&self, storage: &dyn Storage);
}

/// What a write took (or freed): nothing, or something to give back.
#[derive(Default)]
pub struct Taken(Option<Box<dyn Held>>);

impl Taken {
    /// Nothing was taken.
    pub fn nothing() -> Taken {
        Taken(None)
    }

    /// `held` was taken.
    pub fn of(held: impl Held + 'static) -> Taken {
        Taken(Some(Box::new(held)))
    }

    /// Gives back what was taken, if anything.
    pub async fn release(&self, storage: &dyn Storage) {
        if let Some(held) = &self.0 {
            held.release(storage).await;
        }
    }
}

/// A kind's own step of a DELETE, decided on the stored object before the
/// common rules (graceful deletion, finalizers).
pub enum DeleteStep {
    /// The common rules decide, on this object.
    Common(Object),
    /// The common grace rules decide, on this object whose deletion the
    /// kind marked before: the garbage collector's finalizers stay as the
    /// kind set them.
    Finish(Object),
    /// Write the object back as it is given (marked for deletion).
    Keep(Object),
    /// Leave the object as it is stored.
    Unchanged(Object),
}

/// A kind's REST behaviour beyond the common strategy. Every method has a
/// default that does nothing, so a kind implements only its own points.
#[async_trait]
pub trait KindRest: Send + Sync {
    /// Refuses a DELETE of `name` before anything is read (an object that
    /// may never go).
    fn refuse_delete(&self, _scope: Scope<'_>, _name: &str) -> ApiResult<()> {
        Ok(())
    }

    /// The kind's own step of a DELETE of the stored `object`. Runs inside
    /// the delete's read-modify-write, so it is called again when another
    /// writer came first.
    fn delete_step(
        &self,
        _scope: Scope<'_>,
        object: Object,
        _options: &DeleteOptions,
    ) -> ApiResult<DeleteStep> {
        Ok(DeleteStep::Common(object))
    }

    /// A `Warning` a DELETE with `options` of the kind (as served by
    /// `info`'s version) carries.
    fn delete_warning(
        &self,
        _info: &ResourceInfo,
        _options: &DeleteOptions,
    ) -> Option<&'static str> {
        None
    }

    /// Whether an object marked for deletion whose finalizers are all gone
    /// still waits for something of the kind's own (a namespace's
    /// `spec.finalizers`) before it is removed.
    fn still_finalizing(&self, _object: &Object) -> ApiResult<bool> {
        Ok(false)
    }

    /// The kind's validation beyond its compiled checks, on a create (`old`
    /// is `None`) or an update, with the others' errors.
    fn validate(&self, _object: &Object, _old: Option<&Object>, _errs: &mut FieldErrors) {}

    /// Completes a new object right before it is stored, taking what it
    /// needs outside it (given back if the create fails). A dry run takes
    /// nothing but completes the object the same way.
    async fn before_create(
        &self,
        _storage: &dyn Storage,
        _scope: Scope<'_>,
        _object: &mut Object,
        _dry_run: bool,
    ) -> ApiResult<Taken> {
        Ok(Taken::nothing())
    }

    /// Completes the new state of an update right before it is stored: what
    /// it took (given back if this attempt is not written) and what `old`
    /// held that the new state no longer does (given back once it is).
    async fn before_update(
        &self,
        _storage: &dyn Storage,
        _scope: Scope<'_>,
        _old: &Object,
        _new: &mut Object,
        _dry_run: bool,
    ) -> ApiResult<(Taken, Taken)> {
        Ok((Taken::nothing(), Taken::nothing()))
    }

    /// Completes a new object with what the request's `user` decides (a
    /// CertificateSigningRequest's requester), right after the common
    /// preparation of a create.
    fn prepare_create_for(
        &self,
        _scope: Scope<'_>,
        _object: &mut Object,
        _user: &UserInfo,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Refuses a create (`old` is `None`) or update `user` may not make
    /// whatever the authorizer allowed (RBAC's escalation checks); asked
    /// before admission on a create, on each attempt of an update.
    async fn authorize_write(
        &self,
        _registry: &Registry,
        _scope: Scope<'_>,
        _object: &Object,
        _old: Option<&Object>,
        _user: &UserInfo,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Answers the create of a kind that is never stored (a review), on
    /// behalf of `user`, once the object is validated. The default is the
    /// kind's own answer, which knows nothing of the request.
    async fn answer(
        &self,
        _registry: &Registry,
        _scope: Scope<'_>,
        object: &mut Object,
        _user: &UserInfo,
    ) -> ApiResult<()> {
        object.typed_mut().answer();
        Ok(())
    }

    /// After `object` (its last state) was removed from storage.
    async fn after_delete(&self, _storage: &dyn Storage, _scope: Scope<'_>, _object: &Object) {}

    /// Whether the kind's objects live in storage (and so are kept in the
    /// store's memory); false for one whose [`KindRest::read_all`] answers.
    fn is_stored(&self) -> bool {
        true
    }

    /// For a kind served from elsewhere than storage: every object, read
    /// now. `None` for a stored kind.
    async fn read_all(
        &self,
        _storage: &dyn Storage,
        _scope: Scope<'_>,
    ) -> Option<ApiResult<Vec<Object>>> {
        None
    }

    /// For a kind served from elsewhere than storage, the answer to a read
    /// of `name` that finds nothing (`None`: the common 404).
    fn missing(&self, _name: &str) -> Option<crate::api_error::ApiError> {
        None
    }

    /// A `Warning` every read of the kind carries (a deprecated kind).
    fn read_warning(&self) -> Option<&'static str> {
        None
    }
}

/// The body of an action, decoded at the edge.
pub enum ActionBody {
    /// A body of a kind the scheme serves as a resource (a Binding).
    Object(Input),
    /// A body of a kind that is no resource (an Eviction, a TokenRequest),
    /// as the JSON its type reads and writes.
    Value(Value),
}

/// A POST whose body is another kind than the resource's: an action on one
/// object (`pods/<name>/eviction`), or the create of a resource that is an
/// action on another (`bindings`).
#[async_trait]
pub trait Action: Send + Sync {
    /// Acts on object `name` of `scope` (`None` for a create of an action
    /// resource); a dry run checks everything and changes nothing. The
    /// answer is the body to send (in the action's body kind), or `None` for
    /// a `Success` Status.
    async fn act(
        &self,
        registry: &Registry,
        scope: Scope<'_>,
        name: Option<&str>,
        body: ActionBody,
        dry_run: bool,
        user: &UserInfo,
    ) -> ApiResult<Option<Value>>;
}

/// The kinds' hooks, by group and resource (and subresource for actions).
#[derive(Clone, Default)]
pub struct Hooks {
    rest: HashMap<(&'static str, &'static str), Arc<dyn KindRest>>,
    actions: HashMap<(&'static str, &'static str, &'static str), Arc<dyn Action>>,
}

impl Hooks {
    /// No hooks: every kind follows the common strategy only.
    pub fn new() -> Hooks {
        Hooks::default()
    }

    /// `rest` for the resource `plural` of `group`.
    pub fn with_rest(
        mut self,
        (group, plural): (&'static str, &'static str),
        rest: impl KindRest + 'static,
    ) -> Hooks {
        self.rest.insert((group, plural), Arc::new(rest));
        self
    }

    /// `action` for POSTs to `<plural>/<name>/<subresource>` of `group`;
    /// an empty `subresource` makes every create of the resource the action.
    pub fn with_action(
        mut self,
        (group, plural, subresource): (&'static str, &'static str, &'static str),
        action: Arc<dyn Action>,
    ) -> Hooks {
        self.actions.insert((group, plural, subresource), action);
        self
    }

    /// Adds `other`'s hooks, which replace these for the same resource.
    pub fn merged(mut self, other: Hooks) -> Hooks {
        self.rest.extend(other.rest);
        self.actions.extend(other.actions);
        self
    }

    /// The REST hooks of `info`'s kind, if it has any.
    pub fn rest(&self, info: &ResourceInfo) -> Option<&dyn KindRest> {
        self.rest
            .get(&(info.group, info.plural))
            .map(|r| r.as_ref())
    }

    /// Whether `info`'s objects live in storage (see [`KindRest::is_stored`]).
    pub fn is_stored(&self, info: &ResourceInfo) -> bool {
        self.rest(info).is_none_or(|rest| rest.is_stored())
    }

    /// The action behind `subresource` of `info`'s resource (`""`: its creates).
    pub fn action(&self, info: &ResourceInfo, subresource: &'static str) -> Option<&dyn Action> {
        self.actions
            .get(&(info.group, info.plural, subresource))
            .map(|a| a.as_ref())
    }
}
