use darling::util::Flag;
use darling::{FromDeriveInput, FromField};
use syn::{Ident, LitStr, Type};

use super::{SignedLit, StrList};

/// `#[derive(ApiType)]` input: a struct with named fields.
#[derive(Debug, FromDeriveInput)]
#[darling(attributes(api), supports(struct_named), forward_attrs(serde))]
pub struct ApiInput {
    /// The struct's name.
    pub ident: Ident,
    /// Its generics (must be empty).
    pub generics: syn::Generics,
    /// The fields with their `#[api(...)]` attributes.
    pub data: darling::ast::Data<(), ApiField>,
    /// `#[serde(...)]` attributes, read for `rename_all`.
    pub attrs: Vec<syn::Attribute>,
}

/// One field and its `#[api(...)]` attribute.
#[derive(Debug, FromField)]
#[darling(attributes(api), forward_attrs(serde))]
pub struct ApiField {
    /// The field's name.
    pub ident: Option<Ident>,
    /// The field's type.
    pub ty: Type,
    /// `#[serde(...)]` attributes, read for `rename`, `flatten`, `skip`.
    pub attrs: Vec<syn::Attribute>,
    /// `required`: the field must be set and non-empty.
    #[darling(default)]
    pub required: Flag,
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
}
