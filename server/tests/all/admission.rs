//! The built-in admission plugins, compared with kube-apiserver 1.32 by curl:
//! objects come back as the reference returns them (bodies recorded under
//! tests/fixtures/admission/), refusals carry its Status.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::common::{Harness, harness};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/admission/");

fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{FIXTURES}{name}")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A harness with namespace `ns` and its `default` ServiceAccount.
async fn with_namespace(ns: &str) -> Harness {
    let h = harness().await;
    create_namespace(&h, ns).await;
    h
}

async fn create_namespace(h: &Harness, ns: &str) {
    let (code, v) = h
        .call(
            "POST",
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = h
        .call(
            "POST",
            &format!("/api/v1/namespaces/{ns}/serviceaccounts"),
            json!({"metadata": {"name": "default"}}),
        )
        .await;
    assert_eq!(code, 201, "{v}");
}

fn pod(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("containers").is_none() {
        spec["containers"] = json!([{"name": "c", "image": "nginx"}]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

/// Masks what differs between two servers: generated ids, times, revisions,
/// allocated cluster IPs, the random suffix of the token volume, and managed
/// fields.
fn masked(mut object: Value) -> Value {
    if object["spec"]["clusterIP"].is_string() {
        object["spec"]["clusterIP"] = json!("<ip>");
        object["spec"]["clusterIPs"] = json!(["<ip>"]);
    }
    let uid = object["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let meta = object["metadata"].as_object_mut().unwrap();
    // (retain keeps the order; remove would swap the last key in)
    meta.retain(|key, _| {
        ![
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
        ]
        .contains(&key.as_str())
    });
    fn walk(value: &mut Value, uid: &str) {
        match value {
            Value::String(text) => {
                if !uid.is_empty() && text == uid {
                    *text = "<uid>".into();
                } else if let Some(rest) = text.strip_prefix("kube-api-access-")
                    && rest.len() == 5
                {
                    *text = "kube-api-access-<random>".into();
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, uid)),
            Value::Object(map) => map.values_mut().for_each(|v| walk(v, uid)),
            _ => {}
        }
    }
    walk(&mut object, &uid);
    object
}

#[tokio::test]
async fn created_objects_match_the_reference() {
    let h = with_namespace("admission").await;
    for (kind, path) in [
        ("pod", "/api/v1/namespaces/admission/pods"),
        (
            "deployment",
            "/apis/apps/v1/namespaces/admission/deployments",
        ),
        ("job", "/apis/batch/v1/namespaces/admission/jobs"),
        ("pvc", "/api/v1/namespaces/admission/persistentvolumeclaims"),
        ("service", "/api/v1/namespaces/admission/services"),
    ] {
        let request = fixture(&format!("{kind}.request.json"));
        let (code, created) = h.call("POST", path, request).await;
        assert_eq!(code, 201, "{kind}: {created}");
        let expected = masked(fixture(&format!("{kind}.response.json")));
        assert_eq!(
            serde_json::to_string_pretty(&masked(created)).unwrap(),
            serde_json::to_string_pretty(&expected).unwrap(),
            "{kind}"
        );
    }
}

#[tokio::test]
async fn a_pod_needs_its_service_account() {
    let h = harness().await;
    let (code, v) = h
        .call(
            "POST",
            "/api/v1/namespaces",
            json!({"metadata": {"name": "bare"}}),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = h
        .call("POST", "/api/v1/namespaces/bare/pods", pod("p", json!({})))
        .await;
    assert_eq!(code, 403);
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "pods \"p\" is forbidden: error looking up service account bare/default: serviceaccount \"default\" not found",
            "reason": "Forbidden", "details": {"name": "p", "kind": "pods"}, "code": 403})
    );
    // A generated name is not made yet: the error names the prefix.
    let body = json!({"metadata": {"generateName": "p2-"},
        "spec": {"serviceAccountName": "nosa", "containers": [{"name": "c", "image": "x"}]}});
    let (code, v) = h
        .call("POST", "/api/v1/namespaces/default/pods", body)
        .await;
    assert_eq!(code, 403);
    assert_eq!(
        v["message"],
        "pods \"p2-\" is forbidden: error looking up service account default/nosa: serviceaccount \"nosa\" not found"
    );
    assert_eq!(v["details"], json!({"name": "p2-", "kind": "pods"}));
    // Refused before validation, as upstream (admission comes first).
    let body = json!({"metadata": {"name": "p3"}, "spec": {"serviceAccountName": "nosa", "containers": []}});
    let (code, _) = h
        .call("POST", "/api/v1/namespaces/default/pods", body)
        .await;
    assert_eq!(code, 403);
}

#[tokio::test]
async fn the_token_volume_is_mounted_unless_opted_out() {
    let h = harness().await;
    let uri = "/api/v1/namespaces/default/pods";
    let body = pod(
        "p",
        json!({"initContainers": [{"name": "i", "image": "busybox"}],
            "containers": [{"name": "c", "image": "nginx"},
                {"name": "d", "image": "nginx", "volumeMounts": [{"name": "v", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
            "volumes": [{"name": "v", "emptyDir": {}}]}),
    );
    let (code, p) = h.call("POST", uri, body).await;
    assert_eq!(code, 201, "{p}");
    let volume = p["spec"]["volumes"][1]["name"].as_str().unwrap().to_owned();
    assert!(
        volume.starts_with("kube-api-access-") && volume.len() == 21,
        "{volume}"
    );
    let mount = json!({"name": volume, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"});
    assert_eq!(
        p["spec"]["initContainers"][0]["volumeMounts"],
        json!([mount])
    );
    assert_eq!(p["spec"]["containers"][0]["volumeMounts"], json!([mount]));
    // A container with something at the path keeps it.
    assert_eq!(
        p["spec"]["containers"][1]["volumeMounts"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(p["spec"]["serviceAccountName"], "default");
    assert_eq!(p["spec"]["serviceAccount"], "default");

    // The pod opts out.
    let (code, p) = h
        .call(
            "POST",
            uri,
            pod("q", json!({"automountServiceAccountToken": false})),
        )
        .await;
    assert_eq!(code, 201, "{p}");
    assert!(p["spec"].get("volumes").is_none(), "{p}");
    assert!(
        p["spec"]["containers"][0].get("volumeMounts").is_none(),
        "{p}"
    );

    // The account opts out, the pod opts back in; its pull secrets are the pod's.
    let sa = json!({"metadata": {"name": "quiet"}, "automountServiceAccountToken": false,
        "imagePullSecrets": [{"name": "registry"}]});
    let (code, _) = h
        .call("POST", "/api/v1/namespaces/default/serviceaccounts", sa)
        .await;
    assert_eq!(code, 201);
    let (code, p) = h
        .call(
            "POST",
            uri,
            pod("r", json!({"serviceAccountName": "quiet"})),
        )
        .await;
    assert_eq!(code, 201, "{p}");
    assert!(p["spec"].get("volumes").is_none(), "{p}");
    assert_eq!(p["spec"]["imagePullSecrets"], json!([{"name": "registry"}]));
    let body = pod(
        "s",
        json!({"serviceAccountName": "quiet", "automountServiceAccountToken": true,
            "imagePullSecrets": [{"name": "mine"}]}),
    );
    let (code, p) = h.call("POST", uri, body).await;
    assert_eq!(code, 201, "{p}");
    assert_eq!(p["spec"]["volumes"].as_array().unwrap().len(), 1);
    assert_eq!(p["spec"]["imagePullSecrets"], json!([{"name": "mine"}]));

    // A dry run is admitted the same way.
    let (code, p) = h
        .call("POST", &format!("{uri}?dryRun=All"), pod("t", json!({})))
        .await;
    assert_eq!(code, 201, "{p}");
    assert_eq!(p["spec"]["volumes"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn pods_tolerate_unready_nodes_for_five_minutes() {
    let h = harness().await;
    let uri = "/api/v1/namespaces/default/pods";
    let (_, p) = h.call("POST", uri, pod("p", json!({}))).await;
    assert_eq!(
        p["spec"]["tolerations"],
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ])
    );
    let (_, p) = h
        .call(
            "POST",
            uri,
            pod("q", json!({"tolerations": [{"operator": "Exists"}]})),
        )
        .await;
    assert_eq!(p["spec"]["tolerations"], json!([{"operator": "Exists"}]));
}

#[tokio::test]
async fn pods_get_their_priority_from_their_class() {
    let h = harness().await;
    let pods = "/api/v1/namespaces/default/pods";
    let classes = "/apis/scheduling.k8s.io/v1/priorityclasses";
    let (_, p) = h.call("POST", pods, pod("p", json!({}))).await;
    assert_eq!(p["spec"]["priority"], 0);
    assert_eq!(p["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert!(p["spec"].get("priorityClassName").is_none());

    let (_, p) = h
        .call(
            "POST",
            pods,
            pod("q", json!({"priorityClassName": "system-node-critical"})),
        )
        .await;
    assert_eq!(p["spec"]["priority"], 2_000_001_000);

    let (code, v) = h
        .call(
            "POST",
            pods,
            pod("r", json!({"priorityClassName": "nopc", "containers": []})),
        )
        .await;
    assert_eq!(code, 403);
    assert_eq!(
        v["message"],
        "pods \"r\" is forbidden: no PriorityClass with name nopc was found"
    );

    let never = json!({"metadata": {"name": "never"}, "value": 1000, "preemptionPolicy": "Never"});
    assert_eq!(h.call("POST", classes, never).await.0, 201);
    let (code, v) = h
        .call(
            "POST",
            pods,
            pod("s", json!({"priorityClassName": "never", "priority": 5})),
        )
        .await;
    assert_eq!(code, 403);
    assert_eq!(
        v["message"],
        "pods \"s\" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name"
    );
    let body = pod(
        "s",
        json!({"priorityClassName": "never", "preemptionPolicy": "PreemptLowerPriority"}),
    );
    let (code, v) = h.call("POST", pods, body).await;
    assert_eq!(code, 403);
    assert_eq!(
        v["message"],
        "pods \"s\" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name"
    );

    let default = json!({"metadata": {"name": "def"}, "value": 7, "globalDefault": true});
    assert_eq!(h.call("POST", classes, default).await.0, 201);
    let (_, p) = h.call("POST", pods, pod("t", json!({}))).await;
    assert_eq!(p["spec"]["priorityClassName"], "def");
    assert_eq!(p["spec"]["priority"], 7);
    let second = json!({"metadata": {"name": "def2"}, "value": 8, "globalDefault": true});
    let (code, v) = h.call("POST", classes, second).await;
    assert_eq!(code, 403);
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "priorityclasses.scheduling.k8s.io \"def2\" is forbidden: PriorityClass def is already marked as default. Only one default can exist",
            "reason": "Forbidden",
            "details": {"name": "def2", "group": "scheduling.k8s.io", "kind": "priorityclasses"},
            "code": 403})
    );
}

#[tokio::test]
async fn system_priority_classes_exist_and_stay() {
    let h = harness().await;
    let classes = "/apis/scheduling.k8s.io/v1/priorityclasses";
    let (code, pc) = h
        .call(
            "GET",
            &format!("{classes}/system-node-critical"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(pc["value"], 2_000_001_000);
    assert_eq!(
        pc["description"],
        "Used for system critical pods that must not be moved from their current node."
    );
    assert_eq!(pc["preemptionPolicy"], "PreemptLowerPriority");
    let (code, pc) = h
        .call(
            "GET",
            &format!("{classes}/system-cluster-critical"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(pc["value"], 2_000_000_000);

    let (code, v) = h
        .call(
            "DELETE",
            &format!("{classes}/system-node-critical"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 403);
    assert_eq!(
        v["message"],
        "priorityclasses.scheduling.k8s.io \"system-node-critical\" is forbidden: this is a system priority class and cannot be deleted"
    );
    let (code, v) = h
        .call(
            "POST",
            classes,
            json!({"metadata": {"name": "system-mine"}, "value": 8}),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        v["message"],
        "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"
    );
}

#[tokio::test]
async fn nothing_is_created_in_a_missing_or_terminating_namespace() {
    let h = harness().await;
    // Missing: 404 for the namespace, before validation.
    let (code, v) = h
        .call(
            "POST",
            "/api/v1/namespaces/nowhere/pods",
            pod("p", json!({"containers": []})),
        )
        .await;
    assert_eq!(code, 404, "{v}");
    assert_eq!(v["message"], "namespaces \"nowhere\" not found");

    let ns = json!({"metadata": {"name": "leaving", "finalizers": ["admission.test/hold"]}});
    assert_eq!(h.call("POST", "/api/v1/namespaces", ns).await.0, 201);
    let (code, _) = h
        .call("DELETE", "/api/v1/namespaces/leaving", Value::Null)
        .await;
    assert!(code == 200 || code == 202, "{code}");
    let (code, v) = h
        .call(
            "POST",
            "/api/v1/namespaces/leaving/configmaps",
            json!({"metadata": {"generateName": "c1-"}}),
        )
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "configmaps \"c1-\" is forbidden: unable to create new content in namespace leaving because it is being terminated",
            "reason": "Forbidden",
            "details": {"name": "c1-", "kind": "configmaps", "causes": [{
                "reason": "NamespaceTerminating",
                "message": "namespace leaving is being terminated",
                "field": "metadata.namespace"}]},
            "code": 403})
    );
}

#[tokio::test]
async fn nodes_start_not_ready() {
    let h = harness().await;
    let (code, n) = h
        .call("POST", "/api/v1/nodes", json!({"metadata": {"name": "n1"}}))
        .await;
    assert_eq!(code, 201, "{n}");
    assert_eq!(
        n["spec"],
        json!({"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]})
    );
    let body = json!({"metadata": {"name": "n2"},
        "spec": {"taints": [{"key": "a", "effect": "NoExecute"}]}});
    let (_, n) = h.call("POST", "/api/v1/nodes", body).await;
    assert_eq!(
        n["spec"]["taints"],
        json!([{"key": "a", "effect": "NoExecute"},
            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );
}

#[tokio::test]
async fn volumes_are_protected_and_claims_get_the_default_class() {
    let h = harness().await;
    let pv = json!({"metadata": {"name": "pv"}, "spec": {"capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp"}}});
    let (code, v) = h.call("POST", "/api/v1/persistentvolumes", pv).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );

    let class = json!({"metadata": {"name": "fast",
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "x"});
    let (code, v) = h
        .call("POST", "/apis/storage.k8s.io/v1/storageclasses", class)
        .await;
    assert_eq!(code, 201, "{v}");
    let claims = "/api/v1/namespaces/default/persistentvolumeclaims";
    let claim = |name: &str, spec: Value| {
        let mut spec = spec;
        spec["accessModes"] = json!(["ReadWriteOnce"]);
        spec["resources"] = json!({"requests": {"storage": "1Gi"}});
        json!({"metadata": {"name": name}, "spec": spec})
    };
    let (_, c) = h.call("POST", claims, claim("a", json!({}))).await;
    assert_eq!(c["spec"]["storageClassName"], "fast");
    assert_eq!(
        c["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    // An empty class asks for none.
    let (_, c) = h
        .call("POST", claims, claim("b", json!({"storageClassName": ""})))
        .await;
    assert_eq!(c["spec"]["storageClassName"], "");
}

#[tokio::test]
async fn ingresses_get_the_default_class() {
    let h = harness().await;
    let class = json!({"metadata": {"name": "nginx",
        "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "x.io/c"}});
    let (code, v) = h
        .call("POST", "/apis/networking.k8s.io/v1/ingressclasses", class)
        .await;
    assert_eq!(code, 201, "{v}");
    let ingress = json!({"metadata": {"name": "i1"},
        "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}});
    let (code, i) = h
        .call(
            "POST",
            "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
            ingress,
        )
        .await;
    assert_eq!(code, 201, "{i}");
    assert_eq!(
        serde_json::to_string(&i["spec"]).unwrap(),
        r#"{"ingressClassName":"nginx","defaultBackend":{"service":{"name":"s","port":{"number":80}}}}"#
    );
}

#[tokio::test]
async fn claims_grow_only_when_their_class_allows_it() {
    let h = harness().await;
    let classes = "/apis/storage.k8s.io/v1/storageclasses";
    let claims = "/api/v1/namespaces/default/persistentvolumeclaims";
    for (name, expand) in [("noexp", false), ("exp", true)] {
        let class =
            json!({"metadata": {"name": name}, "provisioner": "x", "allowVolumeExpansion": expand});
        assert_eq!(h.call("POST", classes, class).await.0, 201);
        let claim = json!({"metadata": {"name": format!("r-{name}")}, "spec": {
            "storageClassName": name, "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}});
        assert_eq!(h.call("POST", claims, claim).await.0, 201);
        let status = json!({"status": {"phase": "Bound"}});
        let (code, v, _) = h
            .send(
                "PATCH",
                &format!("{claims}/r-{name}/status"),
                "application/merge-patch+json",
                status.to_string().into_bytes(),
                None,
            )
            .await;
        assert_eq!(code, 200, "{v}");
    }
    let grow = json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}}).to_string();
    let (code, v, _) = h
        .send(
            "PATCH",
            &format!("{claims}/r-noexp"),
            "application/merge-patch+json",
            grow.clone().into_bytes(),
            None,
        )
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "persistentvolumeclaims \"r-noexp\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
            "reason": "Forbidden", "details": {"name": "r-noexp", "kind": "persistentvolumeclaims"},
            "code": 403})
    );
    let (code, v, _) = h
        .send(
            "PATCH",
            &format!("{claims}/r-exp"),
            "application/merge-patch+json",
            grow.into_bytes(),
            None,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["resources"]["requests"]["storage"], "2Gi");
    // A LimitRange bounds growing claims too.
    let range = json!({"metadata": {"name": "lr"}, "spec": {"limits": [
        {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}}]}});
    assert_eq!(
        h.call("POST", "/api/v1/namespaces/default/limitranges", range)
            .await
            .0,
        201
    );
    let huge = json!({"spec": {"resources": {"requests": {"storage": "20Gi"}}}}).to_string();
    let (code, v, _) = h
        .send(
            "PATCH",
            &format!("{claims}/r-exp"),
            "application/merge-patch+json",
            huge.into_bytes(),
            None,
        )
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "persistentvolumeclaims \"r-exp\" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"
    );
}

#[tokio::test]
async fn a_replaced_pod_keeps_its_priority_and_tolerations() {
    let h = harness().await;
    let uri = "/api/v1/namespaces/default/pods";
    let (code, created) = h.call("POST", uri, pod("p", json!({}))).await;
    assert_eq!(code, 201, "{created}");
    // A client that sends the pod back without what admission added.
    let mut body = created.clone();
    let spec = body["spec"].as_object_mut().unwrap();
    spec.remove("priority");
    spec.remove("preemptionPolicy");
    spec.remove("tolerations");
    body["metadata"]["labels"] = json!({"a": "b"});
    let (code, v) = h.call("PUT", &format!("{uri}/p"), body).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["priority"], 0);
    assert_eq!(v["spec"]["preemptionPolicy"], "PreemptLowerPriority");
    assert_eq!(v["spec"]["tolerations"], created["spec"]["tolerations"]);
}

#[tokio::test]
async fn pods_take_their_runtime_class_overhead_and_scheduling() {
    let h = harness().await;
    let class = json!({"metadata": {"name": "rc"}, "handler": "runc",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {"nodeSelector": {"rt": "yes"}, "tolerations": [
            {"key": "rt", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]}});
    let (code, v) = h
        .call("POST", "/apis/node.k8s.io/v1/runtimeclasses", class)
        .await;
    assert_eq!(code, 201, "{v}");
    let uri = "/api/v1/namespaces/default/pods?dryRun=All";
    let (code, p) = h
        .call(
            "POST",
            uri,
            pod(
                "p",
                json!({"runtimeClassName": "rc", "nodeSelector": {"a": "b"}}),
            ),
        )
        .await;
    assert_eq!(code, 201, "{p}");
    // As the reference: the class's broader not-ready toleration replaces
    // the five-minute one.
    assert_eq!(
        serde_json::to_string(&json!([p["spec"]["overhead"], p["spec"]["nodeSelector"], p["spec"]["tolerations"]])).unwrap(),
        serde_json::to_string(&json!([{"cpu": "250m", "memory": "120Mi"}, {"a": "b", "rt": "yes"}, [
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "rt", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]]))
        .unwrap()
    );
    for (spec, message) in [
        (
            json!({"runtimeClassName": "nope"}),
            "pod rejected: RuntimeClass \"nope\" not found",
        ),
        (
            json!({"runtimeClassName": "rc", "nodeSelector": {"rt": "no"}}),
            "conflict: runtimeClass.scheduling.nodeSelector[rt] = yes; pod.spec.nodeSelector[rt] = no",
        ),
        (
            json!({"runtimeClassName": "rc", "overhead": {"cpu": "1"}}),
            "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
        ),
        (
            json!({"overhead": {"cpu": "1"}}),
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead",
        ),
    ] {
        let (code, v) = h.call("POST", uri, pod("p", spec)).await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(v["message"], format!("pods \"p\" is forbidden: {message}"));
    }
}

#[tokio::test]
async fn limit_ranges_default_and_bound_resources() {
    let h = with_namespace("lr").await;
    let range = json!({"metadata": {"name": "lr"}, "spec": {"limits": [
        {"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
            "defaultRequest": {"cpu": "100m"}, "max": {"cpu": "1"}, "min": {"cpu": "50m"},
            "maxLimitRequestRatio": {"cpu": "10"}},
        {"type": "Pod", "max": {"memory": "1Gi"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}}]}});
    let (code, v) = h
        .call("POST", "/api/v1/namespaces/lr/limitranges", range)
        .await;
    assert_eq!(code, 201, "{v}");
    let pods = "/api/v1/namespaces/lr/pods?dryRun=All";
    let body = pod(
        "p",
        json!({"initContainers": [{"name": "i", "image": "x", "resources": {"requests": {"cpu": "60m"}}}],
            "containers": [{"name": "c", "image": "x"},
                {"name": "d", "image": "x", "resources": {"limits": {"memory": "100Mi"}}}]}),
    );
    let (code, p) = h.call("POST", pods, body).await;
    assert_eq!(code, 201, "{p}");
    // What the reference answers.
    assert_eq!(
        p["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
        "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c; \
         cpu request for container d; cpu limit for container d; memory request for init container i; \
         cpu, memory limit for init container i"
    );
    assert_eq!(
        json!([
            p["spec"]["initContainers"][0]["resources"],
            p["spec"]["containers"][0]["resources"],
            p["spec"]["containers"][1]["resources"],
            p["status"]["qosClass"]
        ]),
        json!([{"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "60m", "memory": "256Mi"}},
            {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
            {"limits": {"cpu": "500m", "memory": "100Mi"}, "requests": {"cpu": "100m", "memory": "100Mi"}},
            "Burstable"])
    );
    let body = pod(
        "p",
        json!({"containers": [{"name": "c", "image": "x", "resources": {
            "requests": {"cpu": "10m"}, "limits": {"cpu": "2", "memory": "2Gi"}}}]}),
    );
    let (code, v) = h.call("POST", pods, body).await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "pods \"p\" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, \
         maximum cpu usage per Container is 1, but limit is 2, \
         cpu max limit to request ratio per Container is 10, but provided ratio is 200.000000, \
         maximum memory usage per Pod is 1Gi, but limit is 2Gi]"
    );
    let claims = "/api/v1/namespaces/lr/persistentvolumeclaims?dryRun=All";
    let claim = json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "20Gi"}}}});
    let (code, v) = h.call("POST", claims, claim).await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "persistentvolumeclaims \"c\" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi"
    );
}

#[tokio::test]
async fn pod_limits_add_up_their_containers() {
    let h = with_namespace("lr2").await;
    let range = json!({"metadata": {"name": "lr"}, "spec": {"limits": [
        {"type": "Pod", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}, "maxLimitRequestRatio": {"cpu": "3"}}]}});
    let (code, v) = h
        .call("POST", "/api/v1/namespaces/lr2/limitranges", range)
        .await;
    assert_eq!(code, 201, "{v}");
    let pods = "/api/v1/namespaces/lr2/pods?dryRun=All";
    let (code, v) = h.call("POST", pods, pod("p", json!({}))).await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "pods \"p\" is forbidden: [minimum memory usage per Pod is 1Mi.  No request is specified, \
         maximum cpu usage per Pod is 2.  No limit is specified, \
         cpu max limit to request ratio per Pod is 3, but no request is specified or request is 0]"
    );
    let body = pod(
        "p",
        json!({"containers": [
            {"name": "c", "image": "x", "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "100m", "memory": "1Ki"}}},
            {"name": "d", "image": "x", "resources": {"limits": {"cpu": "1500m", "memory": "512Ki"}}}]}),
    );
    let (code, v) = h.call("POST", pods, body).await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "pods \"p\" is forbidden: [minimum memory usage per Pod is 1Mi, but request is 513Ki, \
         maximum cpu usage per Pod is 2, but limit is 2500m]"
    );
}

async fn merge_status(h: &Harness, uri: &str, patch: Value) {
    let (code, v, _) = h
        .send(
            "PATCH",
            &format!("{uri}/status"),
            "application/merge-patch+json",
            patch.to_string().into_bytes(),
            None,
        )
        .await;
    assert_eq!(code, 200, "{v}");
}

#[tokio::test]
async fn quotas_are_checked_and_charged() {
    let h = with_namespace("q").await;
    let quotas = "/api/v1/namespaces/q/resourcequotas";
    let hard = json!({"configmaps": "3", "limits.memory": "1Gi", "pods": "2", "requests.cpu": "1"});
    let quota = json!({"metadata": {"name": "q"}, "spec": {"hard": hard}});
    assert_eq!(h.call("POST", quotas, quota).await.0, 201);
    // What the quota controller would write.
    let used = json!({"configmaps": "1", "limits.memory": "0", "pods": "0", "requests.cpu": "0"});
    merge_status(
        &h,
        &format!("{quotas}/q"),
        json!({"status": {"hard": hard, "used": used}}),
    )
    .await;

    let pods = "/api/v1/namespaces/q/pods";
    let (code, v) = h.call("POST", pods, pod("p1", json!({}))).await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "pods \"p1\" is forbidden: failed quota: q: must specify limits.memory for: c; requests.cpu for: c"
    );
    let sized = |name: &str, cpu: &str| {
        pod(
            name,
            json!({"containers": [{"name": "c", "image": "x", "resources": {
                "requests": {"cpu": cpu}, "limits": {"memory": "512Mi"}}}]}),
        )
    };
    let (code, v) = h.call("POST", pods, sized("p1", "600m")).await;
    assert_eq!(code, 201, "{v}");
    let (_, q) = h.call("GET", &format!("{quotas}/q"), Value::Null).await;
    assert_eq!(
        q["status"]["used"],
        json!({"configmaps": "1", "limits.memory": "512Mi", "pods": "1", "requests.cpu": "600m"})
    );
    let (code, v) = h
        .call("POST", &format!("{pods}?dryRun=All"), sized("p2", "500m"))
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "pods \"p2\" is forbidden: exceeded quota: q, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1"
    );
    // A dry run charges nothing.
    let (code, _) = h
        .call("POST", &format!("{pods}?dryRun=All"), sized("p2", "300m"))
        .await;
    assert_eq!(code, 201);
    let (_, after) = h.call("GET", &format!("{quotas}/q"), Value::Null).await;
    assert_eq!(after["status"]["used"], q["status"]["used"]);
    // Nor does a create the store refuses (the name is taken).
    let (code, v) = h.call("POST", pods, sized("p1", "100m")).await;
    assert_eq!(code, 409, "{v}");
    let (_, after) = h.call("GET", &format!("{quotas}/q"), Value::Null).await;
    assert_eq!(after["status"]["used"], q["status"]["used"], "refunded");

    let configmaps = "/api/v1/namespaces/q/configmaps";
    for name in ["c2", "c3"] {
        let (code, v) = h
            .call("POST", configmaps, json!({"metadata": {"name": name}}))
            .await;
        assert_eq!(code, 201, "{v}");
    }
    let (code, v) = h
        .call("POST", configmaps, json!({"metadata": {"name": "c4"}}))
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "configmaps \"c4\" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=3, limited: configmaps=3"
    );

    let hard = json!({"count/secrets": "1", "secrets": "5"});
    let quota = json!({"metadata": {"name": "q2"}, "spec": {"hard": hard}});
    assert_eq!(h.call("POST", quotas, quota).await.0, 201);
    let status = json!({"status": {"hard": hard, "used": {"secrets": "0"}}});
    merge_status(&h, &format!("{quotas}/q2"), status).await;
    let secrets = "/api/v1/namespaces/q/secrets";
    let (code, v) = h
        .call("POST", secrets, json!({"metadata": {"name": "s1"}}))
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "secrets \"s1\" is forbidden: status unknown for quota: q2, resources: count/secrets,secrets"
    );
    let status = json!({"status": {"used": {"secrets": "0", "count/secrets": "0"}}});
    merge_status(&h, &format!("{quotas}/q2"), status).await;
    assert_eq!(
        h.call("POST", secrets, json!({"metadata": {"name": "s1"}}))
            .await
            .0,
        201
    );
    let (code, v) = h
        .call("POST", secrets, json!({"metadata": {"name": "s2"}}))
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        "secrets \"s2\" is forbidden: exceeded quota: q2, requested: count/secrets=1, used: count/secrets=1, limited: count/secrets=1"
    );
    let (_, q2) = h.call("GET", &format!("{quotas}/q2"), Value::Null).await;
    assert_eq!(
        serde_json::to_string(&q2["status"]).unwrap(),
        r#"{"hard":{"count/secrets":"1","secrets":"5"},"used":{"count/secrets":"1","secrets":"1"}}"#
    );
}

/// A namespace with `default` account and these labels.
async fn labelled_namespace(h: &Harness, ns: &str, labels: Value) {
    let body = json!({"metadata": {"name": ns, "labels": labels}});
    assert_eq!(h.call("POST", "/api/v1/namespaces", body).await.0, 201);
    let sa = json!({"metadata": {"name": "default"}});
    let uri = format!("/api/v1/namespaces/{ns}/serviceaccounts");
    assert_eq!(h.call("POST", &uri, sa).await.0, 201);
}

/// The `Warning` headers of a dry-run create of `body` in `ns`, or the
/// refusal's message.
async fn pod_security_answer(h: &Harness, ns: &str, body: &Value) -> Result<Vec<String>, String> {
    let uri = format!("/api/v1/namespaces/{ns}/pods?dryRun=All");
    let (code, v, warnings) = h
        .send_warned("POST", &uri, "application/json", &body.to_string())
        .await;
    match code.as_u16() {
        201 => Ok(warnings),
        _ => Err(v["message"].as_str().unwrap().to_owned()),
    }
}

#[tokio::test]
async fn pod_security_warns_and_enforces_as_the_reference() {
    let h = harness().await;
    let warn = json!({"pod-security.kubernetes.io/warn": "restricted"});
    labelled_namespace(&h, "ps", warn).await;
    let enforce = json!({"pod-security.kubernetes.io/enforce": "baseline"});
    labelled_namespace(&h, "psb", enforce).await;
    let body = |spec: Value| json!({"metadata": {"name": "p"}, "spec": spec});

    // Each body with the headers or refusal kube-apiserver 1.32 answered.
    let plain = body(json!({"containers": [{"name": "c", "image": "x"}]}));
    assert_eq!(
        pod_security_answer(&h, "ps", &plain).await,
        Ok(vec![r#"299 - "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")""#.to_owned()])
    );
    assert_eq!(pod_security_answer(&h, "psb", &plain).await, Ok(vec![]));
    let two = body(json!({"initContainers": [{"name": "i", "image": "x"}],
        "containers": [{"name": "c", "image": "x"}, {"name": "d", "image": "x"}]}));
    assert_eq!(
        pod_security_answer(&h, "ps", &two).await,
        Ok(vec![r#"299 - "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (containers \"i\", \"c\", \"d\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (containers \"i\", \"c\", \"d\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or containers \"i\", \"c\", \"d\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or containers \"i\", \"c\", \"d\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")""#.to_owned()])
    );
    let good = body(
        json!({"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "c", "image": "x", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}),
    );
    assert_eq!(pod_security_answer(&h, "ps", &good).await, Ok(vec![]));

    let hosts = body(
        json!({"hostNetwork": true, "hostPID": true, "hostIPC": true,
        "securityContext": {"runAsUser": 0, "seccompProfile": {"type": "Unconfined"}},
        "volumes": [{"name": "h", "hostPath": {"path": "/"}}, {"name": "n", "nfs": {"server": "s", "path": "/"}}],
        "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 8080, "hostPort": 8080}],
            "securityContext": {"runAsNonRoot": false, "capabilities": {"add": ["SYS_ADMIN", "NET_RAW"]},
                "seLinuxOptions": {"type": "spc_t"}}}]}),
    );
    assert_eq!(
        pod_security_answer(&h, "ps", &hosts).await,
        Ok(vec![r#"299 - "would violate PodSecurity \"restricted:latest\": host namespaces (hostNetwork=true, hostPID=true, hostIPC=true), hostPort (container \"c\" uses hostPort 8080), seLinuxOptions (container \"c\" set forbidden securityContext.seLinuxOptions: type \"spc_t\"), allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]; container \"c\" must not include \"NET_RAW\", \"SYS_ADMIN\" in securityContext.capabilities.add), restricted volume types (volumes \"h\", \"n\" use restricted volume types \"hostPath\", \"nfs\"), runAsNonRoot != true (container \"c\" must not set securityContext.runAsNonRoot=false), runAsUser=0 (pod must not set runAsUser=0), seccompProfile (pod must not set securityContext.seccompProfile.type to \"Unconfined\")""#.to_owned()])
    );

    let mixed = body(json!({"securityContext": {
            "sysctls": [{"name": "kernel.msgmax", "value": "1"}, {"name": "net.ipv4.ip_unprivileged_port_start", "value": "1"}, {"name": "kernel.sem", "value": "1"}],
            "seLinuxOptions": {"user": "u", "role": "r", "type": "container_t"}},
        "containers": [
            {"name": "c", "image": "x", "securityContext": {"allowPrivilegeEscalation": true, "runAsUser": 0,
                "seccompProfile": {"type": "Unconfined"}, "capabilities": {"add": ["NET_BIND_SERVICE", "CHOWN", "SYS_TIME"], "drop": ["ALL"]}}},
            {"name": "d", "image": "x", "ports": [{"containerPort": 1, "hostPort": 1}, {"containerPort": 2, "hostPort": 2}],
                "securityContext": {"runAsUser": 0, "seccompProfile": {"type": "Unconfined"}, "seLinuxOptions": {"type": "foo_t", "level": "s0"}}}]}));
    assert_eq!(
        pod_security_answer(&h, "ps", &mixed).await,
        Ok(vec![r#"299 - "would violate PodSecurity \"restricted:latest\": hostPort (container \"d\" uses hostPorts 1, 2), seLinuxOptions (pod and container \"d\" set forbidden securityContext.seLinuxOptions: type \"foo_t\"; user may not be set; role may not be set), forbidden sysctls (kernel.msgmax, kernel.sem), allowPrivilegeEscalation != false (containers \"c\", \"d\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"d\" must set securityContext.capabilities.drop=[\"ALL\"]; container \"c\" must not include \"CHOWN\", \"SYS_TIME\" in securityContext.capabilities.add), runAsNonRoot != true (pod or containers \"c\", \"d\" must set securityContext.runAsNonRoot=true), runAsUser=0 (containers \"c\", \"d\" must not set runAsUser=0), seccompProfile (containers \"c\", \"d\" must not set securityContext.seccompProfile.type to \"Unconfined\")""#.to_owned()])
    );
    assert_eq!(
        pod_security_answer(&h, "psb", &mixed).await,
        Err(r#"pods "p" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "c" must not include "SYS_TIME" in securityContext.capabilities.add), hostPort (container "d" uses hostPorts 1, 2), seLinuxOptions (pod and container "d" set forbidden securityContext.seLinuxOptions: type "foo_t"; user may not be set; role may not be set), seccompProfile (containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined"), forbidden sysctls (kernel.msgmax, kernel.sem)"#.to_owned())
    );
    let host_paths = body(
        json!({"hostNetwork": true, "securityContext": {"seccompProfile": {"type": "Unconfined"}},
        "volumes": [{"name": "h", "hostPath": {"path": "/"}}, {"name": "h2", "hostPath": {"path": "/x"}}],
        "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 8080, "hostPort": 8080}],
            "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]}),
    );
    assert_eq!(
        pod_security_answer(&h, "psb", &host_paths).await,
        Err(r#"pods "p" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add), host namespaces (hostNetwork=true), hostPath volumes (volumes "h", "h2"), hostPort (container "c" uses hostPort 8080), seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")"#.to_owned())
    );

    let restricted = |spec: Value| {
        let mut spec = spec;
        for c in spec["containers"].as_array_mut().unwrap() {
            c["securityContext"]["allowPrivilegeEscalation"] = json!(false);
            if c["securityContext"]["capabilities"]["drop"].is_null() {
                c["securityContext"]["capabilities"]["drop"] = json!(["ALL"]);
            }
        }
        body(spec)
    };
    let caps = restricted(
        json!({"securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "Unconfined"}},
        "containers": [{"name": "c", "image": "x", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["SYS_TIME"]}, "seccompProfile": {"type": "Unconfined"}}},
            {"name": "d", "image": "x", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["CHOWN", "NET_BIND_SERVICE"]}}}]}),
    );
    assert_eq!(
        pod_security_answer(&h, "ps", &caps).await,
        Ok(vec![r#"299 - "would violate PodSecurity \"restricted:latest\": unrestricted capabilities (containers \"c\", \"d\" must not include \"CHOWN\", \"SYS_TIME\" in securityContext.capabilities.add), seccompProfile (pod and container \"c\" must not set securityContext.seccompProfile.type to \"Unconfined\")""#.to_owned()])
    );
    let explicit_first = restricted(json!({"securityContext": {"runAsNonRoot": true},
        "containers": [{"name": "c", "image": "x", "securityContext": {"seccompProfile": {"type": "Unconfined"}}},
            {"name": "d", "image": "x"}]}));
    assert_eq!(
        pod_security_answer(&h, "ps", &explicit_first).await,
        Ok(vec![r#"299 - "would violate PodSecurity \"restricted:latest\": seccompProfile (container \"c\" must not set securityContext.seccompProfile.type to \"Unconfined\")""#.to_owned()])
    );
    let non_root = restricted(
        json!({"securityContext": {"runAsNonRoot": false, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "c", "image": "x", "securityContext": {"runAsNonRoot": false}}, {"name": "d", "image": "x"}]}),
    );
    assert_eq!(
        pod_security_answer(&h, "ps", &non_root).await,
        Ok(vec![r#"299 - "would violate PodSecurity \"restricted:latest\": runAsNonRoot != true (pod and container \"c\" must not set securityContext.runAsNonRoot=false)""#.to_owned()])
    );
    let one_volume = restricted(
        json!({"volumes": [{"name": "h", "hostPath": {"path": "/"}}],
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "c", "image": "x", "volumeMounts": [{"name": "h", "mountPath": "/h"}]}]}),
    );
    assert_eq!(
        pod_security_answer(&h, "ps", &one_volume).await,
        Ok(vec![r#"299 - "would violate PodSecurity \"restricted:latest\": restricted volume types (volume \"h\" uses restricted volume type \"hostPath\")""#.to_owned()])
    );
}

#[tokio::test]
async fn workloads_are_warned_about_their_pod_templates() {
    let h = harness().await;
    labelled_namespace(
        &h,
        "ps",
        json!({"pod-security.kubernetes.io/warn": "restricted"}),
    )
    .await;
    labelled_namespace(
        &h,
        "psb",
        json!({"pod-security.kubernetes.io/enforce": "baseline"}),
    )
    .await;
    let deployment = json!({"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "x"}]}}}});
    let host_pid = json!({"restartPolicy": "Never", "hostPID": true, "containers": [{"name": "c", "image": "x"}]});
    let cases = [
        (
            "/apis/apps/v1/namespaces/ps/deployments",
            deployment.clone(),
            r#"299 - "would violate PodSecurity \"restricted:latest\": host namespaces (hostNetwork=true), allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")""#,
        ),
        (
            "/apis/apps/v1/namespaces/psb/deployments",
            deployment,
            r#"299 - "would violate PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)""#,
        ),
        (
            "/apis/batch/v1/namespaces/psb/jobs",
            json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": host_pid}}}),
            r#"299 - "would violate PodSecurity \"baseline:latest\": host namespaces (hostPID=true)""#,
        ),
        (
            "/apis/batch/v1/namespaces/psb/cronjobs",
            json!({"metadata": {"name": "j"}, "spec": {"schedule": "* * * * *",
                "jobTemplate": {"spec": {"template": {"spec": host_pid}}}}}),
            r#"299 - "would violate PodSecurity \"baseline:latest\": host namespaces (hostPID=true)""#,
        ),
        (
            "/api/v1/namespaces/psb/podtemplates",
            json!({"metadata": {"name": "t"}, "template": {"spec": host_pid}}),
            r#"299 - "would violate PodSecurity \"baseline:latest\": host namespaces (hostPID=true)""#,
        ),
    ];
    for (uri, body, warning) in cases {
        let (code, v, warnings) = h
            .send_warned(
                "POST",
                &format!("{uri}?dryRun=All"),
                "application/json",
                &body.to_string(),
            )
            .await;
        assert_eq!(code, 201, "{uri}: {v}");
        assert_eq!(warnings, vec![warning.to_owned()], "{uri}");
    }
}

#[tokio::test]
async fn namespace_pod_security_labels_are_checked() {
    let h = with_namespace("labels").await;
    let body = json!({"metadata": {"name": "x", "labels": {"pod-security.kubernetes.io/enforce": "bogus"}}});
    let (code, v) = h.call("POST", "/api/v1/namespaces", body).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        r#"Namespace "x" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted"#
    );
    // Several bad labels: in the order upstream parses them (recorded from
    // kube-apiserver 1.32).
    let body = json!({"metadata": {"name": "psl", "labels": {
        "pod-security.kubernetes.io/warn": "x", "pod-security.kubernetes.io/enforce": "y",
        "pod-security.kubernetes.io/audit": "z", "pod-security.kubernetes.io/enforce-version": "q"}}});
    let (code, v) = h.call("POST", "/api/v1/namespaces", body).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        r#"Namespace "psl" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "y": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/enforce-version]: Invalid value: "q": must be "latest" or "v1.x", metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "z": must be one of privileged, baseline, restricted, metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "x": must be one of privileged, baseline, restricted]"#
    );
    for name in ["web", "p1"] {
        let (code, v) = h
            .call(
                "POST",
                "/api/v1/namespaces/labels/pods",
                pod(name, json!({})),
            )
            .await;
        assert_eq!(code, 201, "{v}");
    }
    let patch = |labels: Value| json!({"metadata": {"labels": labels}}).to_string();
    let uri = "/api/v1/namespaces/labels?dryRun=All";
    let bad = patch(
        json!({"pod-security.kubernetes.io/warn": "x", "pod-security.kubernetes.io/audit-version": "y"}),
    );
    let (code, v, _) = h
        .send_warned("PATCH", uri, "application/merge-patch+json", &bad)
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        r#"Namespace "labels" is invalid: [metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "y": must be "latest" or "v1.x", metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "x": must be one of privileged, baseline, restricted]"#
    );
    let stricter = patch(json!({"pod-security.kubernetes.io/enforce": "restricted"}));
    let (code, v, warnings) = h
        .send_warned("PATCH", uri, "application/merge-patch+json", &stricter)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        warnings,
        vec![
            r#"299 - "existing pods in namespace \"labels\" violate the new PodSecurity enforce level \"restricted:latest\"""#,
            r#"299 - "p1 (and 1 other pod): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile""#,
        ]
    );
    let baseline = patch(json!({"pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/enforce-version": "v1.20"}));
    let (code, _, warnings) = h
        .send_warned("PATCH", uri, "application/merge-patch+json", &baseline)
        .await;
    assert_eq!(code, 200);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[tokio::test]
async fn scoped_quotas_count_the_pods_they_match() {
    let h = with_namespace("qs").await;
    let quotas = "/api/v1/namespaces/qs/resourcequotas";
    let be = json!({"metadata": {"name": "be"}, "spec": {"hard": {"pods": "1"}, "scopes": ["BestEffort"]}});
    assert_eq!(h.call("POST", quotas, be).await.0, 201);
    let status = json!({"status": {"hard": {"pods": "1"}, "used": {"pods": "1"}}});
    merge_status(&h, &format!("{quotas}/be"), status).await;
    let hard = json!({"pods": "1", "requests.cpu": "1"});
    let pc = json!({"metadata": {"name": "pc"}, "spec": {"hard": hard, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["system-node-critical"]}]}}});
    assert_eq!(h.call("POST", quotas, pc).await.0, 201);
    let status = json!({"status": {"hard": hard, "used": {"pods": "0", "requests.cpu": "0"}}});
    merge_status(&h, &format!("{quotas}/pc"), status).await;

    let pods = "/api/v1/namespaces/qs/pods?dryRun=All";
    let requesting = |spec: Value| {
        let mut spec = spec;
        spec["containers"] = json!([{"name": "c", "image": "x", "resources": {"requests": spec["requests"].take()}}]);
        spec.as_object_mut().unwrap().remove("requests");
        pod("p", spec)
    };
    for (body, outcome) in [
        (
            pod("p", json!({})),
            Err("exceeded quota: be, requested: pods=1, used: pods=1, limited: pods=1"),
        ),
        (requesting(json!({"requests": {"memory": "1Mi"}})), Ok(())),
        (
            requesting(
                json!({"priorityClassName": "system-node-critical", "requests": {"memory": "1Mi"}}),
            ),
            Err("failed quota: pc: must specify requests.cpu for: c"),
        ),
        (
            requesting(
                json!({"priorityClassName": "system-node-critical", "requests": {"memory": "1Mi", "cpu": "2"}}),
            ),
            Err(
                "exceeded quota: pc, requested: requests.cpu=2, used: requests.cpu=0, limited: requests.cpu=1",
            ),
        ),
    ] {
        let (code, v) = h.call("POST", pods, body).await;
        match outcome {
            Ok(()) => assert_eq!(code, 201, "{v}"),
            Err(message) => {
                assert_eq!(code, 403, "{v}");
                assert_eq!(v["message"], format!("pods \"p\" is forbidden: {message}"));
            }
        }
    }
    let (code, _) = h
        .call(
            "POST",
            "/api/v1/namespaces/qs/configmaps",
            json!({"metadata": {"name": "c"}}),
        )
        .await;
    assert_eq!(code, 201);
}

#[tokio::test]
async fn accounts_may_limit_the_secrets_of_their_pods() {
    let h = harness().await;
    let sa = json!({"metadata": {"name": "strict", "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}},
        "secrets": [{"name": "ok"}], "imagePullSecrets": [{"name": "pull"}]});
    assert_eq!(
        h.call("POST", "/api/v1/namespaces/default/serviceaccounts", sa)
            .await
            .0,
        201
    );
    let uri = "/api/v1/namespaces/default/pods?dryRun=All";
    let c = json!([{"name": "c", "image": "x"}]);
    let refusals = [
        (
            json!({"volumes": [{"name": "v", "secret": {"secretName": "nope"}}], "containers": c}),
            r#"volume with secret.secretName="nope" is not allowed because service account strict does not reference that secret"#,
        ),
        (
            json!({"containers": [{"name": "c", "image": "x", "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "nope", "key": "k"}}}]}]}),
            r#"container c with envVar E referencing secret.secretName="nope" is not allowed because service account strict does not reference that secret"#,
        ),
        (
            json!({"initContainers": [{"name": "i", "image": "x", "envFrom": [{"secretRef": {"name": "nope"}}]}], "containers": c}),
            r#"init container i with envFrom referencing secret.secretName="nope" is not allowed because service account strict does not reference that secret"#,
        ),
        (
            json!({"imagePullSecrets": [{"name": "other"}], "containers": c}),
            r#"imagePullSecrets[0].name="other" is not allowed because service account strict does not reference that imagePullSecret"#,
        ),
    ];
    for (mut spec, message) in refusals {
        spec["serviceAccountName"] = json!("strict");
        let (code, v) = h.call("POST", uri, pod("p", spec)).await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(v["message"], format!("pods \"p\" is forbidden: {message}"));
    }
    let spec = json!({"serviceAccountName": "strict", "containers": c,
        "volumes": [{"name": "v", "secret": {"secretName": "ok"}}]});
    let (code, v) = h.call("POST", uri, pod("p", spec)).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"]["imagePullSecrets"], json!([{"name": "pull"}]));
}

#[tokio::test]
async fn pod_updates_that_change_containers_are_checked_again() {
    let h = harness().await;
    labelled_namespace(
        &h,
        "ps",
        json!({"pod-security.kubernetes.io/warn": "restricted"}),
    )
    .await;
    labelled_namespace(
        &h,
        "psb",
        json!({"pod-security.kubernetes.io/enforce": "baseline"}),
    )
    .await;
    for ns in ["ps", "psb"] {
        let uri = format!("/api/v1/namespaces/{ns}/pods");
        assert_eq!(h.call("POST", &uri, pod("e", json!({}))).await.0, 201);
    }
    let strategic = "application/strategic-merge-patch+json";
    let debug = json!({"spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox",
        "targetContainerName": "c", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]}});
    let uri = "/api/v1/namespaces/psb/pods/e/ephemeralcontainers?dryRun=All";
    let (code, v, _) = h
        .send_warned("PATCH", uri, strategic, &debug.to_string())
        .await;
    assert_eq!(code, 403, "{v}");
    assert_eq!(
        v["message"],
        r#"pods "e" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "dbg" must not include "SYS_ADMIN" in securityContext.capabilities.add)"#
    );
    let uri = "/api/v1/namespaces/ps/pods/e?dryRun=All";
    let labels = json!({"metadata": {"labels": {"a": "b"}}}).to_string();
    let (code, _, warnings) = h.send_warned("PATCH", uri, strategic, &labels).await;
    assert_eq!(code, 200);
    assert!(warnings.is_empty(), "{warnings:?}");
    let image = json!({"spec": {"containers": [{"name": "c", "image": "y"}]}}).to_string();
    let (code, v, warnings) = h.send_warned("PATCH", uri, strategic, &image).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        warnings,
        vec![
            r#"299 - "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")""#
        ]
    );
}

/// LimitRanger leaves a claim being deleted alone: a range made since that
/// the claim no longer fits must not keep it from losing its finalizers.
#[tokio::test]
async fn a_claim_being_deleted_may_lose_its_finalizers_whatever_the_ranges() {
    let h = with_namespace("gone").await;
    let claims = "/api/v1/namespaces/gone/persistentvolumeclaims";
    let claim = json!({"metadata": {"name": "c"}, "spec": {"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}}}});
    let (code, v) = h.call("POST", claims, claim).await;
    assert_eq!(code, 201, "{v}");
    let range = json!({"metadata": {"name": "small"}, "spec": {"limits": [
        {"type": "PersistentVolumeClaim", "max": {"storage": "500Mi"}}]}});
    let (code, v) = h
        .call("POST", "/api/v1/namespaces/gone/limitranges", range)
        .await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = h.call("DELETE", &format!("{claims}/c"), Value::Null).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    let (code, v, _) = h
        .send(
            "PATCH",
            &format!("{claims}/c"),
            "application/merge-patch+json",
            br#"{"metadata":{"finalizers":null}}"#.to_vec(),
            None,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    let (code, _) = h.call("GET", &format!("{claims}/c"), Value::Null).await;
    assert_eq!(code, 404);
}

/// The server's client to itself reads objects typed, by their kind alone:
/// what built-in plugins and hooks read their neighbours with.
#[tokio::test]
async fn loopback_reads_are_typed_by_kind() {
    use kapi_api_types::core::v1::{ConfigMap, ServiceAccount};
    use kapi_server::loopback;
    let h = with_namespace("typed-reads").await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings"}, "data": {"color": "blue"}});
    let (code, body) = h
        .call("POST", "/api/v1/namespaces/typed-reads/configmaps", cm)
        .await;
    assert_eq!(code, 201, "{body}");
    let read: ConfigMap = loopback::get(&h.registry, Some("typed-reads"), "settings")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.data.unwrap()["color"], "blue");
    assert!(
        read.metadata.managed_fields.is_none(),
        "read without managedFields"
    );
    let missing = loopback::get::<ConfigMap>(&h.registry, Some("typed-reads"), "nope").await;
    assert!(missing.unwrap().is_none());
    let all: Vec<ConfigMap> = loopback::list(&h.registry, Some("typed-reads"))
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
    let accounts: Vec<ServiceAccount> = loopback::list(&h.registry, Some("default")).await.unwrap();
    assert!(accounts.iter().any(|a| a.metadata.name() == "default"));
}

/// The in-process client reads a compiled kind typed, its resource taken
/// from the kind.
#[tokio::test]
async fn the_in_process_client_reads_typed_by_kind() {
    use kapi_api_types::core::v1::ConfigMap;
    use kapi_server::controllers::client::{Client, ListParams};
    let h = with_namespace("typed-client").await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "one"}, "data": {"k": "v"}});
    let (code, body) = h
        .call("POST", "/api/v1/namespaces/typed-client/configmaps", cm)
        .await;
    assert_eq!(code, 201, "{body}");
    let client = Client::of_apiserver(h.router.clone());
    let one: ConfigMap = client.get_typed(Some("typed-client"), "one").await.unwrap();
    assert_eq!(one.data.unwrap()["k"], "v");
    let all: Vec<ConfigMap> = client
        .list_typed(Some("typed-client"), &ListParams::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].metadata.name(), "one");
    let missing = client
        .get_typed::<ConfigMap>(Some("typed-client"), "two")
        .await;
    assert!(missing.unwrap_err().is_not_found());
}
