use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType)]
pub struct WidgetSpec {
    #[api(format = "hostname")]
    pub host: String,
}

fn main() {}
