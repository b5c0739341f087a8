//! Field ownership on every write and server-side apply, as
//! k8s.io/apimachinery's FieldManager chains them: the managedFields of
//! the object (or of the live one) are read, the engine computes the new
//! ownership in the request's version, the entries get their identifiers
//! and times, fields of the object's identity are never owned, and Update
//! entries are capped.

pub mod entries;
mod schemas;

use std::collections::HashMap;
use std::sync::Arc;

use kapi_runtime::meta::Time;
use kapi_runtime::scheme::Scheme;
use kapi_structured_merge::path::{PathElement, path_string};
use kapi_structured_merge::set::Set;
use kapi_structured_merge::typed::Typed;
use kapi_structured_merge::updater::{Conflict, UpdateError, Updater, VersionedSet};
use serde_json::Value;

use crate::api_error::{ApiError, ApiResult};
use crate::body::Object;
use crate::options::WriteOptions;
use crate::scope::{Endpoint, Scope};
use entries::{APPLY, Managed, ManagerId, UPDATE};
pub use schemas::Schemas;
use schemas::{KindFacts, Versions};

/// The manager of the internal step that takes ownership of what existed
/// before an object's first apply.
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// What a write goes through and who makes it.
#[derive(Clone, Copy)]
pub struct Writer<'a> {
    pub scope: Scope<'a>,
    pub endpoint: Endpoint,
    pub manager: &'a str,
    /// The subresource managedFields name (`scale` for a write through
    /// `/scale`, which changes the object through its main endpoint).
    subresource: &'a str,
}

impl<'a> Writer<'a> {
    /// The writer of a request through `endpoint` with `opts`.
    pub fn new(scope: Scope<'a>, endpoint: Endpoint, opts: &WriteOptions<'a>) -> Writer<'a> {
        let subresource = match endpoint {
            _ if !opts.subresource.is_empty() => opts.subresource,
            Endpoint::Main => "",
            Endpoint::Status => "status",
            Endpoint::Part(part) => part.name,
        };
        Writer {
            scope,
            endpoint,
            manager: opts.manager,
            subresource,
        }
    }

    fn subresource(&self) -> &str {
        self.subresource
    }
}

/// Tracks ownership for the kinds of one scheme.
pub struct FieldManager<'a> {
    pub schemas: &'a Schemas,
    pub scheme: &'a Scheme,
}

/// The paths no manager owns: the object's identity and server-set
/// metadata (`stripMetaManager`).
fn stripped() -> &'static Set {
    static STRIPPED: std::sync::OnceLock<Set> = std::sync::OnceLock::new();
    STRIPPED.get_or_init(stripped_paths)
}

fn stripped_paths() -> Set {
    let mut set = Set::new();
    let f = PathElement::field;
    for path in [
        vec![f("apiVersion")],
        vec![f("kind")],
        vec![f("metadata")],
        vec![f("metadata"), f("name")],
        vec![f("metadata"), f("namespace")],
        vec![f("metadata"), f("creationTimestamp")],
        vec![f("metadata"), f("selfLink")],
        vec![f("metadata"), f("uid")],
        vec![f("metadata"), f("clusterName")],
        vec![f("metadata"), f("generation")],
        vec![f("metadata"), f("managedFields")],
        vec![f("metadata"), f("resourceVersion")],
    ] {
        set.insert(&path);
    }
    set
}

/// The fields an endpoint resets, which nobody owns through it (the
/// ResetFieldsStrategy of upstream's kinds, declared on each kind).
fn reset_fields(writer: &Writer<'_>, version: &str) -> HashMap<String, Set> {
    let reset = &writer.scope.info().reset_fields;
    let paths = match writer.endpoint {
        Endpoint::Main => reset.main,
        Endpoint::Status => reset.status,
        Endpoint::Part(_) => &[],
    };
    if paths.is_empty() {
        return HashMap::new();
    }
    let mut set = Set::new();
    for path in paths {
        let path: Vec<PathElement> = path.split('.').map(PathElement::field).collect();
        set.insert(&path);
    }
    HashMap::from([(version.to_owned(), set)])
}

impl FieldManager<'_> {
    fn facts(&self, writer: &Writer<'_>) -> ApiResult<Arc<KindFacts>> {
        self.schemas
            .of(writer.scope.served)
            .map_err(ApiError::internal)
    }

    /// The served-version JSON of a stored object without its
    /// managedFields (converted only when the served version is not the
    /// stored one). They are set aside while it is serialized, not
    /// serialized and dropped: their FieldsV1 would be parsed for nothing.
    fn served_json(&self, writer: &Writer<'_>, object: &mut Object) -> ApiResult<Value> {
        let managed = object.metadata_mut().managed_fields.take();
        let served = writer.scope.served;
        let json = if served.hub().is_none() && !served.is_custom() {
            object.to_value().map_err(ApiError::internal)
        } else {
            writer
                .scope
                .to_served(object.clone())
                .and_then(|served| served.to_value().map_err(ApiError::internal))
        };
        object.metadata_mut().managed_fields = managed;
        json
    }

    fn updater_parts<'v>(&'v self, writer: &'v Writer<'_>) -> Versions<'v> {
        let info = writer.scope.served.info;
        Versions {
            scheme: self.scheme,
            schemas: self.schemas,
            group: info.group,
            kind: info.kind,
        }
    }

    /// Records `manager`'s update of `live` (None on create) into `new`:
    /// its managedFields afterwards. Failures leave the live object's
    /// managedFields, as upstream's UpdateNoErrors does.
    pub fn update(&self, writer: Writer<'_>, mut live: Option<&mut Object>, new: &mut Object) {
        match self.try_update(&writer, live.as_deref_mut(), new) {
            Ok(entries) => new.metadata_mut().managed_fields = entries,
            Err(e) => {
                tracing::warn!(error = ?e.0.message, "could not update managedFields");
                new.metadata_mut().managed_fields =
                    live.and_then(|l| l.metadata().managed_fields.clone());
            }
        }
    }

    fn try_update(
        &self,
        writer: &Writer<'_>,
        live: Option<&mut Object>,
        new: &mut Object,
    ) -> ApiResult<Option<Vec<kapi_runtime::meta::ManagedFieldsEntry>>> {
        let managed = decode_live_or_new(writer, live.as_deref(), new);
        // An object that has no managedFields and exists already is not
        // tracked until it is applied to (skipNonAppliedManager).
        if managed.fields.is_empty() && live.as_ref().is_some_and(|l| l.metadata().uid.is_some()) {
            return Ok(None);
        }
        let facts = self.facts(writer)?;
        let live_json = match live {
            Some(live) => self.served_json(writer, live)?,
            None => facts.empty.clone(),
        };
        let new_json = self.served_json(writer, new)?;
        let live = Typed::new(live_json, facts.schema.clone());
        let new = Typed::new(new_json, facts.schema.clone());
        let mut managed = managed;
        self.record_update(writer, &live, &new, &mut managed, writer.manager)?;
        entries::cap_update_managers(&mut managed);
        Ok(entries::encode(&managed))
    }

    /// One Update through the chain below the cap: identifier, the
    /// current-operation step, stripped metadata, the engine.
    fn record_update(
        &self,
        writer: &Writer<'_>,
        live: &Typed,
        new: &Typed,
        managed: &mut Managed,
        manager: &str,
    ) -> ApiResult<()> {
        let version = live.kind.version.clone();
        let id = ManagerId::new(manager, UPDATE, &version, writer.subresource()).key();
        let ignored = reset_fields(writer, &version);
        let versions = self.updater_parts(writer);
        let updater = Updater {
            converter: &versions,
            ignored: &ignored,
        };
        const CURRENT: &str = "current-operation";
        let fields = std::mem::take(&mut managed.fields);
        let mut fields = updater
            .update(live, new, &version, fields, CURRENT)
            .map_err(update_error)?;
        if let Some(mut current) = fields.remove(CURRENT) {
            current.set = current.set.difference(stripped());
            if !current.set.is_empty() {
                if let Some(previous) = fields.get(&id) {
                    current.set = current.set.union(&previous.set);
                }
                fields.insert(id.clone(), current);
                // A write through /scale is converted back to the parent's
                // managedFields, which keep the time the manager had there
                // (none for a new one), as upstream's ScaleHandler does.
                if writer.subresource() != "scale" {
                    managed.times.insert(id, Some(Time::now()));
                }
            }
        }
        managed.fields = fields;
        Ok(())
    }

    /// Applies `patch` (the configuration, in the served version) to `live`
    /// (None: the object does not exist) for `manager`: the new object in
    /// the served version's JSON with its managedFields, or None when the
    /// apply changes nothing but ownership (then `live` is written back
    /// with the new managedFields).
    pub fn apply(
        &self,
        writer: Writer<'_>,
        live: Option<&mut Object>,
        patch: Value,
        force: bool,
    ) -> ApiResult<Value> {
        let managed = match live
            .as_ref()
            .and_then(|l| l.metadata().managed_fields.as_deref())
        {
            Some(list) => entries::decode(list)
                .map_err(|e| ApiError::internal(format!("failed to decode managed fields: {e}")))?,
            None => Managed::default(),
        };
        let facts = self.facts(&writer)?;
        let live_json = match live {
            Some(live) => self.served_json(&writer, live)?,
            None => facts.empty.clone(),
        };
        let (mut object, managed) =
            self.apply_with(&writer, &facts, live_json, managed, patch, force)?;
        let encoded = entries::encode(&managed);
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            match encoded.map(serde_json::to_value) {
                Some(Ok(list)) => {
                    meta.insert("managedFields".into(), list);
                }
                _ => {
                    meta.remove("managedFields");
                }
            }
        }
        Ok(object)
    }

    /// An apply through `/scale` (upstream's ScaleHandler): the parent's
    /// managers of the replicas become the Scale's, the configuration is
    /// applied to the Scale, and the Scale's managers go back to the parent
    /// (those that gave the replicas up lose them, new ones own them in the
    /// parent's version). `parent` is the parent's JSON (served version),
    /// `replicas` its path of the desired replicas (`.spec.replicas`).
    /// Answers the new Scale and the parent's new managedFields.
    pub fn apply_scale(
        &self,
        writer: Writer<'_>,
        parent: &Value,
        scale: Value,
        replicas: &str,
        patch: Value,
        force: bool,
    ) -> ApiResult<(Value, Option<Vec<kapi_runtime::meta::ManagedFieldsEntry>>)> {
        let listed: Vec<kapi_runtime::meta::ManagedFieldsEntry> =
            match parent.pointer("/metadata/managedFields") {
                Some(list) => serde_json::from_value(list.clone()).map_err(ApiError::internal)?,
                None => Vec::new(),
            };
        let parent_managed = entries::decode(&listed)
            .map_err(|e| ApiError::internal(format!("failed to decode managed fields: {e}")))?;
        let replicas: Vec<PathElement> = replicas
            .split('.')
            .filter(|p| !p.is_empty())
            .map(PathElement::field)
            .collect();
        let in_scale = [PathElement::field("spec"), PathElement::field("replicas")];
        let mut only_scale_replicas = Set::new();
        only_scale_replicas.insert(&in_scale);
        let facts = schemas::scale();
        let mut managed = Managed::default();
        for (id, owned) in &parent_managed.fields {
            if owned.set.has(&replicas) {
                // Upstream encodes these entries in the Scale's version and
                // decodes them again: an updater's identifier now names
                // autoscaling/v1 (and so no longer matches its parent entry
                // on the way back).
                let scale_id = if owned.applied {
                    id.clone()
                } else {
                    let mut manager: ManagerId = serde_json::from_str(id).unwrap_or_default();
                    manager.api_version = facts.schema.version.clone();
                    manager.key()
                };
                if let Some(time) = parent_managed.times.get(id) {
                    managed.times.insert(scale_id.clone(), *time);
                }
                managed.fields.insert(
                    scale_id,
                    VersionedSet {
                        set: only_scale_replicas.clone(),
                        api_version: facts.schema.version.clone(),
                        applied: owned.applied,
                    },
                );
            }
        }
        let (new_scale, mut scale_managed) =
            self.apply_with(&writer, &facts, scale, managed, patch, force)?;
        let parent_version = writer.scope.served.info.api_version();
        let mut replicas_only = Set::new();
        replicas_only.insert(&replicas);
        let mut back = Managed::default();
        for (id, owned) in parent_managed.fields {
            let time = parent_managed.times.get(&id).copied().flatten();
            if !owned.set.has(&replicas) {
                back.times.insert(id.clone(), time);
                back.fields.insert(id, owned);
            } else if scale_managed.fields.remove(&id).is_none() {
                let set = owned.set.difference(&replicas_only);
                if !set.is_empty() {
                    back.times.insert(id.clone(), time);
                    back.fields.insert(id, VersionedSet { set, ..owned });
                }
            } else {
                back.times.insert(id.clone(), time);
                back.fields.insert(id, owned);
            }
        }
        for (id, owned) in scale_managed.fields {
            if owned.set.has(&in_scale) {
                // The time the manager had in the parent, none for a new one.
                back.times.insert(id.clone(), None);
                back.fields.insert(
                    id,
                    VersionedSet {
                        set: replicas_only.clone(),
                        api_version: parent_version.to_owned(),
                        applied: owned.applied,
                    },
                );
            }
        }
        Ok((new_scale, entries::encode(&back)))
    }

    /// An apply of `patch` to `live` (the JSON of the version `facts`
    /// describes) with `managed` its ownership: the chain of upstream's
    /// FieldManager for an apply (version check, kubectl's migration,
    /// before-first-apply, the engine).
    fn apply_with(
        &self,
        writer: &Writer<'_>,
        facts: &KindFacts,
        mut live_json: Value,
        mut managed: Managed,
        patch: Value,
        force: bool,
    ) -> ApiResult<(Value, Managed)> {
        let gvk = (
            patch
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or_default(),
            patch
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
        if gvk != (facts.schema.version.as_str(), facts.kind.as_str()) {
            let (group, version) = match gvk.0.rsplit_once('/') {
                Some((g, v)) => (g, v),
                None => ("", gvk.0),
            };
            return Err(ApiError::bad_request(format!(
                "invalid object type: {group}/{version}, Kind={}",
                gvk.1
            )));
        }
        if patch.pointer("/metadata/managedFields").is_some() {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        if let Some(meta) = live_json.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        let live_typed = Typed::new(live_json, facts.schema.clone());
        if managed.fields.is_empty() {
            // What exists before the first apply belongs to an updater.
            let empty = Typed::new(facts.empty.clone(), facts.schema.clone());
            self.record_update(
                writer,
                &empty,
                &live_typed,
                &mut managed,
                BEFORE_FIRST_APPLY,
            )?;
            entries::cap_update_managers(&mut managed);
        }
        let config = Typed::new(patch, facts.schema.clone());
        let errors = config.validate();
        if !errors.is_empty() {
            // Upstream names the configuration by its own metadata and a
            // Go-printed GroupVersionKind, in a plain 500.
            let text = |p: &str| {
                config
                    .value
                    .pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            };
            let (group, version) = match facts.schema.version.rsplit_once('/') {
                Some((g, v)) => (g, v),
                None => ("", facts.schema.version.as_str()),
            };
            return Err(ApiError::plain_internal(format!(
                "failed to create typed patch object ({}/{}; {group}/{version}, Kind={}): {}",
                text("/metadata/namespace"),
                text("/metadata/name"),
                facts.kind,
                errors.join("\n")
            )));
        }
        let outcome = match self.apply_once(writer, &live_typed, managed.clone(), &config, force) {
            // kubectl's client-side apply owned these fields through its
            // annotation: a first server-side apply of the same values takes
            // them over (lastAppliedManager).
            Err(UpdateError::Conflicts(conflicts)) if writer.manager == KUBECTL => {
                let allowed = last_applied_fields(&live_typed);
                let rest: Vec<Conflict> = conflicts
                    .into_iter()
                    .filter(|c| !allowed.as_ref().is_some_and(|a| a.has(&c.path)))
                    .collect();
                if rest.is_empty() {
                    self.apply_once(writer, &live_typed, managed, &config, true)
                } else {
                    Err(UpdateError::Conflicts(rest))
                }
            }
            other => other,
        };
        let (mut object, managed) = outcome.map_err(update_error)?;
        if writer.manager == KUBECTL {
            keep_last_applied(&mut object, &config.value);
        }
        Ok((object, managed))
    }

    /// One apply by the engine: the new object (the live one when nothing
    /// changed) and the ownership.
    fn apply_once(
        &self,
        writer: &Writer<'_>,
        live: &Typed,
        mut managed: Managed,
        config: &Typed,
        force: bool,
    ) -> Result<(Value, Managed), UpdateError> {
        let version = live.kind.version.clone();
        let id = ManagerId::new(writer.manager, APPLY, &version, writer.subresource()).key();
        let ignored = reset_fields(writer, &version);
        let versions = self.updater_parts(writer);
        let updater = Updater {
            converter: &versions,
            ignored: &ignored,
        };
        let fields = std::mem::take(&mut managed.fields);
        let (new, mut fields) = updater.apply(live, config, &version, fields, &id, force)?;
        if let Some(owned) = fields.get_mut(&id) {
            owned.set = owned.set.difference(stripped());
            if owned.set.is_empty() {
                fields.remove(&id);
            }
        }
        managed.fields = fields;
        let object = match new {
            Some(new) => {
                managed.times.insert(id, Some(Time::now()));
                new.value
            }
            None => live.value.clone(),
        };
        Ok((object, managed))
    }
}

/// The manager name kubectl applies with.
const KUBECTL: &str = "kubectl";

/// The annotation of kubectl's client-side apply.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The fields kubectl's client-side apply set that still hold the values
/// it set (`allowedConflictsFromLastApplied`); None without a readable
/// annotation of the live object's version.
fn last_applied_fields(live: &Typed) -> Option<Set> {
    let text = live
        .value
        .pointer("/metadata/annotations")?
        .get(LAST_APPLIED)?
        .as_str()
        .filter(|t| !t.is_empty())?;
    let last: Value = serde_json::from_str(text).ok()?;
    if last.get("apiVersion").and_then(Value::as_str) != Some(live.kind.version.as_str()) {
        return None;
    }
    let last = Typed::new(last, live.kind.clone());
    if !last.validate().is_empty() {
        return None;
    }
    let changed = last.compare(live);
    Some(
        last.to_field_set()
            .difference(&changed.modified)
            .difference(&changed.added)
            .difference(&changed.removed),
    )
}

/// After kubectl's server-side apply, an object that carries the
/// client-side annotation gets the applied configuration in it, so that a
/// later client-side apply starts from it (`lastAppliedUpdater`).
fn keep_last_applied(object: &mut Value, config: &Value) {
    let has = object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .is_some_and(|t| !t.is_empty());
    if !has {
        return;
    }
    let mut applied = config.clone();
    if let Some(meta) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
        let empty = match meta.get_mut("annotations").and_then(Value::as_object_mut) {
            Some(annotations) => {
                annotations.remove(LAST_APPLIED);
                annotations.is_empty()
            }
            None => false,
        };
        if empty {
            meta.remove("annotations");
        }
    }
    let mut text = String::new();
    kapi_structured_merge::value::write_go_json(&mut text, &applied);
    text.push('\n');
    if let Some(annotations) = object
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.insert(LAST_APPLIED.into(), Value::String(text));
    }
}

/// The managedFields an update starts from: the live object's through a
/// subresource; else the request's, unless it clears them (`[]`, `[{}]`)
/// or they cannot be read or are empty, when the live object's count.
fn decode_live_or_new(writer: &Writer<'_>, live: Option<&Object>, new: &Object) -> Managed {
    let from_live = || {
        live.and_then(|l| l.metadata().managed_fields.as_deref())
            .and_then(|list| entries::decode(list).ok())
            .unwrap_or_default()
    };
    if writer.endpoint != Endpoint::Main {
        return from_live();
    }
    let requested = new.metadata().managed_fields.as_ref();
    if entries::is_reset(requested) {
        return Managed::default();
    }
    match requested.map(|list| entries::decode(list)) {
        Some(Ok(managed)) if !managed.fields.is_empty() => managed,
        _ => from_live(),
    }
}

/// A conflict or failure of the engine as the API answers it.
fn update_error(e: UpdateError) -> ApiError {
    match e {
        UpdateError::Conflicts(conflicts) => conflict_error(&conflicts),
        UpdateError::Failed(message) => ApiError::internal(message),
    }
}

/// 409 Conflict with one cause per field (`NewApplyConflict`).
fn conflict_error(conflicts: &[Conflict]) -> ApiError {
    let causes: Vec<(String, String)> = conflicts
        .iter()
        .map(|c| {
            (
                format!("conflict with {}", print_manager(&c.manager)),
                path_string(&c.path),
            )
        })
        .collect();
    let message = if let [only] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            print_manager(&only.manager),
            path_string(&only.path)
        )
    } else {
        let mut managers: Vec<&str> = conflicts.iter().map(|c| c.manager.as_str()).collect();
        managers.sort();
        managers.dedup();
        let mut lines = Vec::new();
        for manager in managers {
            lines.push(format!("conflicts with {}:", print_manager(manager)));
            for c in conflicts.iter().filter(|c| c.manager == manager) {
                lines.push(format!("- {}", path_string(&c.path)));
            }
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError::apply_conflict(message, causes)
}

/// A manager as conflict messages name it: `"kubectl"`, with its
/// subresource, and `using <apiVersion>` for an updater.
fn print_manager(key: &str) -> String {
    let id: ManagerId = match serde_json::from_str(key) {
        Ok(id) => id,
        Err(_) => return format!("{key:?}"),
    };
    let mut out = format!("{:?}", id.manager);
    if !id.subresource.is_empty() {
        out = format!("{out} with subresource {:?}", id.subresource);
    }
    if id.operation == UPDATE {
        out = format!("{out} using {}", id.api_version);
    }
    out
}
