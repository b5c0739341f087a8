//! PodTemplates: stored pod templates that other objects can copy.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::pod::PodTemplateSpec;
use super::pod::container::Container;
use crate::go_json::null_as_default;
use crate::labels::format_labels;

/// A pod template kept as an object of its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "podtemplates",
    return_deleted_object,
    printer_column(name = "Containers", type = "string",
        json_path = ".template.spec.containers[*].name",
        description = "Names of the template's containers."),
    printer_column(name = "Images", type = "string",
        json_path = ".template.spec.containers[*].image",
        description = "Images of the template's containers."),
    printer_column(name = "Pod Labels", type = "string", json_path = ".template.metadata.labels",
        description = "Labels the template gives its pods."),
    warnings = podtemplate_warnings,
    table_cells = podtemplate_cells
)]
pub struct PodTemplate {
    /// Name, namespace, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The pods this template describes.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub template: PodTemplateSpec,
}

/// The `kubectl get podtemplates` row: container names, images and pod labels.
fn podtemplate_cells(pt: &PodTemplate) -> Vec<Value> {
    let (names, images) = container_cells(&pt.template.spec.containers);
    vec![
        json!(names),
        json!(images),
        json!(format_labels(pt.template.metadata.labels.as_ref())),
    ]
}

/// The Containers and Images cells of a pod template: names and images of its
/// containers, comma-separated, as kube-apiserver's printers lay them out
/// (pod templates, replication controllers, replica sets, daemon sets, jobs).
pub(crate) fn container_cells(containers: &[Container]) -> (String, String) {
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = containers
        .iter()
        .map(|c| c.image.as_deref().unwrap_or_default())
        .collect();
    (names.join(","), images.join(","))
}

/// The `Warning` headers of a write: those of the pod template, on create and
/// when the spec changes.
fn podtemplate_warnings(d: &PodTemplate, old: Option<&PodTemplate>) -> Vec<String> {
    crate::core::v1::pod::warnings::template_warnings(
        &["template"],
        Some(&d.template),
        &d.template,
        old.map(|o| &o.template),
    )
}
