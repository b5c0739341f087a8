use kapi_codegen::ApiType;

#[derive(ApiType)]
pub struct WidgetSpec {
    #[api(one_of())]
    pub policy: String,
}

fn main() {}
