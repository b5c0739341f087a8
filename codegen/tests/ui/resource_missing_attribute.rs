use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(Resource)]
pub struct Widget {
    pub metadata: ObjectMeta,
}

fn main() {}
