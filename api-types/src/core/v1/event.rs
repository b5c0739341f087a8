//! Events: reports of what happened to an object, for people and tools.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{MicroTime, ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::reference::ObjectReference;
use crate::go_json::{null_as_default, omitempty};

/// A record of something that happened to an object, e.g. a pod being scheduled
/// or an image failing to pull. Repeats are counted instead of stored again.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "",
    version = "v1",
    plural = "events",
    short_names("ev"),
    generation = false,
    selectable_fields(
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type"
    ),
    name_format = "path-segment",
    field_label = event_field_label,
    printer_column(name = "Last Seen", type = "date", json_path = ".lastTimestamp",
        description = "When the event was last observed."),
    printer_column(name = "Type", type = "string", json_path = ".type",
        description = "Normal or Warning."),
    printer_column(name = "Reason", type = "string", json_path = ".reason",
        description = "Short machine-readable reason."),
    printer_column(name = "Object", type = "string", json_path = ".involvedObject.name",
        description = "The object the event is about, as kind/name."),
    printer_column(name = "Message", type = "string", json_path = ".message",
        description = "What happened."),
    table_cells = event_cells,
    validate_served = super::validation::validate_core_event
)]
pub struct Event {
    /// Name, namespace and other metadata.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The object the event is about.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub involved_object: ObjectReference,
    /// Short machine-readable reason in CamelCase, e.g. `FailedScheduling`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub reason: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub message: Option<String>,
    /// Component and host that reported the event (older clients).
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 5)]
    pub source: EventSource,
    /// When the event was first recorded.
    #[serde(default)]
    #[api(proto = 6, proto_value)]
    pub first_timestamp: Option<Time>,
    /// When the event was most recently recorded.
    #[serde(default)]
    #[api(proto = 7, proto_value)]
    pub last_timestamp: Option<Time>,
    /// How often the event occurred.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 8)]
    pub count: Option<i32>,
    /// `Normal` or `Warning`.
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(proto = 9)]
    pub type_: Option<String>,
    /// When the event was first observed, with microseconds (newer clients).
    #[serde(default)]
    #[api(proto = 10, proto_value)]
    pub event_time: Option<MicroTime>,
    /// Repetitions of the event, for events that keep happening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 11)]
    pub series: Option<EventSeries>,
    /// What was done or failed, e.g. `Binding`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 12)]
    pub action: Option<String>,
    /// A second object involved, e.g. the node of a scheduling event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 13)]
    pub related: Option<ObjectReference>,
    /// Controller that reported the event, e.g. `kubelet`.
    #[serde(default)]
    #[api(proto = 14)]
    pub reporting_component: String,
    /// Instance of that controller, e.g. the node name.
    #[serde(default)]
    #[api(proto = 15)]
    pub reporting_instance: String,
}

/// The reporter of an event, as older clients give it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct EventSource {
    /// Reporting component, e.g. `default-scheduler`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub component: Option<String>,
    /// Node the event was reported on.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub host: Option<String>,
}

/// Repetitions of a recurring event.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct EventSeries {
    /// Occurrences so far.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub count: Option<i32>,
    /// When the last occurrence was observed.
    #[serde(default)]
    #[api(proto = 2, proto_value)]
    pub last_observed_time: Option<MicroTime>,
}

/// The `kubectl get events` row (kube-apiserver's `printEvent`): the last time
/// seen from whichever timestamp the reporter filled in, and `kind/name`.
fn event_cells(event: &Event) -> Vec<Value> {
    let first = event
        .first_timestamp
        .or_else(|| event.event_time.map(|t| Time(t.0)));
    let mut last = event.last_timestamp.or(first);
    if let Some(series) = &event.series {
        last = series.last_observed_time.map(|t| Time(t.0));
    }
    let object = &event.involved_object;
    let kind = object.kind.as_deref().unwrap_or_default().to_lowercase();
    let target = match object.name.as_deref().filter(|n| !n.is_empty()) {
        Some(name) => format!("{kind}/{name}"),
        None => kind,
    };
    vec![
        json!(last.map(|t| t.to_string())),
        json!(event.type_.as_deref().unwrap_or_default()),
        json!(event.reason.as_deref().unwrap_or_default()),
        json!(target),
        json!(event.message.as_deref().unwrap_or_default().trim()),
    ]
}

/// An Event's `source` selects its reporting component, or its reporting
/// controller when no component is set, as upstream's `ToSelectableFields`.
fn event_field_label(event: &Event, label: &str) -> Option<String> {
    (label == "source").then(|| {
        event
            .source
            .component
            .clone()
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| event.reporting_component.clone())
    })
}
