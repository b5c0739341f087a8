use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(Resource)]
#[resource(version = "v1")]
pub struct Widget {
    pub metadata: ObjectMeta,
}

fn main() {}
