use kapi_codegen::ApiType;

#[derive(ApiType)]
pub enum RestartPolicy {
    Always,
    Never,
}

fn main() {}
