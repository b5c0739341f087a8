use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType)]
pub struct WidgetSpec<T: PartialEq> {
    pub value: T,
}

fn main() {}
