use kapi_codegen::ApiType;

#[derive(PartialEq, ApiType)]
pub enum RestartPolicy {
    Always,
    Never,
}

fn main() {}
