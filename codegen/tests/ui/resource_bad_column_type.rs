use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

#[derive(Resource)]
#[resource(
    group = "example.com",
    version = "v1",
    printer_column(name = "Replicas", type = "int", json_path = ".spec.replicas")
)]
pub struct Widget {
    pub metadata: ObjectMeta,
}

fn main() {}
