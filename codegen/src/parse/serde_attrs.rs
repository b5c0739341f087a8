//! Reads the few `#[serde(...)]` attributes that decide JSON field names, so that
//! validation errors name fields as clients spell them.

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
}

impl SerdeContainer {
    /// Parses the container's `#[serde]` attributes.
    pub fn parse(attrs: &[Attribute]) -> syn::Result<SerdeContainer> {
        let mut out = SerdeContainer::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename_all") {
                    let value: LitStr = meta.value()?.parse()?;
                    if value.value() != "camelCase" {
                        return Err(meta.error("kapi kinds use rename_all = \"camelCase\""));
                    }
                    out.camel_case = true;
                } else if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                Ok(())
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
                    out.rename = Some(meta.value()?.parse::<LitStr>()?.value());
                } else if meta.path.is_ident("flatten") {
                    out.flatten = true;
                } else if meta.path.is_ident("skip") {
                    out.skip = true;
                } else if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                } else if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|inner| {
                        if inner.input.peek(syn::Token![=]) {
                            let _: syn::Expr = inner.value()?.parse()?;
                        }
                        Ok(())
                    })?;
                }
                Ok(())
            })?;
        }
        Ok(out)
    }
}
