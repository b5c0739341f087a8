use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType)]
pub struct WidgetSpec {
    #[api(default = 1)]
    pub replicas: i32,
}

fn main() {}
