use kapi_codegen::ApiType;

#[derive(ApiType)]
pub struct WidgetSpec {
    #[api(requird)]
    pub name: String,
}

fn main() {}
