use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType, Resource)]
#[resource(group = "example.com", version = "v1", prepare = prepare, grace_period = grace)]
pub struct Widget {
    pub metadata: ObjectMeta,
}

fn prepare(_: &Widget) {}

fn grace(_: &Widget) -> Option<i64> {
    None
}

fn main() {}
