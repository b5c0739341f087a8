use kapi_codegen::ApiType;

#[derive(ApiType)]
pub struct WidgetSpec {
    #[api(format = "hostname")]
    pub host: String,
}

fn main() {}
