use kapi_codegen::ApiType;

#[derive(ApiType)]
pub struct WidgetSpec<T> {
    pub value: T,
}

fn main() {}
