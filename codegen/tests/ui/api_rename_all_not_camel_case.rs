use kapi_codegen::ApiType;

#[derive(serde::Serialize, PartialEq, ApiType)]
#[serde(rename_all = "snake_case")]
pub struct WidgetSpec {
    pub node_name: String,
}

fn main() {}
