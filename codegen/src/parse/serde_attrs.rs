//! Reads the few `#[serde(...)]` attributes that decide JSON field names, so that
//! validation errors name fields as clients spell them.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr};

/// What the container's serde attributes say.
#[derive(Debug, Default)]
pub struct SerdeContainer {
    /// `rename_all = "camelCase"` (the only convention Kubernetes uses).
    pub camel_case: bool,
}

/// What a field's serde attributes say.
#[derive(Debug, Default)]
pub struct SerdeField {
    /// `rename = "x"`.
    pub rename: Option<String>,
    /// `flatten`: the field's fields appear at this level.
    pub flatten: bool,
    /// `skip`: the field is not on the wire.
    pub skip: bool,
    /// `skip_serializing_if = "path"`: the function's path, which tells a Go
    /// pointer (`Option::is_none`) from a Go value field (`omitempty`).
    pub skip_serializing_if: Option<String>,
}

impl SerdeContainer {
    /// Parses the container's `#[serde]` attributes.
    pub fn parse(attrs: &[Attribute]) -> syn::Result<SerdeContainer> {
        let mut out = SerdeContainer::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename_all") {
                    let value = wire_name(&meta)?;
                    if value.value() != "camelCase" {
                        return Err(syn::Error::new_spanned(value, "API types use rename_all = \"camelCase\" (the Kubernetes JSON convention); rename single fields with #[serde(rename = \"...\")]"));
                    }
                    out.camel_case = true;
                    Ok(())
                } else {
                    skip(&meta)
                }
            })?;
        }
        Ok(out)
    }
}

impl SerdeField {
    /// Parses a field's `#[serde]` attributes.
    pub fn parse(attrs: &[Attribute]) -> syn::Result<SerdeField> {
        let mut out = SerdeField::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    out.rename = Some(wire_name(&meta)?.value());
                } else if meta.path.is_ident("flatten") {
                    out.flatten = true;
                } else if meta.path.is_ident("skip") {
                    out.skip = true;
                } else if meta.path.is_ident("skip_serializing_if") {
                    let path: LitStr = meta.value()?.parse()?;
                    out.skip_serializing_if = Some(path.value());
                } else {
                    skip(&meta)?;
                }
                Ok(())
            })?;
        }
        Ok(out)
    }
}

/// The value of `key = "x"`, or of `key(serialize = "x", deserialize = "y")` the
/// deserialize name: validation errors name fields as the request spelled them.
fn wire_name(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    if meta.input.peek(syn::Token![=]) {
        return meta.value()?.parse();
    }
    let (mut serialize, mut deserialize) = (None, None);
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("serialize") {
            serialize = Some(inner.value()?.parse::<LitStr>()?);
        } else if inner.path.is_ident("deserialize") {
            deserialize = Some(inner.value()?.parse::<LitStr>()?);
        } else {
            skip(&inner)?;
        }
        Ok(())
    })?;
    deserialize
        .or(serialize)
        .ok_or_else(|| meta.error("expected `= \"name\"` or `(deserialize = \"name\")`"))
}

/// Consumes an attribute this stage does not read, whatever its shape: `key`,
/// `key = expr` or `key(...)` (serde's `bound(...)`, `rename(...)`, ...).
fn skip(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let _: TokenStream = content.parse()?;
    }
    Ok(())
}
