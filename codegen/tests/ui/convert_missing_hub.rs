use kapi_codegen::{ApiType, Convert};

#[derive(PartialEq, ApiType, Convert)]
pub struct WidgetSpec {
    #[convert(rename = "colour")]
    pub color: String,
}

fn main() {}
