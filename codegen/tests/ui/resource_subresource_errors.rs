use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

// A part of the object written through its own endpoint must say what such a
// write changes; an action takes no hooks; `status` is not declared this way.
#[derive(Resource)]
#[resource(
    group = "example.com",
    version = "v1",
    subresource(name = "approval"),
    subresource(name = "eviction", kind = "Eviction", prepare_update = take),
    subresource(name = "status", verbs("get")),
    subresource(name = "resize", verbs("watch"), prepare_update = take)
)]
pub struct Widget {
    pub metadata: ObjectMeta,
}

fn take(_: &mut Widget, _: &Widget) {}

fn main() {}
