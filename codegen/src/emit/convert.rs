//! `impl Convert<Hub> for T` and `impl Convert<T> for Hub`: a struct of a served
//! version and its hub version, both ways.

use darling::FromDeriveInput;
use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{ConvertModel, FieldMap, Mapping};
use crate::parse::{self, ConvertInput};

/// Parses, models and emits `#[derive(Convert)]`.
pub fn expand(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    if let Err(e) = parse::named_struct(&input, "Convert", "") {
        return e.to_compile_error();
    }
    match ConvertInput::from_derive_input(&input).and_then(ConvertModel::from_input) {
        Ok(model) => emit(&model),
        Err(e) => e.write_errors(),
    }
}

/// Emits both directions. Field by field, each side is destructured with every
/// field named and the other built with every field named: a field one version
/// has and the mapping does not cover fails to compile.
pub fn emit(model: &ConvertModel) -> TokenStream {
    let ident = &model.ident;
    let hub = &model.hub;
    let convert = quote!(::kapi_runtime::convert::Convert);
    let (to_hub, from_hub) = match &model.mapping {
        Mapping::With(module) => (
            quote!(#module::to_hub(self)),
            quote!(#module::from_hub(self)),
        ),
        Mapping::Fields(fields) => {
            let here: Vec<_> = fields.iter().map(|f| &f.ident).collect();
            let there: Vec<_> = fields.iter().map(|f| &f.hub_ident).collect();
            let to: Vec<_> = fields.iter().map(|f| field_to_hub(f, &convert)).collect();
            let from: Vec<_> = fields.iter().map(|f| field_from_hub(f, &convert)).collect();
            (
                quote! {
                    let #ident { #(#here),* } = self;
                    #hub { #(#there: #to),* }
                },
                quote! {
                    let #hub { #(#there),* } = self;
                    #ident { #(#here: #from),* }
                },
            )
        }
    };
    quote! {
        impl #convert<#hub> for #ident {
            fn convert(self) -> #hub {
                #to_hub
            }
        }

        impl #convert<#ident> for #hub {
            fn convert(self) -> #ident {
                #from_hub
            }
        }
    }
}

fn field_to_hub(field: &FieldMap, convert: &TokenStream) -> TokenStream {
    let ident = &field.ident;
    match &field.with {
        Some(module) => quote!(#module::to_hub(#ident)),
        None => quote!(#convert::convert(#ident)),
    }
}

fn field_from_hub(field: &FieldMap, convert: &TokenStream) -> TokenStream {
    let hub_ident = &field.hub_ident;
    match &field.with {
        Some(module) => quote!(#module::from_hub(#hub_ident)),
        None => quote!(#convert::convert(#hub_ident)),
    }
}
