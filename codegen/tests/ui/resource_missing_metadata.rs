use kapi_codegen::Resource;

#[derive(Resource)]
#[resource(group = "example.com", version = "v1")]
pub struct Widget {
    pub spec: String,
}

fn main() {}
