use darling::util::Flag;
use darling::{FromDeriveInput, FromMeta};
use syn::{Ident, LitInt, LitStr};

use super::StrList;

/// `#[derive(Resource)]` input: the struct and its `#[resource(...)]` attribute.
#[derive(Debug, FromDeriveInput)]
#[darling(attributes(resource), supports(struct_named))]
pub struct ResourceInput {
    /// The struct's name.
    pub ident: Ident,
    /// Its generics (must be empty).
    pub generics: syn::Generics,
    /// The fields (checked for `metadata` and `status`).
    pub data: darling::ast::Data<(), ResourceField>,
    /// `group = "apps"`; `""` for the core group. Required: optional here only so
    /// that the model reports its absence with a span and a hint.
    #[darling(default)]
    pub group: Option<LitStr>,
    /// `version = "v1"`. Required, like `group`.
    #[darling(default)]
    pub version: Option<LitStr>,
    /// `kind = "Pod"`; defaults to the struct's name.
    #[darling(default)]
    pub kind: Option<LitStr>,
    /// `plural = "pods"`; defaults to the lower-cased kind, pluralised.
    #[darling(default)]
    pub plural: Option<LitStr>,
    /// `singular = "pod"`; defaults to the lower-cased kind.
    #[darling(default)]
    pub singular: Option<LitStr>,
    /// `storage_prefix = "minions"`: where objects are kept in the store
    /// (under `--etcd-prefix`); `<group>/<plural>` by default.
    #[darling(default)]
    pub storage_prefix: Option<LitStr>,
    /// `stored_as = path::to::STATIC`: a `kapi_runtime::StoredForm`, the
    /// other version's JSON objects are stored in.
    #[darling(default)]
    pub stored_as: Option<syn::Path>,
    /// `storage_json`: objects are stored as JSON whatever
    /// `--storage-media-type` says.
    #[darling(default)]
    pub storage_json: Flag,
    /// `short_names("po")`.
    #[darling(default)]
    pub short_names: StrList,
    /// `categories("all")`.
    #[darling(default)]
    pub categories: StrList,
    /// `verbs("create")`: the verbs the kind serves, when not all eight
    /// (create-only review kinds, read-only ComponentStatus).
    #[darling(default)]
    pub verbs: Option<StrList>,
    /// `namespaced`: objects live in namespaces (the default).
    #[darling(default)]
    pub namespaced: Flag,
    /// `cluster_scoped`: objects are cluster-wide.
    #[darling(default)]
    pub cluster_scoped: Flag,
    /// `status`: the kind has a `/status` subresource.
    #[darling(default)]
    pub status: Flag,
    /// `return_deleted_object`: a delete answers with the object, not a Status.
    #[darling(default)]
    pub return_deleted_object: Flag,
    /// `orphan_dependents`: a delete that names no propagation policy orphans
    /// the object's dependents (upstream's `OrphanDependents` default garbage
    /// collection policy, kept by ReplicationControllers and Jobs).
    #[darling(default)]
    pub orphan_dependents: Flag,
    /// `reset_main = "spec, status"`: the fields a write through the object
    /// resets, which server-side apply leaves unowned (`status` by default
    /// for a kind with a `/status`, nothing otherwise).
    #[darling(default)]
    pub reset_main: Option<LitStr>,
    /// `reset_status = "spec, metadata.labels"`: the fields a write through
    /// `/status` resets (`spec` by default).
    #[darling(default)]
    pub reset_status: Option<LitStr>,
    /// `generation = false`: `metadata.generation` is not tracked (ConfigMap,
    /// Secret, Pod in 1.32...); tracked by default, as for custom resources.
    #[darling(default)]
    pub generation: Option<syn::LitBool>,
    /// `scale(spec_replicas = ".spec.replicas", status_replicas =
    /// ".status.replicas", label_selector = ".spec.selector")`: the kind has a
    /// `/scale` subresource showing and changing these.
    #[darling(default)]
    pub scale: Option<ScaleAttr>,
    /// `age_column = false`: the Table has no AGE column after the kind's own
    /// (ComponentStatus, whose objects have no creation time); on by default.
    #[darling(default)]
    pub age_column: Option<syn::LitBool>,
    /// `name_format = "dns1123-label"`: how object names are validated
    /// (`dns1123-subdomain` by default, `dns1123-label`, `dns1035-label`,
    /// `path-segment`).
    #[darling(default)]
    pub name_format: Option<LitStr>,
    /// `selectable_fields("spec.nodeName")`.
    #[darling(default)]
    pub selectable_fields: StrList,
    /// `indexed_fields("spec.nodeName")`: selectable fields the watch cache
    /// indexes.
    #[darling(default)]
    pub indexed_fields: StrList,
    /// `printer_column(...)`, repeated, in column order.
    #[darling(default, multiple)]
    pub printer_column: Vec<PrinterColumnAttr>,
    /// `hub = path::to::Type`: this version is served from the kind's hub
    /// version (which stores it); needs `Convert` both ways
    /// (`#[derive(Convert)]`).
    #[darling(default)]
    pub hub: Option<syn::Path>,
    /// `validate_served = path::to::fn`: `fn(&Hub, Option<&Hub>, &mut
    /// FieldErrors)` (`Hub` is the type of `hub`, or `Self`), the checks a
    /// write through this version adds to the kind's own, run on the object
    /// as stored (the stored one second, on an update): upstream validates
    /// some kinds by the request's version (an events.k8s.io Event more
    /// strictly than a core one).
    #[darling(default)]
    pub validate_served: Option<syn::Path>,
    /// `prepare = path::to::fn`: `fn(&mut Self)` run before every write.
    #[darling(default)]
    pub prepare: Option<syn::Path>,
    /// `prepare_create = path::to::fn`: `fn(&mut Self)`, the kind's
    /// PrepareForCreate after the generic one.
    #[darling(default)]
    pub prepare_create: Option<syn::Path>,
    /// `prepare_update = path::to::fn`: `fn(&mut Self, &Self)` with the new
    /// object first and the stored one second, the kind's PrepareForUpdate
    /// through the main endpoint.
    #[darling(default)]
    pub prepare_update: Option<syn::Path>,
    /// `prepare_status_update = path::to::fn`: `fn(&mut Self, &Self)`, as
    /// `prepare_update` for writes through `/status` (needs `status`).
    #[darling(default)]
    pub prepare_status_update: Option<syn::Path>,
    /// `subresource(name = "eviction", ...)`, repeated: the subresources other
    /// than `status` and `scale`.
    #[darling(default, multiple)]
    pub subresource: Vec<SubresourceAttr>,
    /// `validate_update = path::to::fn`:
    /// `fn(&Self, &Self, &kapi_runtime::validation::FieldPath, &mut FieldErrors)`
    /// with the new object first and the stored one second, run on updates after
    /// the object's own validation (immutable fields, allowed transitions).
    #[darling(default)]
    pub validate_update: Option<syn::Path>,
    /// `answer = path::to::fn`: `fn(&mut Self)` filling in the answer of a
    /// kind that is created and answered but never stored (the reviews:
    /// `verbs("create")`).
    #[darling(default)]
    pub answer: Option<syn::Path>,
    /// `warnings = path::to::fn`: `fn(&Self, Option<&Self>) -> Vec<String>`,
    /// the `Warning` headers of a write (the stored object on an update).
    #[darling(default)]
    pub warnings: Option<syn::Path>,
    /// `table_cells = path::to::fn`: `fn(&Self) -> Vec<serde_json::Value>`.
    #[darling(default)]
    pub table_cells: Option<syn::Path>,
    /// `grace_period = path::to::fn`: `fn(&Self, Option<i64>) -> Option<i64>`.
    #[darling(default)]
    pub grace_period: Option<syn::Path>,
    /// `field_label = path::to::fn`: `fn(&Self, &str) -> Option<String>`, the
    /// text of a selectable field the kind computes rather than reads at its path.
    #[darling(default)]
    pub field_label: Option<syn::Path>,
}

/// A field of a resource struct: its name, and whether `#[api(...)]` gives it a
/// protobuf number (a kind with numbers speaks protobuf).
#[derive(Debug, darling::FromField)]
#[darling(forward_attrs(api))]
pub struct ResourceField {
    /// The field's name.
    pub ident: Option<Ident>,
    /// `#[api(...)]` attributes, read for `proto`.
    pub attrs: Vec<syn::Attribute>,
}

impl ResourceField {
    /// Whether the field carries a protobuf number (`proto = N`) or `proto_skip`.
    pub fn has_proto(&self) -> bool {
        self.attrs.iter().any(|attr| {
            let mut found = false;
            // Other keys belong to ApiType, which reports their errors.
            let _ = attr.parse_nested_meta(|meta| {
                found |= meta.path.is_ident("proto") || meta.path.is_ident("proto_in");
                if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                } else if meta.input.peek(syn::token::Paren) {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    let _: proc_macro2::TokenStream = content.parse()?;
                }
                Ok(())
            });
            found
        })
    }
}

/// `scale(spec_replicas = "...", status_replicas = "...", label_selector = "...")`.
#[derive(Debug, FromMeta)]
pub struct ScaleAttr {
    /// Path of the desired replica count.
    pub spec_replicas: LitStr,
    /// Path of the observed replica count.
    pub status_replicas: LitStr,
    /// Path of the pods' label selector.
    pub label_selector: LitStr,
}

/// `subresource(name = "ephemeralcontainers", prepare_update = path)` (a part
/// of the object, written through its own endpoint) or `subresource(name =
/// "eviction", group = "policy", version = "v1", kind = "Eviction")` (an
/// action taking another kind, implemented by the server).
#[derive(Debug, FromMeta)]
pub struct SubresourceAttr {
    /// The path segment.
    pub name: LitStr,
    /// `verbs("update")`: some of `get`, `patch` and `update` (all by
    /// default) for a part of the object; `create` for an action.
    #[darling(default)]
    pub verbs: Option<StrList>,
    /// The body's kind, for an action.
    #[darling(default)]
    pub kind: Option<LitStr>,
    /// The body's group; the resource's own by default.
    #[darling(default)]
    pub group: Option<LitStr>,
    /// The body's version; the resource's own by default.
    #[darling(default)]
    pub version: Option<LitStr>,
    /// `fn(&mut Self, &Self)`: turns the body (first) into what is written,
    /// given the stored object (second): a part of the object's PrepareForUpdate.
    #[darling(default)]
    pub prepare_update: Option<syn::Path>,
    /// `fn(&Self, &Self, &FieldPath, &mut FieldErrors)`: the checks of a write
    /// through the subresource, in place of the kind's `validate_update`.
    #[darling(default)]
    pub validate_update: Option<syn::Path>,
}

/// `printer_column(name = "Ready", type = "string", json_path = ".status.ready")`.
#[derive(Debug, FromMeta)]
pub struct PrinterColumnAttr {
    /// Column header.
    pub name: LitStr,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    #[darling(rename = "type")]
    pub type_: LitStr,
    /// kubectl-style JSON path of the value.
    pub json_path: LitStr,
    /// 0 (default view) or more (`-o wide`).
    #[darling(default)]
    pub priority: Option<LitInt>,
    /// What the column shows.
    #[darling(default)]
    pub description: Option<LitStr>,
    /// Optional OpenAPI format.
    #[darling(default)]
    pub format: Option<LitStr>,
}
