use kapi_codegen::ApiType;

#[derive(ApiType)]
pub struct WidgetSpec {
    #[api(one_of("Always", Never, 3))]
    pub policy: String,
}

fn main() {}
