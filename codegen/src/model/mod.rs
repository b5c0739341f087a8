//! The model stage: typed facts about a struct, checked, with no attribute syntax
//! left. Emitters take a model and produce one artifact each.

mod api_type;
mod convert;
mod naming;
mod proto;
mod resource;

pub use api_type::{ApiTypeModel, DefaultValue, FieldModel, MergeModel, Rule, SpannedRule};
pub use convert::{ConvertModel, FieldMap, Mapping};
pub use proto::{ProtoEmbed, ProtoEntry, ProtoField, ProtoMode, ProtoModel};
pub use resource::{NameFormat, PrinterColumn, ResourceModel, SubresourceModel};
