use kapi_codegen::ApiType;

#[derive(ApiType)]
pub struct WidgetSpec {
    #[api(minimum = "1")]
    pub replicas: i32,
    #[api(maximum = true)]
    pub surge: i32,
}

fn main() {}
