//! `impl Resource`: identity, REST facts and hooks of a kind.

use darling::FromDeriveInput;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::model::{NameFormat, PrinterColumn, ResourceModel, SubresourceModel};
use crate::parse::{self, ResourceInput};

/// Parses, models and emits `#[derive(Resource)]` (impl + registration).
pub fn expand(input: TokenStream) -> TokenStream {
    let input = match syn::parse2::<syn::DeriveInput>(input) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    if let Err(e) = parse::named_struct(&input, "Resource", "") {
        return e.to_compile_error();
    }
    let Some(attr) = parse::find_attr(&input.attrs, "resource") else {
        let msg = "#[derive(Resource)] needs #[resource(group = \"...\", version = \"...\")] on the struct";
        return syn::Error::new_spanned(&input.ident, msg).to_compile_error();
    };
    match ResourceInput::from_derive_input(&input).and_then(ResourceModel::from_input) {
        Ok(model) => {
            let resource = emit(&model);
            let registration = super::registration::emit(&model);
            quote!(#resource #registration)
        }
        Err(e) => errors_at(e, attr),
    }
}

/// The errors as compile errors; those about the attribute as a whole (a missing
/// key), which have no span of their own, underline the attribute.
fn errors_at(errors: darling::Error, attr: &syn::Attribute) -> TokenStream {
    let mut out = TokenStream::new();
    for e in errors.flatten() {
        let e = match e.explicit_span() {
            Some(_) => syn::Error::from(e),
            None => syn::Error::new_spanned(attr, e.to_string()),
        };
        out.extend(e.to_compile_error());
    }
    out
}

/// Emits `impl Resource` for a checked model.
pub fn emit(model: &ResourceModel) -> TokenStream {
    let ident = &model.ident;
    let ResourceModel {
        group,
        version,
        kind,
        plural,
        singular,
        storage_prefix,
        storage_json,
        namespaced,
        status,
        return_deleted_object,
        orphan_dependents,
        tracks_generation,
        age_column,
        reset_main,
        reset_status,
        ..
    } = model;
    let name_format = match model.name_format {
        NameFormat::Dns1123Subdomain => quote!(Dns1123Subdomain),
        NameFormat::Dns1123Label => quote!(Dns1123Label),
        NameFormat::Dns1035Label => quote!(Dns1035Label),
        NameFormat::PathSegment => quote!(PathSegment),
    };
    let group_version = if group.is_empty() {
        version.clone()
    } else {
        format!("{group}/{version}")
    };
    let short_names = &model.short_names;
    let verbs = &model.verbs;
    let scale = match &model.scale {
        None => quote!(::core::option::Option::None),
        Some((spec, status, selector)) => quote! {
            ::core::option::Option::Some(::kapi_runtime::ScaleSubresource {
                spec_replicas: #spec,
                status_replicas: #status,
                label_selector: #selector,
            })
        },
    };
    let subresources = model.subresources.iter().map(emit_subresource);
    let categories = &model.categories;
    let selectable = &model.selectable_fields;
    let indexed = &model.indexed_fields;
    let columns = model.printer_columns.iter().map(emit_column);
    let hooks = emit_hooks(model);
    let spec_eq = super::api_type::fields_semantic_eq(&model.spec_fields);
    let status_ops = status.then(|| {
        quote! {
            fn reset_status(&mut self) {
                self.status = ::core::default::Default::default();
            }

            fn copy_status_from(&mut self, other: &Self) {
                self.status = ::core::clone::Clone::clone(&other.status);
            }
        }
    });
    let hub = model.hub.as_ref().map(|hub| {
        let link = quote!(::kapi_runtime::object::HubLink);
        let erased = quote!(::kapi_runtime::erased);
        quote! {
            const HUB: ::core::option::Option<&'static #link> =
                ::core::option::Option::Some(&#link {
                    info: <#hub as ::kapi_runtime::Resource>::INFO,
                    to_hub: #erased::erased_to_hub::<Self, #hub>,
                    from_hub: #erased::erased_from_hub::<Self, #hub>,
                });
        }
    });
    let stored_as = model.stored_as.as_ref().map(|form| {
        let ty = quote!(::kapi_runtime::resource::StoredForm);
        quote_spanned! {form.span()=>
            const STORED_AS: ::core::option::Option<&'static #ty> =
                ::core::option::Option::Some(&#form);
        }
    });
    quote! {
        impl ::kapi_runtime::Resource for #ident {
            #hub
            #stored_as

            const INFO: &'static ::kapi_runtime::ResourceInfo = &::kapi_runtime::ResourceInfo {
                group: #group,
                version: #version,
                group_version: #group_version,
                kind: #kind,
                plural: #plural,
                singular: #singular,
                storage_prefix: #storage_prefix,
                storage_json: #storage_json,
                short_names: &[#(#short_names),*],
                categories: &[#(#categories),*],
                verbs: &[#(#verbs),*],
                namespaced: #namespaced,
                status_subresource: #status,
                selectable_fields: &[#(#selectable),*],
                indexed_fields: &[#(#indexed),*],
                printer_columns: &[#(#columns),*],
                return_deleted_object: #return_deleted_object,
                orphan_dependents: #orphan_dependents,
                tracks_generation: #tracks_generation,
                age_column: #age_column,
                scale: #scale,
                subresources: &[#(#subresources),*],
                name_format: ::kapi_runtime::resource::NameFormat::#name_format,
                reset_fields: ::kapi_runtime::resource::ResetFields {
                    main: &[#(#reset_main),*],
                    status: &[#(#reset_status),*],
                },
            };

            fn metadata(&self) -> &::kapi_runtime::meta::ObjectMeta {
                &self.metadata
            }

            fn metadata_mut(&mut self) -> &mut ::kapi_runtime::meta::ObjectMeta {
                &mut self.metadata
            }

            fn spec_semantic_eq(&self, other: &Self) -> bool {
                #spec_eq
            }

            #status_ops

            #hooks
        }
    }
}

fn emit_subresource(s: &SubresourceModel) -> TokenStream {
    let SubresourceModel {
        name, verbs, body, ..
    } = s;
    let body = match body {
        None => quote!(::core::option::Option::None),
        Some((group, version, kind)) => quote! {
            ::core::option::Option::Some(::kapi_runtime::BodyKind {
                group: #group,
                version: #version,
                kind: #kind,
            })
        },
    };
    quote! {
        ::kapi_runtime::Subresource {
            name: #name,
            verbs: &[#(#verbs),*],
            body: #body,
        }
    }
}

fn emit_column(c: &PrinterColumn) -> TokenStream {
    let PrinterColumn {
        name,
        type_,
        format,
        description,
        priority,
        json_path,
    } = c;
    quote! {
        ::kapi_runtime::PrinterColumn {
            name: #name,
            type_: #type_,
            format: #format,
            description: #description,
            priority: #priority,
            json_path: #json_path,
        }
    }
}

/// The hook overrides. Each hook is first bound to a fn pointer of the documented
/// signature, so a hook with another signature is reported at its path with the
/// expected type, not as an argument mismatch inside the generated call.
fn emit_hooks(model: &ResourceModel) -> TokenStream {
    let prepare = model.hooks.prepare.as_ref().map(|f| {
        let hook = quote_spanned!(f.span()=> let hook: fn(&mut Self) = #f;);
        quote! {
            fn prepare_for_write(&mut self) {
                #hook
                hook(self)
            }
        }
    });
    let validate_update = model.hooks.validate_update.as_ref().map(|f| {
        let hook = quote_spanned!(f.span()=>
            let hook: fn(
                &Self,
                &Self,
                &::kapi_runtime::validation::FieldPath,
                &mut ::kapi_runtime::validation::FieldErrors,
            ) = #f;
        );
        quote! {
            fn validate_update(&self, old: &Self, errs: &mut ::kapi_runtime::validation::FieldErrors) {
                #hook
                hook(self, old, &::kapi_runtime::validation::FieldPath::root(), errs)
            }
        }
    });
    let answer = model.hooks.answer.as_ref().map(|f| {
        let hook = quote_spanned!(f.span()=> let hook: fn(&mut Self) = #f;);
        quote! {
            fn answer(&mut self) {
                #hook
                hook(self)
            }
        }
    });
    let cells = model.hooks.table_cells.as_ref().map(|f| {
        let hook = quote_spanned!(f.span()=> let hook: fn(&Self) -> ::std::vec::Vec<::kapi_runtime::serde_json::Value> = #f;);
        quote! {
            fn table_cells(&self) -> ::core::option::Option<::std::vec::Vec<::kapi_runtime::serde_json::Value>> {
                #hook
                ::core::option::Option::Some(hook(self))
            }
        }
    });
    let grace = model.hooks.grace_period.as_ref().map(|f| {
        let hook = quote_spanned!(f.span()=>
            let hook: fn(&Self, ::core::option::Option<i64>) -> ::core::option::Option<i64> = #f;
        );
        quote! {
            fn deletion_grace_period(&self, requested: ::core::option::Option<i64>) -> ::core::option::Option<i64> {
                #hook
                hook(self, requested)
            }
        }
    });
    let field_label = model.hooks.field_label.as_ref().map(|f| {
        let hook = quote_spanned!(f.span()=>
            let hook: fn(&Self, &str) -> ::core::option::Option<::std::string::String> = #f;
        );
        quote! {
            fn field_label(&self, label: &str) -> ::core::option::Option<::std::string::String> {
                #hook
                hook(self, label)
            }
        }
    });
    let prepare_create = model.hooks.prepare_create.as_ref().map(|f| {
        let hook = quote_spanned!(f.span()=> let hook: fn(&mut Self) = #f;);
        quote! {
            fn prepare_create(&mut self) {
                #hook
                hook(self)
            }
        }
    });
    let prepare_update = model.hooks.prepare_update.as_ref().map(|f| {
        let hook = quote_spanned!(f.span()=> let hook: fn(&mut Self, &Self) = #f;);
        quote! {
            fn prepare_update(&mut self, old: &Self) {
                #hook
                ::kapi_runtime::ApiType::apply_defaults(self);
                hook(self, old)
            }
        }
    });
    let warnings = model.hooks.warnings.as_ref().map(|f| {
        let hook = quote_spanned!(f.span()=>
            let hook: fn(&Self, ::core::option::Option<&Self>) -> ::std::vec::Vec<::std::string::String> = #f;
        );
        quote! {
            fn warnings(&self, old: ::core::option::Option<&Self>) -> ::std::vec::Vec<::std::string::String> {
                #hook
                hook(self, old)
            }
        }
    });
    let subresources = emit_subresource_hooks(model);
    let validate_served = model.hooks.validate_served.as_ref().map(|f| {
        let target = match &model.hub {
            Some(hub) => quote!(#hub),
            None => quote!(Self),
        };
        quote! {
            fn validate_served(
                object: &dyn ::kapi_runtime::DynObject,
                old: ::core::option::Option<&dyn ::kapi_runtime::DynObject>,
                errs: &mut ::kapi_runtime::validation::FieldErrors,
            ) {
                if let ::core::option::Option::Some(object) =
                    object.as_any().downcast_ref::<#target>()
                {
                    let old = old.and_then(|o| o.as_any().downcast_ref::<#target>());
                    let hook: fn(
                        &#target,
                        ::core::option::Option<&#target>,
                        &mut ::kapi_runtime::validation::FieldErrors,
                    ) = #f;
                    hook(object, old, errs);
                }
            }
        }
    });
    quote!(#prepare #prepare_create #prepare_update #subresources #validate_update #warnings #answer #cells #grace #field_label #validate_served)
}

/// `prepare_subresource_update` and `validate_subresource_update`: a `match` on
/// the subresource's name over the hooks declared.
fn emit_subresource_hooks(model: &ResourceModel) -> TokenStream {
    let status = model
        .hooks
        .prepare_status_update
        .as_ref()
        .map(|f| ("status", f));
    let prepares: Vec<_> = status
        .into_iter()
        .chain(
            model
                .subresources
                .iter()
                .filter_map(|s| s.prepare_update.as_ref().map(|f| (s.name.as_str(), f))),
        )
        .map(|(name, f)| {
            let hook = quote_spanned!(f.span()=> let hook: fn(&mut Self, &Self) = #f;);
            quote!(#name => {
                #hook
                ::kapi_runtime::ApiType::apply_defaults(self);
                hook(self, old)
            })
        })
        .collect();
    let validates: Vec<_> = model
        .subresources
        .iter()
        .filter_map(|s| s.validate_update.as_ref().map(|f| (s.name.as_str(), f)))
        .map(|(name, f)| {
            let hook = quote_spanned!(f.span()=>
                let hook: fn(
                    &Self,
                    &Self,
                    &::kapi_runtime::validation::FieldPath,
                    &mut ::kapi_runtime::validation::FieldErrors,
                ) = #f;
            );
            quote!(#name => {
                #hook
                hook(self, old, &::kapi_runtime::validation::FieldPath::root(), errs)
            })
        })
        .collect();
    let prepare = (!prepares.is_empty()).then(|| {
        quote! {
            fn prepare_subresource_update(&mut self, subresource: &str, old: &Self) {
                match subresource {
                    #(#prepares)*
                    _ => {}
                }
            }
        }
    });
    let validate = (!validates.is_empty()).then(|| {
        quote! {
            fn validate_subresource_update(
                &self,
                subresource: &str,
                old: &Self,
                errs: &mut ::kapi_runtime::validation::FieldErrors,
            ) {
                match subresource {
                    #(#validates)*
                    _ => {}
                }
            }
        }
    });
    quote!(#prepare #validate)
}
