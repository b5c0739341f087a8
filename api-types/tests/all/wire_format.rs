//! Objects leave in Go's field order with Go's omission rules, and Secrets fold
//! `stringData` into base64 `data`.

use crate::common;

use common::{admit_clean, fixture, object};
use kapi_api_types::core::v1::pod::status::{ContainerStatus, PodCondition};
use kapi_api_types::core::v1::{Pod, Secret};
use serde_json::{Value, json};

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect()
}

/// Whether `wanted` appear in `all` in this relative order.
fn in_order(all: &[&str], wanted: &[&str]) -> bool {
    let positions: Vec<usize> = wanted
        .iter()
        .map(|w| {
            all.iter()
                .position(|k| k == w)
                .unwrap_or_else(|| panic!("{w} missing"))
        })
        .collect();
    positions.windows(2).all(|p| p[0] < p[1])
}

#[test]
fn pod_fields_leave_in_go_struct_order() {
    let pod = admit_clean::<Pod>(fixture("pod.json"));
    assert_eq!(keys(&pod), ["metadata", "spec", "status"]);
    let spec = keys(&pod["spec"]);
    assert_eq!(
        spec[..4],
        ["volumes", "initContainers", "containers", "restartPolicy"]
    );
    assert!(in_order(
        &spec,
        &[
            "containers",
            "restartPolicy",
            "terminationGracePeriodSeconds",
            "activeDeadlineSeconds",
            "dnsPolicy",
            "nodeSelector",
            "serviceAccountName",
            "automountServiceAccountToken",
            "shareProcessNamespace",
            "securityContext",
            "imagePullSecrets",
            "hostname",
            "subdomain",
            "affinity",
            "schedulerName",
            "tolerations",
            "hostAliases",
            "priorityClassName",
            "dnsConfig",
            "readinessGates",
            "runtimeClassName",
            "enableServiceLinks",
            "preemptionPolicy",
            "topologySpreadConstraints",
            "setHostnameAsFQDN",
            "os",
            "hostUsers",
            "schedulingGates",
        ]
    ));
    let container = keys(&pod["spec"]["containers"][0]);
    assert_eq!(
        container,
        [
            "name",
            "image",
            "workingDir",
            "ports",
            "env",
            "resources",
            "resizePolicy",
            "volumeMounts",
            "volumeDevices",
            "livenessProbe",
            "readinessProbe",
            "startupProbe",
            "lifecycle",
            "terminationMessagePath",
            "terminationMessagePolicy",
            "imagePullPolicy",
            "securityContext",
        ]
    );
    let probe = keys(&pod["spec"]["containers"][0]["livenessProbe"]);
    assert_eq!(
        probe,
        [
            "httpGet",
            "initialDelaySeconds",
            "timeoutSeconds",
            "periodSeconds",
            "successThreshold",
            "failureThreshold"
        ]
    );
}

#[test]
fn go_zero_values_are_omitted_but_value_structs_are_not() {
    let pod = admit_clean::<Pod>(object(json!({
        "metadata": {"name": "p"},
        "spec": {
            "hostNetwork": false,
            "nodeName": "",
            "tolerations": [],
            "automountServiceAccountToken": false,
            "containers": [{"name": "c", "image": "x:1", "stdin": false, "args": [], "resources": null}]
        },
        "status": null
    })));
    let spec = &pod["spec"];
    assert!(
        spec.get("hostNetwork").is_none(),
        "false bool with omitempty"
    );
    assert!(
        spec.get("nodeName").is_none(),
        "empty string with omitempty"
    );
    assert!(
        spec.get("tolerations").is_none(),
        "empty list with omitempty"
    );
    assert_eq!(
        spec["automountServiceAccountToken"], false,
        "pointer fields keep false"
    );
    let container = &spec["containers"][0];
    assert!(container.get("stdin").is_none());
    assert!(container.get("args").is_none());
    assert_eq!(
        container["resources"],
        json!({}),
        "a struct value is always written"
    );
}

#[test]
fn status_structs_write_null_times_like_go() {
    let condition: PodCondition =
        serde_json::from_value(json!({"type": "Ready", "status": "True"})).expect("condition");
    assert_eq!(
        serde_json::to_value(&condition).expect("encode"),
        json!({"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": null})
    );
    let status: ContainerStatus = serde_json::from_value(json!({
        "name": "web", "state": {"running": {"startedAt": "2024-05-01T12:00:00Z"}}, "ready": true,
        "restartCount": 0, "image": "nginx:1.27", "imageID": "docker.io/library/nginx@sha256:abc",
        "containerID": "containerd://123", "started": true
    }))
    .expect("status");
    let encoded = serde_json::to_value(&status).expect("encode");
    assert_eq!(
        keys(&encoded),
        [
            "name",
            "state",
            "lastState",
            "ready",
            "restartCount",
            "image",
            "imageID",
            "containerID",
            "started"
        ]
    );
    assert_eq!(encoded["lastState"], json!({}));
}

#[test]
fn secret_string_data_is_folded_into_base64_data() {
    let secret = admit_clean::<Secret>(fixture("secret.json"));
    assert_eq!(keys(&secret), ["metadata", "data", "type"]);
    assert_eq!(
        secret["data"],
        json!({"password": "czNjcjN0IQ==", "username": "cm9vdA=="}),
        "stringData wins over data for the same key"
    );
    assert!(secret.get("stringData").is_none());
}

#[test]
fn secret_data_must_be_base64() {
    let result = common::try_admit::<Secret>(object(
        json!({"metadata": {"name": "s"}, "data": {"k": "not base64!"}}),
    ));
    let error = result.expect_err("bad base64");
    assert!(error.contains("illegal base64 data"), "{error}");
}

#[test]
fn secret_without_string_data_is_unchanged() {
    let secret = admit_clean::<Secret>(object(json!({
        "metadata": {"name": "tls"},
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"}
    })));
    assert_eq!(secret["type"], "kubernetes.io/tls");
    assert_eq!(secret["data"]["tls.crt"], "Y2VydA==");
}

/// Go writes a nil slice without `omitempty` as `null` (kube-controller-
/// manager's TokenRequests send `"audiences": null`); upstream's decoder
/// reads it as empty, and so must ours, for every list a kind always has.
#[test]
fn null_lists_read_as_empty() {
    use kapi_api_types::authentication::v1::TokenRequest;
    use kapi_api_types::rbac::v1::ClusterRole;
    let request: TokenRequest = serde_json::from_value(json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"audiences": null, "boundObjectRef": null}}))
    .expect("a TokenRequest with null audiences");
    assert!(request.spec.audiences.is_empty());
    let role: ClusterRole = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "r"}, "rules": [{"verbs": null, "apiGroups": [""]}]}))
    .expect("a ClusterRole with null verbs");
    assert!(role.rules[0].verbs.is_empty());
    let pod: Pod = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p"}, "spec": {"containers": null}}))
    .expect("a Pod with null containers");
    assert!(pod.spec.containers.is_empty());
}
