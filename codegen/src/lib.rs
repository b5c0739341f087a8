//! Derives that turn annotated structs into kinds of a Kubernetes-style API.
//!
//! - `#[derive(ApiType)]` on every struct of an API: defaulting and declarative
//!   validation from `#[api(...)]` field attributes.
//! - `#[derive(Convert)]` between a version's struct and its hub's, field by
//!   field, from `#[convert(...)]`.
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

#[doc = include_str!("../docs/api.md")]
#[proc_macro_derive(ApiType, attributes(api))]
pub fn derive_api_type(input: TokenStream) -> TokenStream {
    emit::api_type::expand(input.into()).into()
}

#[doc = include_str!("../docs/convert.md")]
#[proc_macro_derive(Convert, attributes(convert))]
pub fn derive_convert(input: TokenStream) -> TokenStream {
    emit::convert::expand(input.into()).into()
}

#[doc = include_str!("../docs/resource.md")]
#[proc_macro_derive(Resource, attributes(resource))]
pub fn derive_resource(input: TokenStream) -> TokenStream {
    emit::resource::expand(input.into()).into()
}
