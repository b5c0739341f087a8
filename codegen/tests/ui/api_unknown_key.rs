use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType)]
pub struct WidgetSpec {
    #[api(requird)]
    pub name: String,
}

fn main() {}
