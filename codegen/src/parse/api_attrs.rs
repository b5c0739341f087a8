use darling::util::Flag;
use darling::{FromDeriveInput, FromField};
use syn::{Ident, LitInt, LitStr, Type};

use super::{SignedLit, StrList};

/// `#[derive(ApiType)]` input: a struct with named fields.
#[derive(Debug, FromDeriveInput)]
#[darling(
    attributes(api),
    supports(struct_named),
    forward_attrs(serde, doc, resource)
)]
pub struct ApiInput {
    /// The struct's name.
    pub ident: Ident,
    /// Its generics (must be empty).
    pub generics: syn::Generics,
    /// The fields with their `#[api(...)]` attributes.
    pub data: darling::ast::Data<(), ApiField>,
    /// `#[serde(...)]` attributes, read for `rename_all`, and doc comments.
    pub attrs: Vec<syn::Attribute>,
    /// `validate = path::to::fn`: `fn(&Self, &FieldPath, &mut FieldErrors)` run
    /// after the field rules, for checks across fields.
    #[darling(default)]
    pub validate: Option<syn::Path>,
    /// `defaults = path::to::fn`: `fn(&mut Self)` run before the field defaults
    /// and before recursing into the fields, as Go's `SetDefaults_<Type>` runs
    /// before its fields' defaulters (a parent sees its children unset).
    #[darling(default)]
    pub defaults: Option<syn::Path>,
    /// `proto_name = "EphemeralContainerCommon"`: the protobuf message name when
    /// it is not the struct's name.
    #[darling(default)]
    pub proto_name: Option<LitStr>,
    /// `proto_embed(field = "volumeSource", number = 2, message = "VolumeSource")`,
    /// repeated: a Go struct embedded inline (its fields are this struct's fields in
    /// JSON) that protobuf carries as a nested message.
    #[darling(default, multiple)]
    pub proto_embed: Vec<ProtoEmbedAttr>,
    /// `schema = path::to::fn`: a hand-written OpenAPI schema,
    /// `fn(&mut Definitions) -> serde_json::Value`, for a type whose JSON is not
    /// its fields (a transparent wrapper, an embedded raw document).
    #[darling(default)]
    pub schema: Option<syn::Path>,
    /// `map_type = "atomic"`: the whole struct is replaced, never merged, by
    /// server-side apply (`x-kubernetes-map-type` on the definition).
    #[darling(default)]
    pub map_type: Option<LitStr>,
}

/// One `proto_embed(...)` of a struct.
#[derive(Debug, darling::FromMeta)]
pub struct ProtoEmbedAttr {
    /// The nested message's field name, e.g. `volumeSource`.
    pub field: LitStr,
    /// Its field number in this message.
    pub number: LitInt,
    /// The nested message's name, e.g. `VolumeSource`.
    pub message: LitStr,
}

/// One field and its `#[api(...)]` attribute.
#[derive(Debug, FromField)]
#[darling(attributes(api), forward_attrs(serde, doc))]
pub struct ApiField {
    /// The field's name.
    pub ident: Option<Ident>,
    /// The field's type.
    pub ty: Type,
    /// `#[serde(...)]` attributes, read for `rename`, `flatten`, `skip`, and doc
    /// comments.
    pub attrs: Vec<syn::Attribute>,
    /// `required`: a required property of the schema, which must be set and
    /// non-empty.
    #[darling(default)]
    pub required: Flag,
    /// `not_empty`: must be set and non-empty, though optional in the schema.
    #[darling(default)]
    pub not_empty: Flag,
    /// `schema_required`: a required property of the schema that Kubernetes
    /// does not validate (it accepts an empty value, e.g. a node's `nodeInfo`).
    #[darling(default)]
    pub schema_required: Flag,
    /// `format = "dns1123-label"` or `"dns1123-subdomain"`.
    #[darling(default)]
    pub format: Option<LitStr>,
    /// `one_of("A", "B")`: the allowed values.
    #[darling(default)]
    pub one_of: Option<StrList>,
    /// `minimum = N`.
    #[darling(default)]
    pub minimum: Option<SignedLit>,
    /// `maximum = N`.
    #[darling(default)]
    pub maximum: Option<SignedLit>,
    /// `default = <literal>`: the value of an unset `Option` field.
    #[darling(default)]
    pub default: Option<SignedLit>,
    /// `proto = N`: the protobuf field number (as in upstream's `.proto`).
    #[darling(default)]
    pub proto: Option<LitInt>,
    /// `proto_skip`: the field has no protobuf counterpart (TypeMeta fields, which
    /// the protobuf envelope carries).
    #[darling(default)]
    pub proto_skip: Flag,
    /// `proto_in = "volumeSource"`: the field's number counts inside the embedded
    /// message declared by the struct's `proto_embed(field = "volumeSource", ...)`.
    #[darling(default)]
    pub proto_in: Option<LitStr>,
    /// `proto_value`: this `Option` is a Go value field, not a pointer (written
    /// always, its zero value read back as None). Implied by
    /// `skip_serializing_if = "omitempty"`; needed where JSON writes the zero as
    /// `null`, like `metadata.creationTimestamp`.
    #[darling(default)]
    pub proto_value: Flag,
    /// `proto_name = "items"`: the field's name in the `.proto`, when it is not
    /// its JSON name (inside an embedded message of Go's own making).
    #[darling(default)]
    pub proto_name: Option<LitStr>,
    /// `list_type = "atomic" | "set" | "map"`: how a list merges
    /// (`x-kubernetes-list-type`).
    #[darling(default)]
    pub list_type: Option<LitStr>,
    /// `list_map_keys("name", "protocol")`: the keys of a `list_type = "map"`
    /// list (`x-kubernetes-list-map-keys`).
    #[darling(default)]
    pub list_map_keys: Option<StrList>,
    /// `map_type = "atomic" | "granular"` (`x-kubernetes-map-type`), on a map or
    /// a struct-typed field.
    #[darling(default)]
    pub map_type: Option<LitStr>,
    /// `patch_strategy = "merge"`, `"retainKeys"` or `"merge,retainKeys"`: how a
    /// strategic merge patch treats the field (`x-kubernetes-patch-strategy`).
    #[darling(default)]
    pub patch_strategy: Option<LitStr>,
    /// `patch_merge_key = "name"`: the key a strategic merge patch matches list
    /// items by (`x-kubernetes-patch-merge-key`).
    #[darling(default)]
    pub patch_merge_key: Option<LitStr>,
}

/// The lines of the doc comments among `attrs` (`/// text` is `#[doc = " text"]`).
pub fn doc_lines(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}
