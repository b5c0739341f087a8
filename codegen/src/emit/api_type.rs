//! `impl ApiType`: defaults and declarative validation, recursing into every field.

use darling::FromDeriveInput;
use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{ApiTypeModel, FieldModel, Rule};
use crate::parse::ApiInput;

/// Parses, models and emits `#[derive(ApiType)]`.
pub fn expand(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let ident = input.ident.clone();
    match ApiInput::from_derive_input(&input).and_then(ApiTypeModel::from_input) {
        Ok(model) => emit(&model),
        // Still emit an empty impl so users see this error, not every place the
        // type is used as an ApiType.
        Err(e) => {
            let errors = e.write_errors();
            quote! {
                #errors
                impl ::kapi_runtime::ApiType for #ident {}
            }
        }
    }
}

/// Emits the impl for a checked model.
pub fn emit(model: &ApiTypeModel) -> TokenStream {
    let ident = &model.ident;
    let defaults = model.fields.iter().map(emit_default);
    let validations = model.fields.iter().map(emit_validation);
    quote! {
        impl ::kapi_runtime::ApiType for #ident {
            fn apply_defaults(&mut self) {
                #(#defaults)*
            }

            fn validate(
                &self,
                path: &::kapi_runtime::validation::FieldPath,
                errs: &mut ::kapi_runtime::validation::FieldErrors,
            ) {
                #(#validations)*
            }
        }
    }
}

fn emit_default(field: &FieldModel) -> TokenStream {
    let ident = &field.ident;
    let set_default = field.default.as_ref().map(|lit| {
        quote! {
            if self.#ident.is_none() {
                self.#ident = ::core::option::Option::Some(::core::convert::Into::into(#lit));
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
    let path = if name.is_empty() { quote!(path.clone()) } else { quote!(path.child(#name)) };
    let rules = field.rules.iter().map(|rule| {
        let value = quote!(&self.#ident);
        let rules = quote!(::kapi_runtime::validation::rules);
        match rule {
            Rule::Required => quote!(#rules::required(#value, field_path.clone(), errs);),
            Rule::Dns1123Label => quote!(#rules::dns1123_label(#value, field_path.clone(), errs);),
            Rule::Dns1123Subdomain => quote!(#rules::dns1123_subdomain(#value, field_path.clone(), errs);),
            Rule::OneOf(values) => quote!(#rules::one_of(#value, &[#(#values),*], field_path.clone(), errs);),
            Rule::Minimum(min) => quote!(#rules::minimum(#value, #min, field_path.clone(), errs);),
            Rule::Maximum(max) => quote!(#rules::maximum(#value, #max, field_path.clone(), errs);),
        }
    });
    quote! {
        {
            let field_path = #path;
            #(#rules)*
            ::kapi_runtime::ApiType::validate(&self.#ident, &field_path, errs);
        }
    }
}
