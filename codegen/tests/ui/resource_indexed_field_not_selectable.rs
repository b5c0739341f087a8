use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(Resource)]
#[resource(
    group = "example.com",
    version = "v1",
    selectable_fields("spec.size"),
    indexed_fields("spec.size", "spec.owner")
)]
pub struct Widget {
    pub metadata: ObjectMeta,
}

fn main() {}
