use darling::FromMeta;
use darling::ast::NestedMeta;
use syn::{Lit, LitStr};

/// A parenthesised list of string literals: `short_names("po", "pods")`.
#[derive(Clone, Debug, Default)]
pub struct StrList(pub Vec<LitStr>);

impl FromMeta for StrList {
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
        errors.finish_with(StrList(out))
    }
}

impl StrList {
    /// The values.
    pub fn values(&self) -> Vec<String> {
        self.0.iter().map(LitStr::value).collect()
    }
}
