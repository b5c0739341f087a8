use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType)]
pub struct WidgetSpec {
    #[api(one_of())]
    pub policy: String,
}

fn main() {}
