//! The parse stage: the only code that reads attributes.

mod api_attrs;
mod resource_attrs;
mod serde_attrs;
mod str_list;

pub use api_attrs::{ApiField, ApiInput};
pub use resource_attrs::{PrinterColumnAttr, ResourceInput};
pub use serde_attrs::{SerdeContainer, SerdeField};
pub use str_list::StrList;
