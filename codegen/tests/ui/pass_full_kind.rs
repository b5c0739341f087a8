//! A kind using every key and rule compiles without warnings and registers.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::{IntOrString, Quantity};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType, Resource)]
#[resource(
    group = "apps.example.com",
    version = "v2alpha1",
    kind = "Widget",
    plural = "widgets",
    singular = "widget",
    short_names("wd", "wdg"),
    categories("all"),
    namespaced,
    status,
    selectable_fields("spec.nodeName", "status.phase"),
    indexed_fields("spec.nodeName"),
    return_deleted_object,
    printer_column(name = "Replicas", type = "integer", json_path = ".spec.replicas"),
    printer_column(name = "Phase", type = "string", json_path = ".status.phase", priority = 1),
    printer_column(
        name = "Created",
        type = "date",
        json_path = ".metadata.creationTimestamp",
        description = "When the widget was made",
        format = "date-time"
    ),
    prepare = hooks::prepare,
    table_cells = hooks::cells,
    grace_period = hooks::grace
)]
pub struct WidgetObject {
    pub metadata: ObjectMeta,
    pub spec: WidgetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WidgetStatus>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    #[api(required, format = "dns1123-subdomain")]
    pub node_name: String,
    #[serde(default)]
    #[api(format = "dns1123-label")]
    pub hostname: Option<String>,
    #[serde(default)]
    #[api(minimum = 0, maximum = 100, default = 1)]
    pub replicas: Option<i32>,
    // Regression: negative literals were rejected ("Unexpected type `unary`").
    #[serde(default)]
    #[api(minimum = -1, default = -1)]
    pub revision_limit: Option<i64>,
    #[serde(default)]
    #[api(minimum = 0.0, maximum = 1.5e3, default = 0.5)]
    pub ratio: Option<f64>,
    // Regression: an integer default for a u32 field went through `Into` and
    // failed with "the trait `From<i32>` is not implemented for `u32`".
    #[serde(default)]
    #[api(minimum = 1, maximum = 65535, default = 8080)]
    pub port: Option<u32>,
    #[serde(default)]
    #[api(one_of("Always", "OnFailure", "Never"), default = "Always")]
    pub restart_policy: Option<String>,
    #[serde(default)]
    #[api(default = false)]
    pub paused: Option<bool>,
    #[serde(default, rename = "podIP")]
    pub pod_ip: Option<String>,
    #[serde(default)]
    pub target_port: Option<IntOrString>,
    #[serde(default)]
    pub limits: BTreeMap<String, Quantity>,
    #[serde(default)]
    #[api(required)]
    pub containers: Vec<Container>,
    #[serde(flatten)]
    pub extra: Extra,
    #[serde(skip)]
    pub cache: Option<String>,
    #[serde(default)]
    pub r#type: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType)]
pub struct Container {
    #[api(required, format = "dns1123-label")]
    pub name: String,
    #[serde(default)]
    pub args: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType)]
pub struct Extra {
    #[serde(default)]
    #[api(maximum = 10)]
    pub weight: Option<i64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType)]
pub struct WidgetStatus {
    #[serde(default)]
    pub phase: Option<String>,
}

mod hooks {
    use super::WidgetObject;
    use serde_json::Value;

    pub fn prepare(w: &mut WidgetObject) {
        w.spec.cache = None;
    }

    pub fn cells(w: &WidgetObject) -> Vec<Value> {
        vec![Value::from(w.spec.replicas)]
    }

    pub fn grace(_: &WidgetObject, requested: Option<i64>) -> Option<i64> {
        requested
    }
}

fn main() {
    use kapi_runtime::{ApiType as _, Resource as _};
    let mut w = WidgetObject::default();
    w.apply_defaults();
    assert_eq!(w.spec.revision_limit, Some(-1));
    assert_eq!(w.spec.port, Some(8080));
    assert_eq!(WidgetObject::INFO.plural, "widgets");
    assert!(kapi_runtime::scheme::KINDS.iter().any(|k| k().info.kind == "Widget"));
}
