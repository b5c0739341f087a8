use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType)]
pub struct WidgetSpec {
    #[api(minimum = "1")]
    pub replicas: i32,
    #[api(maximum = true)]
    pub surge: i32,
}

fn main() {}
