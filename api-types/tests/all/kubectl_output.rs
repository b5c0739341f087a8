//! Objects as kubectl's Go code writes them (`kubectl create ... --dry-run=client
//! -o json`, kubectl 1.32) decode and encode back to the same JSON, key order
//! included, and pass admission.

use crate::common;

use common::{admit_clean, fixture};
use kapi_api_types::apps::v1::Deployment;
use kapi_api_types::core::v1::{ConfigMap, Namespace, Secret, Service};
use kapi_runtime::Resource;
use serde_json::{Map, Value};

/// The fixture without `apiVersion`/`kind` (the server writes those). Go's
/// `creationTimestamp: null` for an unset ObjectMeta time stays: kapi writes it too.
fn go_written(name: &str) -> Map<String, Value> {
    let mut object = fixture(name);
    object.shift_remove("apiVersion");
    object.shift_remove("kind");
    object
}

/// Decoding and encoding without defaults gives back Go's bytes.
fn round_trips<T: Resource>(name: &str) {
    let input = go_written(name);
    let typed: T = serde_json::from_value(Value::Object(input.clone())).expect("decodes");
    let output = serde_json::to_string(&typed).expect("encodes");
    assert_eq!(
        output,
        serde_json::to_string(&input).expect("encodes"),
        "{name}"
    );
    admit_clean::<T>(input);
}

#[test]
fn kubectl_objects_round_trip() {
    round_trips::<Deployment>("kubectl-deployment.json");
    round_trips::<Service>("kubectl-service.json");
    round_trips::<Service>("kubectl-service-lb.json");
    round_trips::<Service>("kubectl-service-externalname.json");
    round_trips::<Secret>("kubectl-secret.json");
    round_trips::<Secret>("kubectl-secret-docker.json");
    round_trips::<ConfigMap>("kubectl-configmap.json");
    round_trips::<Namespace>("kubectl-namespace.json");
}
