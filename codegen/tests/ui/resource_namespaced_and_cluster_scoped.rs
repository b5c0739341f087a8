use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(Resource)]
#[resource(group = "example.com", version = "v1", namespaced, cluster_scoped)]
pub struct Widget {
    pub metadata: ObjectMeta,
}

fn main() {}
