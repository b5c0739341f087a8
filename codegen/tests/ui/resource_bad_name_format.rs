use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(Resource)]
#[resource(group = "example.com", version = "v1", name_format = "uppercase")]
pub struct Widget {
    pub metadata: ObjectMeta,
}

fn main() {}
