//! Derives that turn annotated structs into kinds of a Kubernetes-style API.
//!
//! - `#[derive(ApiType)]` on every struct of an API: defaulting and declarative
//!   validation from `#[api(...)]` field attributes.
//! - `#[derive(Resource)]` on the top-level struct of a kind: identity, scope,
//!   subresources, selectable fields, printer columns and hooks from
//!   `#[resource(...)]`, plus its registration in the scheme.
//!
//! Each derive runs parse (the only stage touching attributes) -> model -> emit;
//! errors are collected and reported with spans, and a failed derive still emits a
//! minimal impl so one mistake does not cascade into many.

mod emit;
mod model;
mod parse;

use proc_macro::TokenStream;

/// Defaulting and validation from `#[api(...)]` field attributes.
///
/// Field attributes: `required`, `format = "dns1123-label" | "dns1123-subdomain"`,
/// `one_of("A", "B")`, `minimum = N`, `maximum = N`, `default = <literal>`.
#[proc_macro_derive(ApiType, attributes(api))]
pub fn derive_api_type(input: TokenStream) -> TokenStream {
    emit::api_type::expand(input.into()).into()
}

/// Conversion of a struct of one version to and from the same struct in its
/// kind's hub version, field by field.
///
/// `#[convert(hub = path::to::Type)]` on the struct (required); on a field,
/// `rename = "hub_field"` and `with = module` (`module::to_hub`/`from_hub`);
/// on the struct, `with = module` for a conversion written by hand. Both
/// structs are destructured completely, so an unmapped field fails to compile.
#[proc_macro_derive(Convert, attributes(convert))]
pub fn derive_convert(input: TokenStream) -> TokenStream {
    emit::convert::expand(input.into()).into()
}

/// A kind of the API, from a `#[resource(...)]` attribute on the struct.
///
/// Keys: `group`, `version`, `kind`, `plural`, `singular`, `short_names(..)`,
/// `categories(..)`, `cluster_scoped`, `status`, `selectable_fields(..)`,
/// `indexed_fields(..)` (selectable fields the watch cache indexes),
/// `printer_column(name, type, json_path, priority, description, format)`,
/// `return_deleted_object`, `orphan_dependents`,
/// hooks `prepare`, `table_cells`, `grace_period`, `field_label`.
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    emit::resource::expand(input.into()).into()
}
