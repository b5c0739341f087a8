use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(Resource)]
#[resource(group = "example.com", version = "v1", status)]
pub struct Widget {
    pub metadata: ObjectMeta,
    pub spec: String,
}

fn main() {}
