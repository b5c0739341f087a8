use kapi_codegen::ApiType;

/// No numbers: JSON-only.
#[derive(PartialEq, ApiType, Default)]
pub struct Inner {
    pub size: i32,
}

#[derive(PartialEq, ApiType, Default)]
pub struct Outer {
    #[api(proto = 1)]
    pub inner: Inner,
}

fn main() {}
