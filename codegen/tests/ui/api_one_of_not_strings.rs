use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType)]
pub struct WidgetSpec {
    #[api(one_of("Always", Never, 3))]
    pub policy: String,
}

fn main() {}
