use darling::{FromDeriveInput, FromField};
use syn::{Ident, LitStr, Type};

/// `#[derive(Convert)]` input: a struct with named fields and its hub type.
#[derive(Debug, FromDeriveInput)]
#[darling(attributes(convert), supports(struct_named))]
pub struct ConvertInput {
    /// The struct's name.
    pub ident: Ident,
    /// Its generics (must be empty).
    pub generics: syn::Generics,
    /// The fields with their `#[convert(...)]` attributes.
    pub data: darling::ast::Data<(), ConvertField>,
    /// `hub = path::to::Type`: the same struct in the hub version. Required:
    /// optional here so that its absence is reported with a hint.
    #[darling(default)]
    pub hub: Option<syn::Path>,
    /// `with = path::to::module`: the whole conversion is hand-written, as
    /// `module::to_hub(Self) -> Hub` and `module::from_hub(Hub) -> Self` (the
    /// shapes really differ); no field is mapped by the derive.
    #[darling(default)]
    pub with: Option<syn::Path>,
}

/// One field and its `#[convert(...)]` attribute.
#[derive(Debug, FromField)]
#[darling(attributes(convert))]
pub struct ConvertField {
    /// The field's name.
    pub ident: Option<Ident>,
    /// The field's type.
    pub ty: Type,
    /// `rename = "hub_field"`: the field's name in the hub struct.
    #[darling(default)]
    pub rename: Option<LitStr>,
    /// `with = path::to::module`: `module::to_hub(T) -> H` and
    /// `module::from_hub(H) -> T` convert this field.
    #[darling(default)]
    pub with: Option<syn::Path>,
}
