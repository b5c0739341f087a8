//! Registration of a kind in the scheme's link-time list: no hand-written list of
//! kinds exists anywhere. A kind with a protobuf message registers its codec too.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::ResourceModel;

/// Emits the distributed-slice entry for a kind.
pub fn emit(model: &ResourceModel) -> TokenStream {
    let ident = &model.ident;
    let entry = if model.protobuf {
        quote!(::kapi_runtime::scheme::KindEntry::with_protobuf::<#ident>)
    } else {
        quote!(::kapi_runtime::scheme::KindEntry::of::<#ident>)
    };
    quote! {
        const _: () = {
            #[::kapi_runtime::linkme::distributed_slice(::kapi_runtime::scheme::KINDS)]
            #[linkme(crate = ::kapi_runtime::linkme)]
            static REGISTER: fn() -> ::kapi_runtime::scheme::KindEntry = #entry;
        };
    }
}
