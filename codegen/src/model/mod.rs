//! The model stage: typed facts about a struct, checked, with no attribute syntax
//! left. Emitters take a model and produce one artifact each.

mod api_type;
mod naming;
mod resource;

pub use api_type::{ApiTypeModel, DefaultValue, FieldModel, Rule, SpannedRule};
pub use resource::{NameFormat, PrinterColumn, ResourceModel};
