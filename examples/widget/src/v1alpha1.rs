//! `example.kapi.dev/v1alpha1`: the widget as the first version of the API
//! described it, still served next to `v1`. Objects are stored once, as `v1`
//! (the kind's hub); this version is converted to and from it on every request,
//! so a widget written in one version reads the same in the other.
//!
//! What changed between the versions is declared, not coded: `colour` and
//! `parts` were renamed `color` and `size` in v1 (`#[convert(rename = ...)]`);
//! the status did not change, so v1alpha1 uses v1's type as it is.

use kapi_codegen::{ApiType, Convert, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::WidgetStatus;

/// A widget, in the alpha version of the API.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource, Convert)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "example.kapi.dev",
    version = "v1alpha1",
    short_names("wd"),
    categories("all"),
    status,
    hub = crate::Widget,
    printer_column(
        name = "Colour",
        type = "string",
        json_path = ".spec.colour",
        description = "The widget's colour."
    ),
    printer_column(
        name = "Parts",
        type = "integer",
        json_path = ".spec.parts",
        description = "How many parts it has."
    )
)]
#[convert(hub = crate::Widget)]
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

/// The desired state of a widget, in the alpha version's words.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Convert)]
#[serde(rename_all = "camelCase")]
#[convert(hub = crate::WidgetSpec)]
pub struct WidgetSpec {
    /// The colour; one of red, green and blue (`color` in v1).
    #[api(required, one_of("red", "green", "blue"))]
    #[convert(rename = "color")]
    #[serde(default)]
    pub colour: String,
    /// Number of parts, 1 to 100; 1 when unset (`size` in v1).
    #[api(minimum = 1, maximum = 100, default = 1)]
    #[convert(rename = "size")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<i64>,
    /// A DNS label naming the factory that makes it.
    #[api(format = "dns1123-label")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factory: Option<String>,
}
