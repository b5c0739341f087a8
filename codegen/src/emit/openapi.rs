//! `impl OpenApi`: the struct's schema, with doc comments as descriptions,
//! required properties and the fields' merge extensions.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{ApiTypeModel, FieldModel, MergeModel};

/// Emits the impl for a checked model.
pub fn emit(model: &ApiTypeModel) -> TokenStream {
    let ident = &model.ident;
    if let Some(hook) = &model.schema {
        let rt = quote!(::kapi_runtime);
        let bound = quote::quote_spanned!(syn::spanned::Spanned::span(hook)=>
            let hook: fn(&mut #rt::openapi::Definitions) -> #rt::serde_json::Value = #hook;
        );
        return quote! {
            impl #rt::openapi::OpenApi for #ident {
                fn schema(defs: &mut #rt::openapi::Definitions) -> #rt::serde_json::Value {
                    #bound
                    hook(defs)
                }
            }
        };
    }
    let name = &model.schema_name;
    let description = description(&model.doc);
    let properties = model.fields.iter().map(emit_property);
    let rt = quote!(::kapi_runtime);
    let define = if model.is_kind {
        quote!(define_kind)
    } else {
        quote!(define)
    };
    let map_type = model.map_type.as_ref().map(|t| {
        quote!(schema["x-kubernetes-map-type"] = #rt::serde_json::Value::String(::std::string::String::from(#t));)
    });
    quote! {
        impl #rt::openapi::OpenApi for #ident {
            fn schema(defs: &mut #rt::openapi::Definitions) -> #rt::serde_json::Value {
                let name = #rt::openapi::definition_name(::core::module_path!(), #name);
                defs.#define(&name, |defs| {
                    let (properties, required) =
                        <Self as #rt::openapi::OpenApi>::flattened(defs);
                    let mut schema = #rt::openapi::object(#description, properties, required);
                    #map_type
                    schema
                })
            }

            fn flattened(
                defs: &mut #rt::openapi::Definitions,
            ) -> (
                #rt::serde_json::Map<::std::string::String, #rt::serde_json::Value>,
                ::std::vec::Vec<::std::string::String>,
            ) {
                let mut properties = #rt::serde_json::Map::new();
                let mut required = ::std::vec::Vec::<::std::string::String>::new();
                #(#properties)*
                (properties, required)
            }
        }
    }
}

fn emit_property(field: &FieldModel) -> TokenStream {
    let ty = &field.ty;
    let rt = quote!(::kapi_runtime);
    if field.json_name.is_empty() {
        return quote! {
            let (inner, inner_required) = <#ty as #rt::openapi::OpenApi>::flattened(defs);
            properties.extend(inner);
            required.extend(inner_required);
        };
    }
    let name = &field.json_name;
    let description = description(&field.doc);
    let extensions = extensions(&field.merge);
    let required = field
        .schema_required
        .then(|| quote!(required.push(::std::string::String::from(#name));));
    let keywords = crd_keywords(field);
    let property = quote! {
        #rt::openapi::property(
            <#ty as #rt::openapi::OpenApi>::schema(defs),
            #description,
            &[#(#extensions),*],
        )
    };
    let property = if keywords.is_empty() {
        property
    } else {
        quote!(#rt::openapi::with_crd_keywords(#property, &[#(#keywords),*]))
    };
    quote! {
        properties.insert(::std::string::String::from(#name), #property);
        #required
    }
}

/// The schema keywords a field's rules and default become in the
/// CustomResourceDefinition emitted for its kind (`enum`, `minimum`,
/// `maximum`, `pattern` and `maxLength` for DNS names, `default`), as
/// `(name, value)` expressions. The API documents leave them out.
fn crd_keywords(field: &FieldModel) -> Vec<TokenStream> {
    use crate::model::Rule;
    let rt = quote!(::kapi_runtime);
    let mut out = Vec::new();
    for rule in &field.rules {
        match &rule.rule {
            Rule::OneOf(values) => {
                out.push(quote!(("enum", #rt::serde_json::json!([#(#values),*]))))
            }
            Rule::Minimum(n) => out.push(quote!(("minimum", #rt::openapi::number(#n)))),
            Rule::Maximum(n) => out.push(quote!(("maximum", #rt::openapi::number(#n)))),
            Rule::Dns1123Label => {
                out.push(quote!(("maxLength", #rt::serde_json::json!(63))));
                out.push(quote!(("pattern", #rt::serde_json::json!(#rt::openapi::DNS1123_LABEL_PATTERN))));
            }
            Rule::Dns1123Subdomain => {
                out.push(quote!(("maxLength", #rt::serde_json::json!(253))));
                out.push(quote!(("pattern", #rt::serde_json::json!(#rt::openapi::DNS1123_SUBDOMAIN_PATTERN))));
            }
            Rule::Required | Rule::NotEmpty => {}
        }
    }
    if let Some(default) = &field.default {
        let lit = &default.lit;
        out.push(quote!(("default", #rt::serde_json::json!(#lit))));
    }
    out
}

/// The `x-kubernetes-*` extensions of a field, as `(name, value)` expressions.
fn extensions(merge: &MergeModel) -> Vec<TokenStream> {
    let string = |key: &str, value: &Option<String>| {
        value.as_ref().map(|v| {
            quote!((#key, ::kapi_runtime::serde_json::Value::String(::std::string::String::from(#v))))
        })
    };
    let mut out = Vec::new();
    out.extend(string("x-kubernetes-list-type", &merge.list_type));
    if !merge.list_map_keys.is_empty() {
        let keys = &merge.list_map_keys;
        out.push(quote!((
            "x-kubernetes-list-map-keys",
            ::kapi_runtime::serde_json::json!([#(#keys),*])
        )));
    }
    out.extend(string("x-kubernetes-map-type", &merge.map_type));
    out.extend(string("x-kubernetes-patch-strategy", &merge.patch_strategy));
    out.extend(string(
        "x-kubernetes-patch-merge-key",
        &merge.patch_merge_key,
    ));
    out
}

/// A doc comment as a description: lines joined into paragraphs, blank lines
/// separating them.
fn description(doc: &[String]) -> String {
    let mut out = String::new();
    let mut blank = false;
    for line in doc.iter().map(|l| l.trim()) {
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push_str("\n\n");
            blank = false;
        } else if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::description;

    #[test]
    fn doc_lines_become_paragraphs() {
        let doc = [" One line", " and more.", "", " Second."].map(String::from);
        assert_eq!(description(&doc), "One line and more.\n\nSecond.");
    }
}
