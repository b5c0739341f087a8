use kapi_codegen::{ApiType, Convert};

pub mod v1 {
    #[derive(PartialEq, kapi_codegen::ApiType)]
    pub struct WidgetSpec {
        pub color: String,
        pub size: i64,
    }
}

// `size` was added to the hub and not mapped here: both directions fail.
#[derive(PartialEq, ApiType, Convert)]
#[convert(hub = v1::WidgetSpec)]
pub struct WidgetSpec {
    pub color: String,
}

fn main() {}
