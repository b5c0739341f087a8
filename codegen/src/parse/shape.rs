//! The item shapes the derives accept, checked before darling so that the error
//! points at the offending token (`enum`, the tuple fields) rather than at the derive.

use quote::ToTokens;
use syn::{Attribute, Data, DeriveInput, Fields};

/// Fails unless `input` is a struct with named fields; `enum_hint` follows the
/// message for an enum.
pub fn named_struct(input: &DeriveInput, derive: &str, enum_hint: &str) -> syn::Result<()> {
    let (tokens, what, hint): (&dyn ToTokens, &str, &str) = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(_) => return Ok(()),
            Fields::Unnamed(fields) => (fields, "a tuple struct", ""),
            Fields::Unit => (&input.ident, "a unit struct", ""),
        },
        Data::Enum(e) => (&e.enum_token, "an enum", enum_hint),
        Data::Union(u) => (&u.union_token, "a union", ""),
    };
    let msg = format!("#[derive({derive})] needs a struct with named fields, not {what}{hint}");
    Err(syn::Error::new_spanned(tokens, msg))
}

/// The first `#[name(...)]` attribute: where errors about a missing key point.
pub fn find_attr<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a Attribute> {
    attrs.iter().find(|a| a.path().is_ident(name))
}
