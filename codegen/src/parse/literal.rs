use darling::FromMeta;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Expr, Lit, UnOp};

/// A literal attribute value, numbers possibly negative: `80`, `-1`, `0.5`,
/// `"TCP"`, `true`.
///
/// darling reads `Lit` only from a literal expression, and `-1` is a unary
/// expression, so a plain `Lit` field would reject negative bounds and defaults.
#[derive(Clone, Debug)]
pub struct SignedLit {
    /// The `-` of a negative number.
    pub minus: Option<syn::Token![-]>,
    /// The literal itself.
    pub lit: Lit,
}

impl FromMeta for SignedLit {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Lit(e) => Ok(SignedLit {
                minus: None,
                lit: e.lit.clone(),
            }),
            Expr::Unary(e) if matches!(e.op, UnOp::Neg(_)) => match (&e.op, &*e.expr) {
                (UnOp::Neg(minus), Expr::Lit(inner))
                    if matches!(inner.lit, Lit::Int(_) | Lit::Float(_)) =>
                {
                    Ok(SignedLit {
                        minus: Some(*minus),
                        lit: inner.lit.clone(),
                    })
                }
                _ => Err(
                    darling::Error::custom("only a number can be negated, e.g. -1").with_span(expr),
                ),
            },
            // Invisible groups appear when the attribute comes from a macro_rules! macro.
            Expr::Group(g) => Self::from_expr(&g.expr),
            _ => Err(darling::Error::custom(
                "expected a literal, e.g. 1, -1, 0.5, \"TCP\" or true",
            )
            .with_span(expr)),
        }
    }
}

impl ToTokens for SignedLit {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        self.minus.to_tokens(tokens);
        self.lit.to_tokens(tokens);
    }
}
