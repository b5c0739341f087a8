//! Events of events.k8s.io: reports of what happened to an object, in the
//! shape newer clients write (the same stored objects as core Events).

use kapi_codegen::{ApiType, Convert, Resource};
use kapi_runtime::meta::{MicroTime, ObjectMeta, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::core::v1::event::EventSource;
use crate::core::v1::reference::ObjectReference;
use crate::go_json::{null_as_default, omitempty};

/// A report that something happened to an object, e.g. an image pull failing,
/// from the controller that saw it. Recurring events are updated in `series`
/// instead of being recorded again. Core Events are the same objects, with
/// other field names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource, Convert)]
#[serde(rename_all = "camelCase")]
#[convert(hub = crate::core::v1::Event, with = super::conversion)]
#[resource(
    group = "events.k8s.io",
    version = "v1",
    hub = crate::core::v1::Event,
    plural = "events",
    storage_prefix = "events",
    short_names("ev"),
    generation = false,
    selectable_fields(
        "regarding.kind",
        "regarding.namespace",
        "regarding.name",
        "regarding.uid",
        "regarding.apiVersion",
        "regarding.resourceVersion",
        "regarding.fieldPath",
        "reason",
        "reportingController",
        "type"
    ),
    printer_column(name = "Last Seen", type = "date", json_path = ".deprecatedLastTimestamp",
        description = "When the event was last observed."),
    printer_column(name = "Type", type = "string", json_path = ".type",
        description = "Normal or Warning."),
    printer_column(name = "Reason", type = "string", json_path = ".reason",
        description = "Short machine-readable reason."),
    printer_column(name = "Object", type = "string", json_path = ".regarding.name",
        description = "The object the event is about, as kind/name."),
    printer_column(name = "Subobject", type = "string", json_path = ".regarding.fieldPath",
        priority = 1, description = "The part of the object the event is about."),
    printer_column(name = "Source", type = "string", json_path = ".reportingController",
        priority = 1, description = "Component, and instance, that reported the event."),
    printer_column(name = "Message", type = "string", json_path = ".note",
        description = "What happened."),
    printer_column(name = "First Seen", type = "date", json_path = ".deprecatedFirstTimestamp",
        priority = 1, description = "When the event was first observed."),
    printer_column(name = "Count", type = "integer", json_path = ".deprecatedCount",
        priority = 1, description = "How often the event occurred."),
    table_cells = event_cells,
    validate_served = crate::core::v1::validation::validate_events_v1
)]
pub struct Event {
    /// Name, namespace and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// When the event first happened, with microseconds.
    #[serde(default)]
    #[api(proto = 2, proto_value)]
    #[api(schema_required)]
    pub event_time: Option<MicroTime>,
    /// The repetitions of a recurring event; unset for a single occurrence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub series: Option<EventSeries>,
    /// Controller that reported the event, e.g. `kubernetes.io/kubelet`.
    /// Required for new events.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub reporting_controller: Option<String>,
    /// Instance of that controller, e.g. `kubelet-worker-1`. Required for new
    /// events; at most 128 characters.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 5)]
    pub reporting_instance: Option<String>,
    /// What was done or failed regarding the object, e.g. `Binding`. Required
    /// for new events; at most 128 characters.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub action: Option<String>,
    /// Why the action happened, in CamelCase, e.g. `FailedScheduling`.
    /// Required for new events; at most 128 characters.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 7)]
    pub reason: Option<String>,
    /// The object the event is about, e.g. the pod a kubelet acts on.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 8)]
    pub regarding: ObjectReference,
    /// A second object involved, e.g. the node of a scheduling event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub related: Option<ObjectReference>,
    /// Human-readable description, at most 1 KiB.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 10)]
    pub note: Option<String>,
    /// `Normal` or `Warning`.
    #[serde(default, rename = "type", skip_serializing_if = "omitempty")]
    #[api(proto = 11)]
    pub type_: Option<String>,
    /// The reporter as core Events name it (`source`); empty for events
    /// written through this API.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 12)]
    pub deprecated_source: EventSource,
    /// Core Events' `firstTimestamp`; unset for events written through this API.
    #[serde(default)]
    #[api(proto = 13, proto_value)]
    pub deprecated_first_timestamp: Option<Time>,
    /// Core Events' `lastTimestamp`; unset for events written through this API.
    #[serde(default)]
    #[api(proto = 14, proto_value)]
    pub deprecated_last_timestamp: Option<Time>,
    /// Core Events' `count`; unset for events written through this API.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 15)]
    pub deprecated_count: Option<i32>,
}

/// The repetitions of a recurring event, updated by the reporter at a
/// heartbeat rather than on every occurrence.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct EventSeries {
    /// Occurrences up to `lastObservedTime`.
    #[serde(default)]
    #[api(required)]
    #[api(proto = 1)]
    pub count: i32,
    /// When the last occurrence was seen.
    #[serde(default)]
    #[api(proto = 2, proto_value)]
    #[api(schema_required)]
    pub last_observed_time: Option<MicroTime>,
}

/// The `kubectl get events` row (kube-apiserver's `printEvent`, which prints
/// these events as core Events, wide as the server does): the times seen from
/// whichever timestamps the reporter filled in, the count from the series or
/// 1, the object as `kind/name`, the source from either reporter field.
fn event_cells(event: &Event) -> Vec<Value> {
    let first = event
        .deprecated_first_timestamp
        .or_else(|| event.event_time.map(|t| Time(t.0)));
    let mut last = event.deprecated_last_timestamp.or(first);
    let mut count = event.deprecated_count.unwrap_or(0);
    if let Some(series) = &event.series {
        last = series.last_observed_time.map(|t| Time(t.0));
        count = series.count;
    } else if count == 0 {
        count = 1;
    }
    let object = &event.regarding;
    let kind = object.kind.as_deref().unwrap_or_default().to_lowercase();
    let target = match object.name.as_deref().filter(|n| !n.is_empty()) {
        Some(name) => format!("{kind}/{name}"),
        None => kind,
    };
    let first_non_empty = |a: Option<&str>, b: Option<&str>| {
        [a, b]
            .into_iter()
            .flatten()
            .find(|s| !s.is_empty())
            .unwrap_or_default()
            .to_owned()
    };
    let source = &event.deprecated_source;
    let component = first_non_empty(
        source.component.as_deref(),
        event.reporting_controller.as_deref(),
    );
    let instance = first_non_empty(source.host.as_deref(), event.reporting_instance.as_deref());
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last.map(|t| t.to_string())),
        json!(event.type_.as_deref().unwrap_or_default()),
        json!(event.reason.as_deref().unwrap_or_default()),
        json!(target),
        json!(object.field_path.as_deref().unwrap_or_default()),
        json!(source),
        json!(event.note.as_deref().unwrap_or_default().trim()),
        json!(first.map(|t| t.to_string())),
        json!(count),
    ]
}
