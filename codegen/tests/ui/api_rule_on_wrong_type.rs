use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType)]
pub struct WidgetSpec {
    #[api(minimum = 1)]
    pub name: String,
    #[api(format = "dns1123-label")]
    pub port: i32,
    #[api(default = "80")]
    pub target_port: Option<i32>,
}

fn main() {}
