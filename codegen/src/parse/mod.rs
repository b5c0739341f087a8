//! The parse stage: the only code that reads attributes.

mod api_attrs;
mod convert_attrs;
mod literal;
mod resource_attrs;
mod serde_attrs;
mod shape;
mod str_list;

pub use api_attrs::{ApiField, ApiInput, ProtoEmbedAttr, doc_lines};
pub use convert_attrs::ConvertInput;
pub use literal::SignedLit;
pub use resource_attrs::{PrinterColumnAttr, ResourceInput, SubresourceAttr};
pub use serde_attrs::{SerdeContainer, SerdeField};
pub use shape::{find_attr, named_struct};
pub use str_list::StrList;
