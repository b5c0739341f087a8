use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType, Default)]
#[api(proto_embed(field = "source", number = 2, message = "Source"))]
pub struct Volume {
    #[api(proto = 1)]
    pub name: String,
    #[api(proto = 1, proto_in = "volumeSource")]
    pub host_path: Option<String>,
}

fn main() {}
