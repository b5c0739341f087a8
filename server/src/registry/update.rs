//! UPDATE and PATCH: both are a guaranteed update whose new object is either the
//! body (PUT) or the patch applied to the current object, then mutating
//! admission -> PrepareForUpdate -> finalizer rules -> defaults and validation
//! -> validating admission -> storage.

use std::sync::Arc;

use serde_json::Value;

use super::hooks::Taken;
use super::{Endpoint, Input, Object, Registry, Scope, WriteOptions, Written, strategy};
use crate::admission::{Operation, Request};
use crate::api_error::{ApiError, ApiResult};
use crate::field_manager::Writer;
use crate::store::{Change, Current};
use crate::strategic_merge::{PatchError, PatchSchema, json_kind};

/// The patch formats served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchKind {
    /// RFC 6902 (`application/json-patch+json`).
    Json,
    /// RFC 7386 (`application/merge-patch+json`).
    Merge,
    /// Strategic merge patch (`application/strategic-merge-patch+json`),
    /// following the kind's schema.
    Strategic,
    /// Server-side apply (`application/apply-patch+yaml`); `force` takes
    /// the fields other managers own.
    Apply { force: bool },
}

/// A change the server itself makes to an object's JSON (in the served
/// version), given the current object: what an eviction does to a budget's
/// status, for instance. Errors abort the update.
pub type Edit<'a> = &'a (dyn Fn(&mut Value) -> ApiResult<()> + Sync);

/// A change the server itself makes to an object of a compiled kind, as
/// its Rust value in the served version (downcast by the caller): a
/// quota's charge, for instance. Errors abort the update.
pub type EditObject<'a> = &'a (dyn Fn(&mut Object) -> ApiResult<()> + Sync);

/// Where the new object of an update comes from.
enum Source<'a> {
    Body(&'a Object),
    Patch(PatchKind, &'a Value, Option<Arc<PatchSchema>>),
    Edit(Edit<'a>),
    EditObject(EditObject<'a>),
}

impl Registry {
    /// Replaces an object (PUT), with optimistic concurrency when the body carries
    /// a resourceVersion.
    pub async fn update(
        &self,
        scope: Scope<'_>,
        name: &str,
        input: Input,
        endpoint: Endpoint,
        opts: WriteOptions<'_>,
    ) -> ApiResult<Written> {
        let mut warnings = Vec::new();
        strategy::check_field_issues(
            &input,
            opts.field_validation,
            &mut warnings,
            strategy::body_refusal(scope),
        )?;
        let object = scope.to_storage(input.object)?;
        if object.metadata().name() != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                object.metadata().name()
            )));
        }
        let mut written = self
            .guaranteed_update(scope, name, Source::Body(&object), endpoint, opts)
            .await?;
        warnings.append(&mut written.warnings);
        written.warnings = warnings;
        Ok(written)
    }

    /// Applies a JSON or merge patch to the current object; retried on conflict
    /// unless the patch itself pins a resourceVersion.
    pub async fn patch(
        &self,
        scope: Scope<'_>,
        name: &str,
        kind: PatchKind,
        patch: &Value,
        endpoint: Endpoint,
        opts: WriteOptions<'_>,
    ) -> ApiResult<Written> {
        let schema = (kind == PatchKind::Strategic).then(|| self.patch_schema(scope.served));
        let updated = self
            .guaranteed_update(
                scope,
                name,
                Source::Patch(kind, patch, schema),
                endpoint,
                opts,
            )
            .await;
        match (kind, updated) {
            // An apply creates the object it does not find (not through a
            // subresource), as upstream's patcher does.
            (PatchKind::Apply { force }, Err(e))
                if e.code() == 404 && endpoint == Endpoint::Main =>
            {
                self.apply_create(scope, name, patch, force, opts).await
            }
            (_, updated) => updated,
        }
    }

    /// Creates `name` from an applied configuration.
    async fn apply_create(
        &self,
        scope: Scope<'_>,
        name: &str,
        patch: &Value,
        force: bool,
        opts: WriteOptions<'_>,
    ) -> ApiResult<Written> {
        let scheme = self.scheme();
        let writer = Writer::new(scope, Endpoint::Main, &opts);
        let applied = self
            .field_manager(&scheme)
            .apply(writer, None, patch.clone(), force)?;
        let object = applied_object(scope, applied)?;
        if object.metadata().name().is_empty() {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name} based on URL) was undeterminable: name must be provided"
            )));
        }
        if object.metadata().name() != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                object.metadata().name()
            )));
        }
        let mut written = self.create_object(scope, object, Vec::new(), opts).await?;
        written.created = true;
        Ok(written)
    }

    /// Changes the current object with `edit` and writes it through
    /// `endpoint`, as a patch would (prepare, admission, validation), retried
    /// on conflict: the server's own read-modify-write of an object.
    pub async fn edit(
        &self,
        scope: Scope<'_>,
        name: &str,
        endpoint: Endpoint,
        edit: Edit<'_>,
        opts: WriteOptions<'_>,
    ) -> ApiResult<Written> {
        self.guaranteed_update(scope, name, Source::Edit(edit), endpoint, opts)
            .await
    }

    /// [`Registry::edit`] of the object as its kind's Rust value, without
    /// its JSON.
    pub async fn edit_object(
        &self,
        scope: Scope<'_>,
        name: &str,
        endpoint: Endpoint,
        edit: EditObject<'_>,
        opts: WriteOptions<'_>,
    ) -> ApiResult<Written> {
        self.guaranteed_update(scope, name, Source::EditObject(edit), endpoint, opts)
            .await
    }

    /// Changes the stored object `name` with `change` in one read-modify-write
    /// of the store (tried again when another writer came first), without
    /// the strategy or admission: a kind's own REST writing what only it may
    /// write (a pod's binding), as upstream's per-kind storage calls the
    /// store's GuaranteedUpdate. `change` gets and gives the object in the
    /// storage version; a dry run computes the change and writes nothing.
    pub async fn change_stored(
        &self,
        scope: Scope<'_>,
        name: &str,
        dry_run: bool,
        change: &mut (dyn FnMut(Object) -> ApiResult<Object> + Send),
    ) -> ApiResult<()> {
        self.store
            .guaranteed_update(scope, name, &mut |current| {
                let current = current.ok_or_else(|| ApiError::not_found(scope.target(name)))?;
                let object = change(current)?;
                Ok(if dry_run {
                    Change::Keep
                } else {
                    Change::Write(object)
                })
            })
            .await?;
        Ok(())
    }

    async fn guaranteed_update(
        &self,
        scope: Scope<'_>,
        name: &str,
        source: Source<'_>,
        endpoint: Endpoint,
        opts: WriteOptions<'_>,
    ) -> ApiResult<Written> {
        // Read, compute, write if unchanged since the read, else again: the
        // store's GuaranteedUpdate, as a loop of the registry's own so that
        // each attempt may wait on other objects. It retries for as long as
        // it meets conflicts, as upstream: a conflict means another writer
        // succeeded, so the system as a whole progresses.
        let key = super::key(scope, name);
        // The kinds' own records (a Service's allocations) live beside the
        // objects.
        let storage = self.store.backend().as_ref();
        let target = || scope.target(name);
        // The first attempt starts from the store's guess where it has one
        // (not for a dry run, which writes nothing that would check it).
        let mut hint = match opts.dry_run {
            false => self.store.current_hint(scope, &key),
            true => None,
        };
        // A body written from a newer state than the guess (read from the
        // backend, or from another replica) needs the backend's.
        if let (Some(guess), Source::Body(body)) = (&hint, &source)
            && let Some(rv) = body.metadata().resource_version.as_deref()
            && rv.parse::<u64>().is_ok_and(|rv| rv > guess.revision())
        {
            hint = None;
        }
        loop {
            let current = match hint.take() {
                Some(guess) => guess,
                None => self
                    .store
                    .current(&key, target())
                    .await?
                    .ok_or_else(|| ApiError::not_found(target()))?,
            };
            let mut warnings = Vec::new();
            let attempt = self
                .next_object(
                    scope,
                    name,
                    &current,
                    &source,
                    (endpoint, opts),
                    &mut warnings,
                )
                .await;
            let (old, mut object, delete_after) = match attempt {
                Ok(next) => next,
                // Perhaps refused for being behind: the store decides.
                Err(_) if current.may_be_stale() => continue,
                Err(e) => return Err(e),
            };
            let rest = self.hooks.rest(scope.info());
            if let Some(rest) = rest {
                rest.authorize_write(self, scope, &object, Some(&old), opts.user)
                    .await?;
            }
            // What the kind takes for the new state (a Service's addresses)
            // and what the old state held that the new one gives back.
            let (taken, freed) = match rest {
                Some(rest) => {
                    match rest
                        .before_update(storage, scope, &old, &mut object, opts.dry_run)
                        .await
                    {
                        Ok(taken) => taken,
                        Err(_) if current.may_be_stale() => continue,
                        Err(e) => return Err(e),
                    }
                }
                None => (Taken::nothing(), Taken::nothing()),
            };
            if opts.dry_run {
                let object = scope.to_served(object)?;
                return Ok(Written::new(object, warnings));
            }
            let stored = match self.store.update(scope, name, &current, object).await {
                Ok(Some(stored)) => stored,
                // Another writer came first, deleted the object, or the
                // guess was behind: the next attempt sees the store's state.
                Ok(None) => {
                    taken.release(storage).await;
                    continue;
                }
                Err(e) => {
                    taken.release(storage).await;
                    return Err(e);
                }
            };
            freed.release(storage).await;
            if delete_after {
                // The last finalizer of an object being deleted is gone:
                // remove it, so watchers see MODIFIED and then DELETED, as
                // upstream.
                let revision = stored.revision().unwrap_or_default();
                if self.store.delete(scope, name, revision).await?
                    && let Some(rest) = rest
                {
                    let object = stored.object().map_err(ApiError::internal)?;
                    rest.after_delete(storage, scope, &object).await;
                }
            }
            return Ok(Written::shared(scope.to_served_cached(&stored)?, warnings));
        }
    }
}

impl Registry {
    /// One attempt: the object as stored, the object to write, and whether
    /// it must be deleted afterwards.
    async fn next_object(
        &self,
        scope: Scope<'_>,
        name: &str,
        current: &Current,
        source: &Source<'_>,
        (endpoint, opts): (Endpoint, WriteOptions<'_>),
        warnings: &mut Vec<String>,
    ) -> ApiResult<(Object, Object, bool)> {
        let mut old = current.object(scope.entry)?;
        let mut new = match source {
            Source::Body(object) => (*object).clone(),
            Source::Patch(PatchKind::Apply { force }, patch, _) => {
                let scheme = self.scheme();
                let writer = Writer::new(scope, endpoint, &opts);
                let applied = self.field_manager(&scheme).apply(
                    writer,
                    Some(&mut old),
                    (*patch).clone(),
                    *force,
                )?;
                applied_object(scope, applied)?
            }
            Source::Patch(kind, patch, schema) => {
                let (input, patched) = apply_patch(scope, &old, *kind, patch, schema.as_deref())?;
                let refusal = |error: String| {
                    // Upstream names the patched object in the refusal.
                    ApiError::invalid_patch_result(&patched.quoted(), &error)
                };
                strategy::check_field_issues(&input, opts.field_validation, warnings, refusal)?;
                input.object
            }
            Source::Edit(edit) => {
                let served = scope.to_served(old.clone())?;
                let mut doc = served.to_value().map_err(ApiError::internal)?;
                edit(&mut doc)?;
                let input = Input::from_value(scope.served, doc)?;
                scope.to_storage(input.object)?
            }
            Source::EditObject(edit) => {
                let mut served = scope.to_served(old.clone())?;
                edit(&mut served)?;
                scope.to_storage(served)?
            }
        };
        if let Some(rv) = new
            .metadata()
            .resource_version
            .as_deref()
            .filter(|rv| !rv.is_empty())
        {
            let rv: u64 = rv.parse().map_err(|_| {
                ApiError::bad_request(format!(
                    "metadata.resourceVersion: Invalid value: {rv:?}: must be an integer"
                ))
            })?;
            if rv != current.revision() {
                return Err(ApiError::conflict_modified(scope.target(name)));
            }
        }
        if new.metadata().name() != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                new.metadata().name()
            )));
        }
        // The server's own edits are recorded when they name a manager (what
        // upstream writes through its loopback client); a body or a patch
        // always is; an apply recorded its ownership itself.
        let tracked = match source {
            Source::Body(_) => true,
            Source::Patch(PatchKind::Apply { .. }, ..) => false,
            Source::Patch(..) => true,
            Source::Edit(_) | Source::EditObject(_) => !opts.manager.is_empty(),
        };
        if tracked {
            // Defaulted as upstream's decoder does; the writer owns what it
            // changed.
            new.typed_mut().apply_defaults();
            let scheme = self.scheme();
            let writer = Writer::new(scope, endpoint, &opts);
            self.field_manager(&scheme)
                .update(writer, Some(&mut old), &mut new);
        }
        strategy::check_namespace(scope, new.metadata_mut())?;
        let request = Request::new(Operation::Update, endpoint, scope, new.metadata(), &opts);
        self.admission
            .admit(&request, &mut new, Some(&old), self)
            .await?;
        strategy::prepare_update(scope, &old, &mut new, endpoint);
        check_finalizers(scope, &old, &new)?;
        strategy::admit(
            scope,
            self.hooks.rest(scope.info()),
            &mut new,
            Some((&old, endpoint)),
        )
        .map_err(|e| e.with_warnings(warnings))?;
        // Status strategies warn about nothing upstream.
        if !matches!(endpoint, Endpoint::Status) {
            warnings.extend(new.typed().warnings(Some(old.typed())));
        }
        self.admission
            .validate(&request, &new, Some(&old), self, warnings)
            .await?;
        strategy::bump_generation(scope, &old, &mut new);
        let meta = new.metadata();
        let mut delete_after = meta.deletion_timestamp.is_some()
            && meta.finalizers().is_empty()
            && meta.deletion_grace_period_seconds.unwrap_or(0) == 0;
        // A kind may wait for its own cleanup as well (a namespace's
        // spec.finalizers).
        if delete_after && let Some(rest) = self.hooks.rest(scope.info()) {
            delete_after = !rest.still_finalizing(&new)?;
        }
        Ok((old, new, delete_after))
    }
}

/// The object an apply produced (the served version's JSON) in the
/// storage version, defaulted as upstream defaults it.
fn applied_object(scope: Scope<'_>, applied: Value) -> ApiResult<Object> {
    let input = Input::from_value(scope.served, applied)?;
    let mut object = scope.to_storage(input.object)?;
    object.typed_mut().apply_defaults();
    Ok(object)
}

/// Once deletion was requested, finalizers may only be removed.
fn check_finalizers(scope: Scope<'_>, old: &Object, new: &Object) -> ApiResult<()> {
    if old.metadata().deletion_timestamp.is_none() {
        return Ok(());
    }
    let old_set = old.metadata().finalizers();
    if new
        .metadata()
        .finalizers()
        .iter()
        .any(|f| !old_set.contains(f))
    {
        let mut errs = kapi_runtime::validation::FieldErrors::default();
        errs.forbidden(
            kapi_runtime::validation::FieldPath::new("metadata").child("finalizers"),
            "no new finalizers can be added if the object is being deleted",
        );
        let info = scope.info();
        return Err(ApiError::invalid(
            info.group,
            info.kind,
            new.metadata().name(),
            &errs,
        ));
    }
    Ok(())
}

/// Applies a patch to the JSON form of the current object (patches are defined
/// on JSON, upstream applies them the same way) and decodes the result.
///
/// The patch applies to the object as the client sees it, in the served
/// version; the result is decoded in that version and then stored in the
/// kind's storage version.
fn apply_patch(
    scope: Scope<'_>,
    old: &Object,
    kind: PatchKind,
    patch: &Value,
    schema: Option<&PatchSchema>,
) -> ApiResult<(Input, Patched)> {
    let mut served = scope.to_served(old.clone())?;
    // managedFields a patch cannot reach stay out of its JSON and come back
    // as they were: no FieldsV1 is parsed into JSON and decoded again.
    let kept = keeps_managed_fields(kind, patch)
        .then(|| served.metadata_mut().managed_fields.take())
        .flatten();
    let mut doc = served.to_value().map_err(ApiError::internal)?;
    apply_patch_to(&mut doc, kind, patch, schema)?;
    let patched = Patched { doc, kept };
    // A patched object that is no object of the kind (a changed kind or
    // apiVersion, a value of the wrong type) is a 422 naming it, as upstream.
    let mut input = Input::from_value(scope.served, patched.doc.clone()).map_err(|e| {
        let why = e.0.message.clone().unwrap_or_default();
        ApiError::invalid_patch_result(&patched.quoted(), &why)
    })?;
    if patched.kept.is_some() {
        input.object.metadata_mut().managed_fields = patched.kept.clone();
    }
    // Go decodes the patched object from a map, whose keys it visits in
    // order: its reports come in path order.
    let mut field_issues = input.field_issues;
    field_issues.sort_by(|a, b| a.split('.').cmp(b.split('.')));
    let input = Input {
        object: scope.to_storage(input.object)?,
        field_issues,
        yaml_duplicates: Vec::new(),
    };
    Ok((input, patched))
}

/// A patched object's JSON, without the managedFields the patch could not
/// reach (kept aside).
struct Patched {
    doc: Value,
    kept: Option<Vec<kapi_runtime::meta::ManagedFieldsEntry>>,
}

impl Patched {
    /// The patched object whole, as upstream's refusals quote it.
    fn quoted(&self) -> String {
        let mut doc = self.doc.clone();
        if let Some(list) = &self.kept
            && let Some(meta) = doc.get_mut("metadata").and_then(Value::as_object_mut)
            && let Ok(list) = serde_json::to_value(list)
        {
            meta.insert("managedFields".into(), list);
        }
        sorted_json(&doc)
    }
}

/// Whether a patch leaves `metadata.managedFields` as they are, seen from
/// the patch alone: it names neither them nor a parent of them (nor, in a
/// strategic merge patch, a directive at the root or in `metadata`, which
/// may replace or prune keys it does not name).
fn keeps_managed_fields(kind: PatchKind, patch: &Value) -> bool {
    let untouched_object = |value: &Value, directives: bool| {
        value.as_object().is_some_and(|map| {
            !map.contains_key("managedFields")
                && !(directives && map.keys().any(|k| k.starts_with('$')))
        })
    };
    match kind {
        PatchKind::Merge | PatchKind::Strategic => {
            let directives = kind == PatchKind::Strategic;
            let Some(root) = patch.as_object() else {
                return false;
            };
            if directives && root.keys().any(|k| k.starts_with('$')) {
                return false;
            }
            root.get("metadata")
                .is_none_or(|meta| untouched_object(meta, directives))
        }
        PatchKind::Json => patch.as_array().is_some_and(|ops| {
            ops.iter().all(|op| {
                ["path", "from"].iter().all(|field| match op.get(*field) {
                    None => true,
                    Some(Value::String(pointer)) => {
                        pointer != "/metadata"
                            && !pointer.is_empty()
                            && !pointer.starts_with("/metadata/managedFields")
                    }
                    Some(_) => false,
                })
            })
        }),
        PatchKind::Apply { .. } => false,
    }
}

/// Applies a patch to a JSON document (a strategic merge patch following
/// `schema`).
pub(super) fn apply_patch_to(
    doc: &mut Value,
    kind: PatchKind,
    patch: &Value,
    schema: Option<&PatchSchema>,
) -> ApiResult<()> {
    match kind {
        PatchKind::Strategic => {
            let schema = schema
                .ok_or_else(|| ApiError::internal("no schema for a strategic merge patch"))?;
            schema.apply(doc, patch).map_err(|e| match e {
                PatchError::NotAnObject(kind) => ApiError::bad_request(format!(
                    "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
                )),
                PatchError::Invalid(message) => ApiError::plain(message),
            })?;
        }
        PatchKind::Merge => {
            if !patch.is_object() {
                return Err(not_a_map(patch));
            }
            json_patch::merge(doc, patch);
        }
        PatchKind::Apply { .. } => {
            return Err(ApiError::internal(
                "an applied configuration is merged by the field manager, not patched",
            ));
        }
        PatchKind::Json => {
            if !patch.is_array() {
                return Err(ApiError::bad_request(format!(
                    "error decoding patch: json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                    json_kind(patch)
                )));
            }
            let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            json_patch::patch(doc, &ops).map_err(|_| ApiError::unprocessable_patch())?;
        }
    }
    Ok(())
}

/// A merge patch that is no JSON object, refused in Go's decoder's words.
fn not_a_map(patch: &Value) -> ApiError {
    ApiError::bad_request(format!(
        "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
        json_kind(patch)
    ))
}

/// A JSON text with every object's keys in order, as Go writes a decoded
/// map (the patched object upstream's refusals quote).
fn sorted_json(value: &Value) -> String {
    fn sort(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sort(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(value).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{PatchKind, keeps_managed_fields};

    #[test]
    fn patches_that_cannot_reach_managed_fields() {
        let keeps = |kind, patch| keeps_managed_fields(kind, &patch);
        // Merge patches: only metadata.managedFields or metadata itself.
        assert!(keeps(PatchKind::Merge, json!({"data": {"a": "1"}})));
        assert!(keeps(
            PatchKind::Merge,
            json!({"metadata": {"labels": {"a": "b"}}})
        ));
        assert!(!keeps(
            PatchKind::Merge,
            json!({"metadata": {"managedFields": null}})
        ));
        assert!(!keeps(PatchKind::Merge, json!({"metadata": null})));
        assert!(!keeps(PatchKind::Merge, json!([])));
        // Strategic merge patches: directives at the root or in metadata
        // may drop keys they do not name; elsewhere they cannot.
        assert!(keeps(
            PatchKind::Strategic,
            json!({"spec": {"$retainKeys": ["a"], "a": 1}})
        ));
        assert!(!keeps(PatchKind::Strategic, json!({"$patch": "replace"})));
        assert!(!keeps(
            PatchKind::Strategic,
            json!({"metadata": {"$retainKeys": ["name"]}})
        ));
        assert!(!keeps(
            PatchKind::Strategic,
            json!({"metadata": {"$setElementOrder/managedFields": []}})
        ));
        // JSON patches: no path or source at the root, metadata or under
        // managedFields.
        assert!(keeps(
            PatchKind::Json,
            json!([{"op": "replace", "path": "/data/a", "value": "1"},
                   {"op": "add", "path": "/metadata/labels", "value": {}}])
        ));
        for pointer in [
            "",
            "/metadata",
            "/metadata/managedFields",
            "/metadata/managedFields/0",
        ] {
            assert!(!keeps(
                PatchKind::Json,
                json!([{"op": "remove", "path": pointer}])
            ));
            assert!(!keeps(
                PatchKind::Json,
                json!([{"op": "copy", "from": pointer, "path": "/data/x"}])
            ));
        }
        assert!(!keeps(PatchKind::Json, json!([{"op": "test", "path": 1}])));
        assert!(!keeps(PatchKind::Apply { force: false }, json!({})));
    }
}
