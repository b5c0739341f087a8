//! The checks of Events (upstream's `ValidateEventCreate`/`ValidateEventUpdate`),
//! which depend on the version a write comes through. Every write gets the
//! lenient checks old clients rely on; one through events.k8s.io/v1 also gets
//! the strict ones. Both run on the stored core Event and report its field
//! names (`involvedObject`, `source`...), except that the reporting
//! controller is named as the request's version names it.

use kapi_runtime::validation::{
    FieldErrors, FieldPath, dns1123_subdomain_errors, qualified_name_errors,
};

use crate::core::v1::Event;
use crate::core::v1::event::EventSource;
use crate::core::v1::reference::ObjectReference;
use crate::validation::Raw;

const REPORTING_INSTANCE_MAX: usize = 128;
const ACTION_MAX: usize = 128;
const REASON_MAX: usize = 128;
const NOTE_MAX: usize = 1024;

/// A write through core/v1: the lenient checks only.
pub(crate) fn validate_core_event(event: &Event, _old: Option<&Event>, errs: &mut FieldErrors) {
    validate_lenient(event, "reportingComponent", errs);
}

/// A write through events.k8s.io/v1: the lenient checks, then the strict
/// ones of a create, or of an update against the stored `old`.
pub(crate) fn validate_events_v1(event: &Event, old: Option<&Event>, errs: &mut FieldErrors) {
    validate_lenient(event, "reportingController", errs);
    match old {
        None => validate_strict_create(event, errs),
        Some(old) => validate_strict_update(event, old, errs),
    }
}

/// `legacyValidateEvent`. An event without `eventTime` (the old shape) only
/// needs its namespace to agree with the involved object's; a new-shape one
/// needs its reporting fields, within their lengths.
fn validate_lenient(event: &Event, controller_field: &str, errs: &mut FieldErrors) {
    let namespace = event.metadata.namespace.as_deref().unwrap_or_default();
    let involved_namespace = event
        .involved_object
        .namespace
        .as_deref()
        .unwrap_or_default();
    let mismatch = match (&event.event_time, involved_namespace) {
        (None, "") => !matches!(namespace, "" | "default"),
        (None, involved) => namespace != involved,
        (Some(_), "") => !matches!(namespace, "default" | "kube-system"),
        (Some(_), _) => false,
    };
    if mismatch {
        errs.invalid(
            FieldPath::new("involvedObject.namespace"),
            involved_namespace,
            "does not match event.namespace",
        );
    }
    if event.event_time.is_some() {
        validate_reporting(event, controller_field, errs);
    }
    for detail in dns1123_subdomain_errors(namespace) {
        errs.invalid(FieldPath::new("namespace"), namespace, &detail);
    }
}

/// The fields a new-shape event must carry, within their lengths.
fn validate_reporting(event: &Event, controller_field: &str, errs: &mut FieldErrors) {
    let controller = event.reporting_component.as_str();
    if controller.is_empty() {
        errs.required(FieldPath::new(controller_field), "");
    }
    for detail in qualified_name_errors(controller) {
        errs.invalid(FieldPath::new(controller_field), controller, &detail);
    }
    let len = |value: &Option<String>| value.as_deref().unwrap_or_default().len();
    let limited = [
        (
            "reportingInstance",
            event.reporting_instance.len(),
            REPORTING_INSTANCE_MAX,
            true,
        ),
        ("action", len(&event.action), ACTION_MAX, true),
        ("reason", len(&event.reason), REASON_MAX, true),
        ("message", len(&event.message), NOTE_MAX, false),
    ];
    for (field, len, max, required) in limited {
        if required && len == 0 {
            errs.required(FieldPath::new(field), "");
        }
        if len > max {
            errs.invalid(
                FieldPath::new(field),
                "",
                &format!("can have at most {max} characters"),
            );
        }
    }
}

/// The strict part of `ValidateEventCreate`: a new-shape event with none of
/// the old shape's fields.
fn validate_strict_create(event: &Event, errs: &mut FieldErrors) {
    let name = event.metadata.name.as_deref().unwrap_or_default();
    for detail in dns1123_subdomain_errors(name) {
        errs.invalid(FieldPath::new("metadata.name"), name, &detail);
    }
    validate_series(event, errs);
    if event.event_time.is_none() {
        errs.required(FieldPath::new("eventTime"), "");
    }
    let kind = event.type_.as_deref().unwrap_or_default();
    if !matches!(kind, "Normal" | "Warning") {
        errs.invalid(
            FieldPath::new("type"),
            "",
            &format!("has invalid value: {kind}"),
        );
    }
    let must_be_unset = [
        ("firstTimestamp", event.first_timestamp.is_some()),
        ("lastTimestamp", event.last_timestamp.is_some()),
        ("count", event.count.is_some_and(|c| c != 0)),
        ("source", source_set(&event.source)),
    ];
    for (field, set) in must_be_unset {
        if set {
            errs.invalid(FieldPath::new(field), "", "needs to be unset");
        }
    }
}

fn source_set(source: &EventSource) -> bool {
    let set = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.is_empty());
    set(&source.component) || set(&source.host)
}

/// `validateV1EventSeries`: a series counts at least two occurrences and
/// says when it saw the last.
fn validate_series(event: &Event, errs: &mut FieldErrors) {
    let Some(series) = &event.series else {
        return;
    };
    if series.count.unwrap_or_default() < 2 {
        errs.invalid(FieldPath::new("series.count"), "", "should be at least 2");
    }
    if series.last_observed_time.is_none() {
        errs.required(FieldPath::new("series.lastObservedTime"), "");
    }
}

/// The strict part of `ValidateEventUpdate`: a changed series is checked
/// again, and everything else the event says is immutable. Each changed
/// field shows its new value as Go prints it (the reason is checked, and
/// reported, twice, as upstream does).
fn validate_strict_update(new: &Event, old: &Event, errs: &mut FieldErrors) {
    if new.series != old.series {
        validate_series(new, errs);
    }
    let text = |s: &Option<String>| format!("{:?}", s.as_deref().unwrap_or_default());
    let changes: [(&str, bool, &dyn Fn() -> String); 14] = [
        (
            "involvedObject",
            new.involved_object != old.involved_object,
            &|| go_reference(&new.involved_object),
        ),
        ("reason", new.reason != old.reason, &|| text(&new.reason)),
        ("message", new.message != old.message, &|| {
            text(&new.message)
        }),
        ("source", new.source != old.source, &|| {
            go_source(&new.source)
        }),
        (
            "firstTimestamp",
            new.first_timestamp != old.first_timestamp,
            &|| go_time(new.first_timestamp.map(|t| t.go_string())),
        ),
        (
            "lastTimestamp",
            new.last_timestamp != old.last_timestamp,
            &|| go_time(new.last_timestamp.map(|t| t.go_string())),
        ),
        (
            "count",
            new.count.unwrap_or(0) != old.count.unwrap_or(0),
            &|| new.count.unwrap_or(0).to_string(),
        ),
        ("reason", new.reason != old.reason, &|| text(&new.reason)),
        ("type", new.type_ != old.type_, &|| text(&new.type_)),
        ("eventTime", new.event_time != old.event_time, &|| {
            go_time(new.event_time.map(|t| t.go_string()))
        }),
        ("action", new.action != old.action, &|| text(&new.action)),
        (
            "related",
            new.related != old.related,
            &|| match &new.related {
                Some(related) => go_reference(related),
                None => "\"null\"".to_owned(),
            },
        ),
        (
            "reportingController",
            new.reporting_component != old.reporting_component,
            &|| format!("{:?}", new.reporting_component),
        ),
        (
            "reportingInstance",
            new.reporting_instance != old.reporting_instance,
            &|| format!("{:?}", new.reporting_instance),
        ),
    ];
    for (field, changed, value) in changes {
        if changed {
            errs.invalid(FieldPath::new(field), Raw(&value()), "field is immutable");
        }
    }
}

/// Go's `%#v` of a core.ObjectReference.
fn go_reference(r: &ObjectReference) -> String {
    let s = |v: &Option<String>| format!("{:?}", v.as_deref().unwrap_or_default());
    format!(
        "core.ObjectReference{{Kind:{}, Namespace:{}, Name:{}, UID:{}, APIVersion:{}, \
         ResourceVersion:{}, FieldPath:{}}}",
        s(&r.kind),
        s(&r.namespace),
        s(&r.name),
        s(&r.uid),
        s(&r.api_version),
        s(&r.resource_version),
        s(&r.field_path),
    )
}

/// Go's `%#v` of a core.EventSource.
fn go_source(source: &EventSource) -> String {
    let s = |v: &Option<String>| format!("{:?}", v.as_deref().unwrap_or_default());
    format!(
        "core.EventSource{{Component:{}, Host:{}}}",
        s(&source.component),
        s(&source.host)
    )
}

/// A time as Go prints it; an unset one is Go's zero time.
fn go_time(time: Option<String>) -> String {
    time.unwrap_or_else(|| "0001-01-01 00:00:00 +0000 UTC".to_owned())
}
