//! Conversions between the versions of a kind, through its hub:
//!
//! - HorizontalPodAutoscaler autoscaling/v1 <-> autoscaling/v2 (the hub and
//!   storage version) gives exactly what the real kube-apiserver 1.32 serves for
//!   the same stored object in the other version (`tests/fixtures/autoscaling`),
//!   annotations included;
//! - random valid autoscalers round-trip: a (defaulted) v1 object through v2
//!   comes back equal, and a v2 object through v1 comes back equal but for the
//!   CPU utilization target, which v1 carries in its own field and upstream puts
//!   back after the other metrics;
//! - every kind served through a hub survives any decodable object (random
//!   protobuf messages) through both conversions without a panic.

use crate::support;

use kapi_api_types::autoscaling::{v1, v2};
use kapi_runtime::scheme::Scheme;
use kapi_runtime::{ApiType, Convert, Quantity};
use serde_json::{Value, json};
use support::Rng;
use support::go_bytes::{assert_same_key_order, assert_written_in_go_order};

fn fixture_text(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/autoscaling/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn fixture<T: serde::de::DeserializeOwned>(name: &str) -> (T, Value) {
    let bytes = fixture_text(name);
    let typed = serde_json::from_slice(&bytes).expect("decodes");
    let value = serde_json::from_slice(&bytes).expect("JSON");
    (typed, value)
}

fn json_of<T: serde::Serialize>(object: &T, kind: &str, api_version: &str) -> Value {
    let mut value = serde_json::to_value(object).expect("serializes");
    let map = value.as_object_mut().expect("an object");
    map.insert("kind".into(), json!(kind));
    map.insert("apiVersion".into(), json!(api_version));
    value
}

/// The stored (v2) object of each fixture pair reads in v1 exactly as the real
/// server served it, annotations and all; and back in v2 nothing is lost.
#[test]
fn stored_autoscalers_read_in_v1_as_kube_apiserver_serves_them() {
    for (stored, as_v1) in [
        ("hpa-v2", "hpa-as-v1"),
        ("hpa-v1-created-as-v2", "hpa-v1-created"),
    ] {
        let (hub, _) = fixture::<v2::HorizontalPodAutoscaler>(stored);
        let (_, go_v1) = fixture::<v1::HorizontalPodAutoscaler>(as_v1);
        let ours: v1::HorizontalPodAutoscaler = hub.clone().convert();
        assert_eq!(
            json_of(&ours, "HorizontalPodAutoscaler", "autoscaling/v1"),
            go_v1,
            "{stored} in v1"
        );
        // As the server writes it, in Go's key order.
        assert_written_in_go_order(&ours, &fixture_text(as_v1), &format!("{stored} in v1"));
        let back: v2::HorizontalPodAutoscaler = ours.convert();
        assert_eq!(back, through_v1(hub), "{stored} through v1");
    }
}

/// A v1 write carrying the annotations (here: current metrics with zero
/// values, written through v1's `/status`) is stored in v2 as the real server
/// stored it: the annotation becomes the status's metrics and is dropped.
#[test]
fn a_v1_write_is_stored_in_v2_as_kube_apiserver_stores_it() {
    let (written, _) = fixture::<v1::HorizontalPodAutoscaler>("hpa-v1-annotated");
    let (_, go_v2) = fixture::<v2::HorizontalPodAutoscaler>("hpa-v1-annotated-as-v2");
    let ours: v2::HorizontalPodAutoscaler = written.convert();
    let ours = json_of(&ours, "HorizontalPodAutoscaler", "autoscaling/v2");
    // What the write changed besides the conversion (revision, managed fields)
    // is the server's, not the conversion's.
    assert_eq!(ours["spec"], go_v2["spec"]);
    assert_eq!(ours["status"], go_v2["status"]);
    for part in ["spec", "status"] {
        let text = |v: &Value| serde_json::to_vec(&v[part]).expect("JSON");
        assert_same_key_order(&text(&ours), &text(&go_v2), part);
    }
    assert_eq!(
        ours["metadata"].get("annotations"),
        go_v2["metadata"].get("annotations")
    );
}

/// What a trip through v1 does to a v2 object, as upstream converts: the CPU
/// utilization target moves after the other metrics (v1 keeps it in its own
/// field), and the values v1 holds as plain (non-optional) quantities come back
/// as zero where they were unset.
fn through_v1(hub: v2::HorizontalPodAutoscaler) -> v2::HorizontalPodAutoscaler {
    let mut hub = cpu_target_last(hub);
    let zero = || Some(Quantity("0".to_owned()));
    for m in hub.spec.metrics.iter_mut().flatten() {
        if let Some(o) = m.object.as_mut() {
            o.target.value = o.target.value.take().or_else(zero);
        }
        if let Some(p) = m.pods.as_mut() {
            p.target.average_value = p.target.average_value.take().or_else(zero);
        }
    }
    for m in hub.status.current_metrics.iter_mut().flatten() {
        if let Some(o) = m.object.as_mut() {
            o.current.value = o.current.value.take().or_else(zero);
        }
        if let Some(p) = m.pods.as_mut() {
            p.current.average_value = p.current.average_value.take().or_else(zero);
        }
        if let Some(r) = m.resource.as_mut() {
            r.current.average_value = r.current.average_value.take().or_else(zero);
        }
        if let Some(r) = m.container_resource.as_mut() {
            r.current.average_value = r.current.average_value.take().or_else(zero);
        }
        if let Some(e) = m.external.as_mut() {
            e.current.value = e.current.value.take().or_else(zero);
        }
    }
    hub
}

/// `hub` with its CPU utilization targets after the other metrics, where a
/// trip through v1 puts them.
fn cpu_target_last(mut hub: v2::HorizontalPodAutoscaler) -> v2::HorizontalPodAutoscaler {
    if let Some(metrics) = hub.spec.metrics.as_mut() {
        let is_cpu_target = |m: &v2::metric::MetricSpec| {
            m.type_ == "Resource"
                && m.resource
                    .as_ref()
                    .is_some_and(|r| r.name == "cpu" && r.target.average_utilization.is_some())
        };
        let (cpu, others): (Vec<_>, Vec<_>) = metrics.drain(..).partition(is_cpu_target);
        metrics.extend(others);
        metrics.extend(cpu.into_iter().take(1));
    }
    hub
}

trait Pick {
    fn chance(&mut self, percent: u64) -> bool;
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str;
    fn word(&mut self) -> String;
    fn quantity(&mut self) -> Quantity;
    fn small(&mut self) -> i32;
}

impl Pick for Rng {
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
    fn word(&mut self) -> String {
        format!("w{}", self.below(1000))
    }
    fn quantity(&mut self) -> Quantity {
        Quantity(self.pick(&["1", "250m", "500Mi", "3", "10k"]).to_owned())
    }
    fn small(&mut self) -> i32 {
        1 + self.below(99) as i32
    }
}

fn identifier(rng: &mut Rng) -> v2::metric::MetricIdentifier {
    v2::metric::MetricIdentifier {
        name: rng.word(),
        selector: rng.chance(50).then(|| kapi_runtime::meta::LabelSelector {
            match_labels: Some([("app".to_owned(), rng.word())].into()),
            ..Default::default()
        }),
    }
}

fn reference(rng: &mut Rng) -> v2::horizontalpodautoscaler::CrossVersionObjectReference {
    v2::horizontalpodautoscaler::CrossVersionObjectReference {
        kind: rng
            .pick(&["Deployment", "Service", "StatefulSet"])
            .to_owned(),
        name: rng.word(),
        api_version: rng.chance(80).then(|| "apps/v1".to_owned()),
    }
}

/// A target valid for its type, as validation requires: a value for `Value`,
/// an average for `AverageValue`, a utilization for `Utilization`.
fn target(rng: &mut Rng, types: &[&str]) -> v2::metric::MetricTarget {
    let type_ = rng.pick(types).to_owned();
    let mut t = v2::metric::MetricTarget {
        type_: type_.clone(),
        ..Default::default()
    };
    match type_.as_str() {
        "Value" => t.value = Some(rng.quantity()),
        "AverageValue" => t.average_value = Some(rng.quantity()),
        _ => t.average_utilization = Some(rng.small()),
    }
    t
}

fn metric_spec(rng: &mut Rng, cpu_target_taken: &mut bool) -> v2::metric::MetricSpec {
    use v2::metric::*;
    let mut m = MetricSpec::default();
    match rng.below(5) {
        0 => {
            m.type_ = "Object".into();
            m.object = Some(ObjectMetricSource {
                described_object: reference(rng),
                target: target(rng, &["Value", "AverageValue"]),
                metric: identifier(rng),
            });
        }
        1 => {
            m.type_ = "Pods".into();
            m.pods = Some(PodsMetricSource {
                metric: identifier(rng),
                target: target(rng, &["AverageValue"]),
            });
        }
        2 => {
            m.type_ = "Resource".into();
            // CPU as one utilization target at most, as v1 has room for one
            // (upstream takes v1's target from the first CPU metric whatever
            // its type, so a CPU average-value metric next to a utilization
            // target does not survive v1; neither does a second target).
            let name = if *cpu_target_taken {
                "memory"
            } else {
                rng.pick(&["cpu", "memory"])
            };
            let t = if name == "cpu" {
                *cpu_target_taken = true;
                target(rng, &["Utilization"])
            } else {
                target(rng, &["Utilization", "AverageValue"])
            };
            m.resource = Some(ResourceMetricSource {
                name: name.to_owned(),
                target: t,
            });
        }
        3 => {
            m.type_ = "ContainerResource".into();
            m.container_resource = Some(ContainerResourceMetricSource {
                name: rng.pick(&["cpu", "memory"]).to_owned(),
                target: target(rng, &["Utilization", "AverageValue"]),
                container: rng.word(),
            });
        }
        _ => {
            m.type_ = "External".into();
            m.external = Some(ExternalMetricSource {
                metric: identifier(rng),
                target: target(rng, &["Value", "AverageValue"]),
            });
        }
    }
    m
}

fn metric_status(rng: &mut Rng) -> v2::metric::MetricStatus {
    use v2::metric::*;
    let current = |rng: &mut Rng, value: bool, utilization: bool| MetricValueStatus {
        value: value.then(|| rng.quantity()),
        average_value: Some(rng.quantity()),
        average_utilization: (utilization && rng.chance(50)).then(|| rng.small()),
    };
    let mut m = MetricStatus::default();
    match rng.below(5) {
        0 => {
            m.type_ = "Object".into();
            m.object = Some(ObjectMetricStatus {
                metric: identifier(rng),
                current: current(rng, true, false),
                described_object: reference(rng),
            });
        }
        1 => {
            m.type_ = "Pods".into();
            m.pods = Some(PodsMetricStatus {
                metric: identifier(rng),
                current: current(rng, false, false),
            });
        }
        2 => {
            m.type_ = "Resource".into();
            m.resource = Some(ResourceMetricStatus {
                name: rng.pick(&["cpu", "memory"]).to_owned(),
                current: current(rng, false, true),
            });
        }
        3 => {
            m.type_ = "ContainerResource".into();
            m.container_resource = Some(ContainerResourceMetricStatus {
                name: rng.pick(&["cpu", "memory"]).to_owned(),
                current: current(rng, false, true),
                container: rng.word(),
            });
        }
        _ => {
            m.type_ = "External".into();
            m.external = Some(ExternalMetricStatus {
                metric: identifier(rng),
                current: current(rng, true, false),
            });
        }
    }
    m
}

fn random_v2(rng: &mut Rng) -> v2::HorizontalPodAutoscaler {
    use v2::horizontalpodautoscaler::*;
    let mut cpu_taken = false;
    let metrics = (0..rng.below(5))
        .map(|_| metric_spec(rng, &mut cpu_taken))
        .collect::<Vec<_>>();
    let rules = |rng: &mut Rng| HPAScalingRules {
        stabilization_window_seconds: rng.chance(50).then(|| rng.small()),
        select_policy: rng
            .chance(50)
            .then(|| rng.pick(&["Max", "Min", "Disabled"]).to_owned()),
        policies: rng.chance(70).then(|| {
            (0..1 + rng.below(2))
                .map(|_| HPAScalingPolicy {
                    type_: rng.pick(&["Pods", "Percent"]).to_owned(),
                    value: rng.small(),
                    period_seconds: rng.small(),
                })
                .collect()
        }),
    };
    let mut hpa = v2::HorizontalPodAutoscaler {
        metadata: kapi_runtime::meta::ObjectMeta {
            name: Some(rng.word()),
            namespace: Some(rng.word()),
            annotations: rng
                .chance(30)
                .then(|| [("note".to_owned(), rng.word())].into()),
            ..Default::default()
        },
        spec: HorizontalPodAutoscalerSpec {
            scale_target_ref: reference(rng),
            min_replicas: rng.chance(70).then(|| rng.small()),
            max_replicas: 100 + rng.small(),
            metrics: (!metrics.is_empty()).then_some(metrics),
            behavior: rng.chance(50).then(|| HorizontalPodAutoscalerBehavior {
                scale_up: rng.chance(60).then(|| rules(rng)),
                scale_down: rng.chance(60).then(|| rules(rng)),
            }),
        },
        status: HorizontalPodAutoscalerStatus {
            observed_generation: rng.chance(50).then(|| i64::from(rng.small())),
            last_scale_time: None,
            current_replicas: rng.chance(60).then(|| rng.small()),
            desired_replicas: rng.small(),
            current_metrics: rng
                .chance(60)
                .then(|| (0..1 + rng.below(3)).map(|_| metric_status(rng)).collect()),
            conditions: rng.chance(50).then(|| {
                vec![HorizontalPodAutoscalerCondition {
                    type_: rng.pick(&["AbleToScale", "ScalingActive"]).to_owned(),
                    status: rng.pick(&["True", "False"]).to_owned(),
                    last_transition_time: None,
                    reason: rng.chance(50).then(|| rng.word()),
                    message: rng.chance(50).then(|| rng.word()),
                }]
            }),
        },
    };
    hpa.apply_defaults();
    hpa
}

#[test]
fn random_autoscalers_round_trip_through_the_other_version() {
    let mut rng = Rng(0x0a11_5ca1_e5ee_d001);
    for case in 0..2000 {
        let hub = random_v2(&mut rng);
        let v1_object: v1::HorizontalPodAutoscaler = hub.clone().convert();
        let back: v2::HorizontalPodAutoscaler = v1_object.clone().convert();
        assert_eq!(back, through_v1(hub.clone()), "case {case}: v2 -> v1 -> v2");
        // A v1 object (as written by a v1 client: defaulted) through the hub.
        let mut v1_written = v1_object.clone();
        v1_written.apply_defaults();
        let again: v1::HorizontalPodAutoscaler =
            Convert::<v2::HorizontalPodAutoscaler>::convert(v1_written.clone()).convert();
        assert_eq!(again, v1_written, "case {case}: v1 -> v2 -> v1");
    }
}

#[test]
fn every_version_served_through_a_hub_converts_any_object_without_panicking() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let linked: Vec<_> = scheme.entries().filter(|e| e.hub().is_some()).collect();
    assert!(
        linked
            .iter()
            .any(|e| e.info.group == "autoscaling" && e.info.version == "v1"),
        "autoscaling/v1 is served through its hub"
    );
    let mut rng = Rng(0x00c0_ffee_0bad_f00d);
    // The generator writes only what a Go client could send, so every message
    // must decode: one that does not is a decoder bug, not a case to skip.
    let (mut converted, mut undecodable) = (0, Vec::new());
    for entry in linked {
        let kind = entry.info.kind;
        let proto = entry
            .proto
            .unwrap_or_else(|| panic!("{kind} is served through a hub but has no protobuf"));
        let storage = scheme.storage_entry(entry).expect("hub installed");
        let storage_proto = storage.proto.expect("the hub speaks protobuf");
        for case in 0..300 {
            let (name, fields) = proto.describe();
            match proto.decode(&support::random::random_message(&mut rng, name, &fields)) {
                Ok(object) => {
                    let in_hub = entry.to_hub(object).expect("to the hub");
                    entry.to_served(in_hub).expect("from the hub");
                    converted += 1;
                }
                Err(e) => undecodable.push(format!("{kind} case {case}: {e}")),
            }
            let (name, fields) = storage_proto.describe();
            match storage_proto.decode(&support::random::random_message(&mut rng, name, &fields)) {
                Ok(object) => {
                    let served = entry.to_served(object).expect("from the hub");
                    entry
                        .to_hub(served)
                        .unwrap_or_else(|e| panic!("case {case}: {e}"));
                    converted += 1;
                }
                Err(e) => undecodable.push(format!("{kind} hub case {case}: {e}")),
            }
        }
    }
    assert!(
        undecodable.is_empty(),
        "{} generated messages do not decode:\n{}",
        undecodable.len(),
        undecodable.join("\n")
    );
    assert!(converted >= 600, "only {converted} objects converted");
}
