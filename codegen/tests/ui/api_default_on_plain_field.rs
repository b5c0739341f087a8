use kapi_codegen::ApiType;

#[derive(ApiType)]
pub struct WidgetSpec {
    #[api(default = 1)]
    pub replicas: i32,
}

fn main() {}
