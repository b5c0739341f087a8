//! `impl ApiType`: defaults and declarative validation, recursing into every field.

use darling::FromDeriveInput;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::model::{ApiTypeModel, DefaultValue, FieldModel, ProtoMode, Rule, SpannedRule};
use crate::parse::{self, ApiInput};

/// Parses, models and emits `#[derive(ApiType)]`.
pub fn expand(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    const ENUM_HINT: &str =
        "; a field with a fixed set of values is a String with #[api(one_of(\"A\", \"B\"))]";
    let parsed = parse::named_struct(&input, "ApiType", ENUM_HINT)
        .map_err(darling::Error::from)
        .and_then(|()| ApiInput::from_derive_input(&input))
        .and_then(ApiTypeModel::from_input);
    match parsed {
        Ok(model) => emit(&model),
        // Still emit an empty impl so users see this error, not every place the
        // type is used as an ApiType.
        Err(e) => {
            let errors = e.write_errors();
            let ident = &input.ident;
            let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
            quote! {
                #errors
                impl #impl_generics ::kapi_runtime::ApiType for #ident #ty_generics #where_clause {}
            }
        }
    }
}

/// Emits the impl for a checked model.
pub fn emit(model: &ApiTypeModel) -> TokenStream {
    let ident = &model.ident;
    let defaults = model.fields.iter().map(emit_default);
    let validations = model.fields.iter().map(emit_validation);
    let idents: Vec<syn::Ident> = model.fields.iter().map(|f| f.ident.clone()).collect();
    let semantic_eq = fields_semantic_eq(&idents);
    let validate_hook = model
        .validate
        .as_ref()
        .map(|hook| quote!(#hook(self, path, errs);));
    let defaults_hook = model.defaults.as_ref().map(|hook| quote!(#hook(self);));
    let proto = model
        .proto
        .as_ref()
        .map(|proto| super::proto::emit(ident, proto));
    let openapi = super::openapi::emit(model);
    quote! {
        impl ::kapi_runtime::ApiType for #ident {
            fn apply_defaults(&mut self) {
                #defaults_hook
                #(#defaults)*
            }

            fn validate(
                &self,
                path: &::kapi_runtime::validation::FieldPath,
                errs: &mut ::kapi_runtime::validation::FieldErrors,
            ) {
                #(#validations)*
                #validate_hook
            }

            fn semantic_eq(&self, other: &Self) -> bool {
                #semantic_eq
            }

            fn clear_empty(&mut self) {
                #(::kapi_runtime::ApiType::clear_empty(&mut self.#idents);)*
            }
        }

        /// A type every version shares converts to itself.
        impl ::kapi_runtime::convert::Convert<#ident> for #ident {
            #[inline]
            fn convert(self) -> Self {
                self
            }
        }

        /// A struct value is always present (for `required` on fields of its type).
        impl ::kapi_runtime::validation::rules::Presence for #ident {
            fn is_present(&self) -> bool {
                true
            }
        }

        #proto
        #openapi
    }
}

/// `self` and `other` semantically equal field by field (`other` is still used
/// when there are no fields, so that no unused-variable warning reaches users).
pub fn fields_semantic_eq(fields: &[syn::Ident]) -> TokenStream {
    if fields.is_empty() {
        return quote!({
            let _ = other;
            true
        });
    }
    let eqs = fields
        .iter()
        .map(|f| quote!(::kapi_runtime::ApiType::semantic_eq(&self.#f, &other.#f)));
    quote!(#(#eqs)&&*)
}

fn emit_default(field: &FieldModel) -> TokenStream {
    let ident = &field.ident;
    let set_default = field.default.as_ref().map(|DefaultValue { lit, into }| {
        let value = if *into {
            quote!(::core::convert::Into::into(#lit))
        } else {
            quote!(#lit)
        };
        // A Go value field cannot tell zero from unset: Go's defaulters test for
        // zero (`""`, `0`), so an explicit zero is defaulted too.
        let unset = match field.proto.mode {
            ProtoMode::Value => quote!(::kapi_runtime::go_json::omitempty(&self.#ident)),
            ProtoMode::Plain | ProtoMode::Pointer => quote!(self.#ident.is_none()),
        };
        quote! {
            if #unset {
                self.#ident = ::core::option::Option::Some(#value);
            }
        }
    });
    quote! {
        #set_default
        ::kapi_runtime::ApiType::apply_defaults(&mut self.#ident);
    }
}

fn emit_validation(field: &FieldModel) -> TokenStream {
    let ident = &field.ident;
    let name = &field.json_name;
    // A flattened field's fields sit at this level of the path.
    let path = if name.is_empty() {
        quote!(path.clone())
    } else {
        quote!(path.child(#name))
    };
    let rules = field.rules.iter().map(|rule| emit_rule(ident, rule));
    quote! {
        {
            let field_path = #path;
            #(#rules)*
            ::kapi_runtime::ApiType::validate(&self.#ident, &field_path, errs);
        }
    }
}

/// One rule call, spanned on its attribute so that a rule the field's type cannot
/// take (`minimum` on a `String`) is reported there.
fn emit_rule(ident: &syn::Ident, SpannedRule { rule, span }: &SpannedRule) -> TokenStream {
    let mut ident = ident.clone();
    ident.set_span(*span);
    let value = quote_spanned!(*span=> &self.#ident);
    let rules = quote!(::kapi_runtime::validation::rules);
    let call = match rule {
        Rule::Required | Rule::NotEmpty => {
            quote_spanned!(*span=> #rules::required(#value, field_path.clone(), errs))
        }
        Rule::Dns1123Label => {
            quote_spanned!(*span=> #rules::dns1123_label(#value, field_path.clone(), errs))
        }
        Rule::Dns1123Subdomain => {
            quote_spanned!(*span=> #rules::dns1123_subdomain(#value, field_path.clone(), errs))
        }
        Rule::OneOf(values) => {
            quote_spanned!(*span=> #rules::one_of(#value, &[#(#values),*], field_path.clone(), errs))
        }
        Rule::Minimum(min) => {
            quote_spanned!(*span=> #rules::minimum(#value, #min, field_path.clone(), errs))
        }
        Rule::Maximum(max) => {
            quote_spanned!(*span=> #rules::maximum(#value, #max, field_path.clone(), errs))
        }
    };
    quote!(#call;)
}
