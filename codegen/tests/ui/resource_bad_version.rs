use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(Resource)]
#[resource(group = "example.com", version = "1.0")]
pub struct Widget {
    pub metadata: ObjectMeta,
}

#[derive(Resource)]
#[resource(group = "example.com", version = "v1beta")]
pub struct Gadget {
    pub metadata: ObjectMeta,
}

fn main() {}
