use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType, Default)]
pub struct WidgetSpec {
    #[api(proto = 1)]
    pub name: String,
    #[api(proto = 1)]
    pub size: i32,
}

fn main() {}
