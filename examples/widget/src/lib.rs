//! A downstream crate adding its own kind, `Widget` in `example.kapi.dev/v1`, the
//! way a third party would: annotate a struct, call [`install`], serve. The
//! kind is also served in an older version, [`v1alpha1`], converted to and from
//! `v1` (the hub and storage version) by `#[derive(Convert)]`.

pub mod extend;
pub mod v1alpha1;

pub use extend::extend;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::scheme::Scheme;
use serde::{Deserialize, Serialize};

/// A widget: something with a size and a color that a controller would build.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "example.kapi.dev",
    version = "v1",
    short_names("wd"),
    categories("all"),
    status,
    selectable_fields("spec.color"),
    printer_column(
        name = "Color",
        type = "string",
        json_path = ".spec.color",
        description = "The widget's color."
    ),
    printer_column(
        name = "Size",
        type = "integer",
        json_path = ".spec.size",
        description = "How many parts it has."
    ),
    printer_column(
        name = "Phase",
        type = "string",
        json_path = ".status.phase",
        priority = 1,
        description = "Where the widget is in its life."
    )
)]
pub struct Widget {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What the widget should be.
    #[serde(default)]
    pub spec: WidgetSpec,
    /// What the widget is, written by its controller through `/status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<WidgetStatus>,
}

/// The desired state of a widget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// The color; one of red, green and blue.
    #[api(required, one_of("red", "green", "blue"))]
    #[serde(default)]
    pub color: String,
    /// Number of parts, 1 to 100; 1 when unset.
    #[api(minimum = 1, maximum = 100, default = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    /// A DNS label naming the factory that makes it.
    #[api(format = "dns1123-label")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factory: Option<String>,
}

/// The observed state of a widget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    /// `Pending`, `Built` or `Broken`.
    #[api(one_of("Pending", "Built", "Broken"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// Adds the `example.kapi.dev` group (both versions) to a scheme (and keeps this crate linked).
pub fn install(scheme: &mut Scheme) {
    scheme.install_group("example.kapi.dev");
}
