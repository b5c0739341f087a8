use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Lit, LitStr};

/// A parenthesised list of string literals: `short_names("po", "pods")`.
#[derive(Clone, Debug, Default)]
pub struct StrList {
    /// The literals, in order.
    pub items: Vec<LitStr>,
    /// The whole `key(...)`, for errors about the list as such (e.g. empty).
    pub span: Option<Span>,
}

impl FromMeta for StrList {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        let syn::Meta::List(list) = item else {
            return Err(
                darling::Error::custom("expected a list, e.g. key(\"a\", \"b\")").with_span(item),
            );
        };
        let parsed = Self::from_list(&NestedMeta::parse_meta_list(list.tokens.clone())?)?;
        Ok(StrList {
            span: Some(item.span()),
            ..parsed
        })
    }

    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        let mut errors = darling::Error::accumulator();
        let mut out = Vec::new();
        for item in items {
            match item {
                NestedMeta::Lit(Lit::Str(s)) => out.push(s.clone()),
                other => errors.push(
                    darling::Error::custom("expected a string literal, e.g. (\"a\", \"b\")")
                        .with_span(other),
                ),
            }
        }
        errors.finish_with(StrList {
            items: out,
            span: None,
        })
    }
}

impl StrList {
    /// The values.
    pub fn values(&self) -> Vec<String> {
        self.items.iter().map(LitStr::value).collect()
    }
}
