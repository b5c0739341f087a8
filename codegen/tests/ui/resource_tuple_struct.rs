use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(Resource)]
#[resource(group = "example.com", version = "v1")]
pub struct Widget(pub ObjectMeta);

fn main() {}
