use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize, ApiType, Resource)]
#[resource(group = "example.com", version = "v1", verbs("create", "fetch"))]
pub struct Review {
    pub metadata: ObjectMeta,
}

fn main() {}
