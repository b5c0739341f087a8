//! `impl proto::Message`: protobuf encode and decode straight between the struct
//! and bytes, from the field numbers of `#[api(proto = N)]`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{ProtoEmbed, ProtoEntry, ProtoField, ProtoMode, ProtoModel};

/// Emits the impl for a struct with a protobuf message.
pub fn emit(ident: &syn::Ident, model: &ProtoModel) -> TokenStream {
    let proto = quote!(::kapi_runtime::proto);
    let name = &model.name;
    let lens = model.entries.iter().map(entry_len);
    // Written back to front (see RevBuf): highest number first.
    let encodes = model.entries.iter().rev().map(entry_encode);
    let merges = model.entries.iter().map(entry_merge);
    let descriptors = model.entries.iter().map(entry_descriptor);
    quote! {
        impl #proto::Message for #ident {
            const NAME: &'static str = #name;

            fn encoded_len(&self) -> usize {
                0 #(+ #lens)*
            }

            fn write_fields_rev(&self, buf: &mut #proto::RevBuf) {
                #(#encodes)*
            }

            fn merge_field(
                &mut self,
                number: u32,
                wire: #proto::WireType,
                r: &mut #proto::Reader<'_>,
            ) -> ::core::result::Result<(), #proto::DecodeError> {
                match number {
                    #(#merges)*
                    _ => r.skip(wire),
                }
            }

            fn describe() -> ::std::vec::Vec<#proto::FieldDescriptor> {
                ::std::vec![#(#descriptors),*]
            }
        }
    }
}

/// The length of the fields inside an embedded message.
fn embed_body_len(embed: &ProtoEmbed) -> TokenStream {
    let lens = embed.fields.iter().map(|f| call(f, Op::Len));
    quote!(0 #(+ #lens)*)
}

fn entry_len(entry: &ProtoEntry) -> TokenStream {
    match entry {
        ProtoEntry::Field(f) => call(f, Op::Len),
        ProtoEntry::Embed(e) => {
            let (n, body) = (e.number, embed_body_len(e));
            quote!(::kapi_runtime::proto::wire::len_field_len(#n, #body))
        }
    }
}

fn entry_encode(entry: &ProtoEntry) -> TokenStream {
    match entry {
        ProtoEntry::Field(f) => {
            let call = call(f, Op::Encode);
            quote!(#call;)
        }
        ProtoEntry::Embed(e) => {
            let n = e.number;
            let encodes = e.fields.iter().rev().map(|f| call(f, Op::Encode));
            quote! {
                {
                    let end = buf.len();
                    #(#encodes;)*
                    buf.close_len(#n, end);
                }
            }
        }
    }
}

fn entry_merge(entry: &ProtoEntry) -> TokenStream {
    let proto = quote!(::kapi_runtime::proto);
    match entry {
        ProtoEntry::Field(f) => {
            let (n, merge) = (f.number, call(f, Op::Merge));
            quote!(#n => #merge,)
        }
        ProtoEntry::Embed(e) => {
            let n = e.number;
            let merges = e.fields.iter().map(|f| {
                let (n, merge) = (f.number, call(f, Op::Merge));
                quote!(#n => #merge?,)
            });
            quote! {
                #n => {
                    #proto::Reader::expect(wire, #proto::WireType::Len)?;
                    let mut inner = r.nested()?;
                    let r = &mut inner;
                    while !r.is_empty() {
                        let (number, wire) = r.key()?;
                        match number {
                            #(#merges)*
                            _ => r.skip(wire)?,
                        }
                    }
                    ::core::result::Result::Ok(())
                }
            }
        }
    }
}

fn entry_descriptor(entry: &ProtoEntry) -> TokenStream {
    let proto = quote!(::kapi_runtime::proto);
    match entry {
        ProtoEntry::Field(f) => field_descriptor(f),
        ProtoEntry::Embed(e) => {
            let (name, n, message) = (&e.name, e.number, &e.message);
            let inner = e.fields.iter().map(field_descriptor);
            quote! {
                #proto::FieldDescriptor {
                    name: #name,
                    number: #n,
                    shape: #proto::Shape::Message(#message, || ::std::vec![#(#inner),*]),
                }
            }
        }
    }
}

fn field_descriptor(f: &ProtoField) -> TokenStream {
    let proto = quote!(::kapi_runtime::proto);
    let (name, n, ty) = (&f.name, f.number, &f.ty);
    quote! {
        #proto::FieldDescriptor {
            name: #name,
            number: #n,
            shape: <#ty as #proto::Field>::shape(),
        }
    }
}

#[derive(Clone, Copy)]
enum Op {
    Len,
    Encode,
    Merge,
}

/// One field's length, encode or merge call, by its mode.
fn call(field: &ProtoField, op: Op) -> TokenStream {
    let proto = quote!(::kapi_runtime::proto);
    let (ident, n) = (&field.ident, field.number);
    match (field.mode, op) {
        (ProtoMode::Value, Op::Len) => quote!(#proto::value::len(&self.#ident, #n)),
        (ProtoMode::Value, Op::Encode) => quote!(#proto::value::write_rev(&self.#ident, #n, buf)),
        (ProtoMode::Value, Op::Merge) => quote!(#proto::value::merge(&mut self.#ident, wire, r)),
        (ProtoMode::Plain | ProtoMode::Pointer, Op::Len) => {
            quote!(#proto::Field::field_len(&self.#ident, #n))
        }
        (ProtoMode::Plain | ProtoMode::Pointer, Op::Encode) => {
            quote!(#proto::Field::write_rev(&self.#ident, #n, buf))
        }
        (ProtoMode::Plain | ProtoMode::Pointer, Op::Merge) => {
            quote!(#proto::Field::merge_field(&mut self.#ident, wire, r))
        }
    }
}
