use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType, Default)]
pub struct WidgetSpec {
    #[api(proto = 0)]
    pub name: String,
    #[api(proto = 19001)]
    pub size: i32,
}

fn main() {}
