//! events.k8s.io/v1 <-> core/v1 (the storage version) for Events: the same
//! objects under other field names, as Kubernetes stores both in one place
//! (`regarding` is `involvedObject`, `note` is `message`, the `deprecated*`
//! fields are the core timestamps, count and source).

use super::Event as V1;
use super::event::EventSeries;
use crate::core::v1::Event as Core;
use crate::core::v1::event::EventSeries as CoreSeries;

/// events.k8s.io -> core.
pub fn to_hub(event: V1) -> Core {
    let V1 {
        metadata,
        event_time,
        series,
        reporting_controller,
        reporting_instance,
        action,
        reason,
        regarding,
        related,
        note,
        type_,
        deprecated_source,
        deprecated_first_timestamp,
        deprecated_last_timestamp,
        deprecated_count,
    } = event;
    Core {
        metadata,
        involved_object: regarding,
        reason,
        message: note,
        source: deprecated_source,
        first_timestamp: deprecated_first_timestamp,
        last_timestamp: deprecated_last_timestamp,
        count: deprecated_count,
        type_,
        event_time,
        series: series.map(
            |EventSeries {
                 count,
                 last_observed_time,
             }| CoreSeries {
                count: Some(count),
                last_observed_time,
            },
        ),
        action,
        related,
        reporting_component: reporting_controller.unwrap_or_default(),
        reporting_instance: reporting_instance.unwrap_or_default(),
    }
}

/// core -> events.k8s.io.
pub fn from_hub(event: Core) -> V1 {
    let Core {
        metadata,
        involved_object,
        reason,
        message,
        source,
        first_timestamp,
        last_timestamp,
        count,
        type_,
        event_time,
        series,
        action,
        related,
        reporting_component,
        reporting_instance,
    } = event;
    V1 {
        metadata,
        event_time,
        series: series.map(
            |CoreSeries {
                 count,
                 last_observed_time,
             }| EventSeries {
                count: count.unwrap_or_default(),
                last_observed_time,
            },
        ),
        reporting_controller: Some(reporting_component).filter(|s| !s.is_empty()),
        reporting_instance: Some(reporting_instance).filter(|s| !s.is_empty()),
        action,
        reason,
        regarding: involved_object,
        related,
        note: message,
        type_,
        deprecated_source: source,
        deprecated_first_timestamp: first_timestamp,
        deprecated_last_timestamp: last_timestamp,
        deprecated_count: count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_survives_both_ways() {
        let v1: V1 = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "e", "namespace": "default"},
            "eventTime": "2026-11-23T03:22:22.123456Z",
            "series": {"count": 3, "lastObservedTime": "2026-11-23T03:22:25.000001Z"},
            "reportingController": "default-scheduler",
            "reportingInstance": "default-scheduler-vm",
            "action": "Binding",
            "reason": "Scheduled",
            "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
            "note": "Successfully assigned default/p to n1",
            "type": "Normal",
            "deprecatedCount": 2
        }))
        .unwrap();
        let core = to_hub(v1.clone());
        assert_eq!(core.involved_object.name.as_deref(), Some("p"));
        assert_eq!(
            core.message.as_deref(),
            Some("Successfully assigned default/p to n1")
        );
        assert_eq!(core.reporting_component, "default-scheduler");
        assert_eq!(from_hub(core), v1);
    }
}
