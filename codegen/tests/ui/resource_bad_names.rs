use kapi_codegen::Resource;
use kapi_runtime::meta::ObjectMeta;

// Every name is checked, and every error is reported at once.
#[derive(Resource)]
#[resource(
    group = "Example_Com",
    version = "v1",
    kind = "widget",
    plural = "Widgets",
    singular = "my-widget"
)]
pub struct Widget {
    pub metadata: ObjectMeta,
}

fn main() {}
