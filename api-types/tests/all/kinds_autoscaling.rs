//! The autoscaling kinds (autoscaling/v2 and autoscaling/v1
//! HorizontalPodAutoscaler, the autoscaling/v1 Scale body) against objects the
//! real kube-apiserver 1.32 wrote (`tests/fixtures/autoscaling/*.json` and
//! `.pb`, fetched as JSON and as protobuf): every JSON field is known and written
//! back as Go wrote it, and Go's protobuf bytes decode and re-encode byte for
//! byte. The same stored objects are fetched through both versions: `hpa-v2`
//! (created in v2 with every metric source and behavior) also as `hpa-as-v1`,
//! `hpa-v1-created` (created in v1) also as `hpa-v1-created-as-v2`, and
//! `hpa-v2-fresh` (no status written yet). Also the `kubectl get hpa` cells
//! the real server printed for each.

use kapi_api_types::autoscaling::{v1, v2};
use kapi_runtime::proto::{Message, envelope};
use kapi_runtime::{Convert, Resource};
use serde_json::{Value, json};

use crate::support;

use support::go_bytes::{assert_same_bytes, both, fixture, json_round_trip};

/// The printer-column names of a kind, Name excluded (the server adds it).
fn column_names<K: Resource>() -> Vec<&'static str> {
    K::INFO.printer_columns.iter().map(|c| c.name).collect()
}

/// The kind's own cells; the Age cell holds the creation timestamp the
/// server turns into an age.
fn cells<K: Resource>(object: &K) -> Vec<Value> {
    object.table_cells().expect("the kind computes its cells")
}

const HPA_COLUMNS: [&str; 6] = [
    "Reference",
    "Targets",
    "MinPods",
    "MaxPods",
    "Replicas",
    "Age",
];

#[test]
fn hpa_v2_with_every_metric_source_and_behavior() {
    let hpa = both::<v2::HorizontalPodAutoscaler>("autoscaling/hpa-v2");
    let spec = &hpa.spec;
    let metrics = spec.metrics.as_deref().expect("metrics");
    let types: Vec<&str> = metrics.iter().map(|m| m.type_.as_str()).collect();
    assert_eq!(
        types,
        [
            "Resource",
            "Resource",
            "ContainerResource",
            "Pods",
            "Object",
            "External",
            "External"
        ]
    );
    let behavior = spec.behavior.as_ref().expect("behavior");
    let down = behavior.scale_down.as_ref().expect("scaleDown");
    assert_eq!(down.stabilization_window_seconds, Some(300));
    assert_eq!(down.select_policy.as_deref(), Some("Min"));
    assert_eq!(down.policies.as_deref().map(<[_]>::len), Some(2));
    // A zero window is a set pointer, written and kept.
    let up = behavior.scale_up.as_ref().expect("scaleUp");
    assert_eq!(up.stabilization_window_seconds, Some(0));
    let status = &hpa.status;
    assert_eq!(status.current_metrics.as_deref().map(<[_]>::len), Some(7));
    assert_eq!(status.conditions.as_deref().map(<[_]>::len), Some(3));
    assert_eq!(column_names::<v2::HorizontalPodAutoscaler>(), HPA_COLUMNS);
    let created = hpa
        .metadata
        .creation_timestamp
        .expect("created")
        .to_string();
    assert_eq!(
        cells(&hpa),
        [
            json!("Deployment/web"),
            json!("cpu: 75%/60%, memory: 180Mi/200Mi + 5 more..."),
            json!("2"),
            json!(10),
            json!(3),
            json!(created),
        ]
    );
}

#[test]
fn hpa_v2_before_the_first_status() {
    // Go writes the nil currentMetrics as null (no omitempty) and the zero
    // desiredReplicas; the server defaulted minReplicas and the CPU metric.
    let hpa = both::<v2::HorizontalPodAutoscaler>("autoscaling/hpa-v2-fresh");
    let go: Value =
        serde_json::from_slice(&fixture("autoscaling/hpa-v2-fresh.json")).expect("JSON");
    assert_eq!(
        go["status"],
        json!({"currentMetrics": null, "desiredReplicas": 0})
    );
    assert_eq!(hpa.status.current_metrics, None);
    assert_eq!(
        cells(&hpa)[..5],
        [
            json!("Deployment/web"),
            json!("cpu: <unknown>/80%"),
            json!("1"),
            json!(3),
            json!(0),
        ]
    );
}

#[test]
fn hpa_created_in_v1_read_as_v2() {
    let hpa = both::<v2::HorizontalPodAutoscaler>("autoscaling/hpa-v1-created-as-v2");
    assert_eq!(
        cells(&hpa)[..5],
        [
            json!("Deployment/web"),
            json!("cpu: 93%/80%"),
            json!("1"),
            json!(5),
            json!(2),
        ]
    );
}

#[test]
fn hpa_created_in_v1() {
    let hpa = both::<v1::HorizontalPodAutoscaler>("autoscaling/hpa-v1-created");
    assert_eq!(hpa.spec.target_cpu_utilization_percentage, Some(80));
    assert_eq!(hpa.status.current_cpu_utilization_percentage, Some(93));
    // v1 declares no columns: the server prints it through the v2 hub.
    assert!(column_names::<v1::HorizontalPodAutoscaler>().is_empty());
    let printed: v2::HorizontalPodAutoscaler = hpa.clone().convert();
    let created = hpa
        .metadata
        .creation_timestamp
        .expect("created")
        .to_string();
    assert_eq!(
        cells(&printed),
        [
            json!("Deployment/web"),
            json!("cpu: 93%/80%"),
            json!("1"),
            json!(5),
            json!(2),
            json!(created),
        ]
    );
}

#[test]
fn hpa_created_in_v2_read_as_v1() {
    // The v2-only parts travel as annotations in v1: the other metrics, their
    // measurements, the conditions and the behavior.
    let hpa = both::<v1::HorizontalPodAutoscaler>("autoscaling/hpa-as-v1");
    let annotations = hpa.metadata.annotations.as_ref().expect("annotations");
    for key in ["metrics", "current-metrics", "conditions", "behavior"] {
        let key = format!("autoscaling.alpha.kubernetes.io/{key}");
        assert!(annotations.contains_key(&key), "{key}");
    }
    assert_eq!(hpa.spec.target_cpu_utilization_percentage, Some(60));
    assert_eq!(hpa.status.current_cpu_utilization_percentage, Some(75));
    // Its Table is the stored v2 object's (the server prints v1 through the
    // hub, from storage): see `tests/autoscaling_versions.rs`.
}

#[test]
fn scale_of_a_deployment() {
    // JSON: Scale carries its own kind and apiVersion (it is no registered
    // kind); every field Go wrote is written back, so none went unknown.
    let bytes = fixture("autoscaling/scale.json");
    let scale: v1::Scale = serde_json::from_slice(&bytes).expect("decodes");
    let go: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(serde_json::to_value(&scale).expect("JSON"), go);
    assert_eq!(scale.spec.replicas, Some(2));
    assert_eq!(scale.status.replicas, 2);
    assert_eq!(scale.status.selector.as_deref(), Some("app=web"));

    // The server reads and writes Scale through its body entry, as JSON.
    let entry = kapi_runtime::scheme::BodyEntry::of::<v1::Scale>("autoscaling", "v1", "Scale");
    assert_eq!((entry.normalize)(go.clone()).expect("normalizes"), go);
    let raw_body = fixture("autoscaling/scale.pb");
    let raw = envelope::decode(&raw_body).expect("envelope").raw;
    let as_json = (entry.decode_proto)(raw).expect("decodes");
    assert_eq!((entry.encode_proto)(as_json).expect("encodes"), raw);

    // Protobuf: Go's bytes, envelope included.
    let body = fixture("autoscaling/scale.pb");
    let unknown = envelope::decode(&body).expect("envelope");
    assert_eq!(
        (unknown.api_version, unknown.kind),
        ("autoscaling/v1", "Scale")
    );
    let typed = v1::Scale::decode(unknown.raw).expect("decodes");
    assert_same_bytes(&typed.encode_to_vec(), unknown.raw, "scale");
    assert_eq!(typed.metadata, scale.metadata);
    assert_eq!(typed.spec, scale.spec);
    assert_eq!(typed.status, scale.status);
}

/// An annotation's JSON decodes into `T` and is written back to Go's exact
/// text (field order, omitted fields, quantities); the protobuf form of each
/// element decodes back to the same value.
fn annotation_round_trip<T>(hpa: &v1::HorizontalPodAutoscaler, key: &str) -> Vec<T>
where
    T: serde::de::DeserializeOwned + serde::Serialize + Message + PartialEq + std::fmt::Debug,
{
    let key = format!("autoscaling.alpha.kubernetes.io/{key}");
    let annotations = hpa.metadata.annotations.as_ref().expect("annotations");
    let text = annotations.get(&key).expect("the annotation");
    let items: Vec<T> = serde_json::from_str(text).unwrap_or_else(|e| panic!("{key}: {e}"));
    assert_eq!(&serde_json::to_string(&items).expect("JSON"), text, "{key}");
    for item in &items {
        let back = T::decode(&item.encode_to_vec()).expect("decodes");
        assert_eq!(&back, item, "{key}: protobuf round trip");
    }
    items
}

#[test]
fn v1_annotations_hold_the_v2_only_parts() {
    use kapi_api_types::autoscaling::v1::metric::{
        HorizontalPodAutoscalerCondition, MetricSpec, MetricStatus,
    };
    let hpa = json_round_trip::<v1::HorizontalPodAutoscaler>("autoscaling/hpa-as-v1");
    // The CPU utilization metric is the v1 field; the six others are here.
    let metrics: Vec<MetricSpec> = annotation_round_trip(&hpa, "metrics");
    assert_eq!(metrics.len(), 6);
    let external = metrics[4].external.as_ref().expect("external");
    assert_eq!(external.metric_name, "queue_messages_ready");
    assert!(external.metric_selector.is_some());
    let current: Vec<MetricStatus> = annotation_round_trip(&hpa, "current-metrics");
    assert_eq!(current.len(), 7);
    // A value quantity Go writes even when zero.
    let external = current[5].external.as_ref().expect("external");
    assert_eq!(external.current_value.0, "0");
    let conditions: Vec<HorizontalPodAutoscalerCondition> =
        annotation_round_trip(&hpa, "conditions");
    assert_eq!(conditions.len(), 3);

    let created = json_round_trip::<v1::HorizontalPodAutoscaler>("autoscaling/hpa-v1-created");
    let current: Vec<MetricStatus> = annotation_round_trip(&created, "current-metrics");
    let cpu = current[0].resource.as_ref().expect("resource");
    assert_eq!(cpu.current_average_utilization, Some(93));
}
