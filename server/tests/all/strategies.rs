//! Kind-specific PrepareForCreate/PrepareForUpdate hooks, compared with
//! kube-apiserver 1.32 by kubectl: a daemon set's template generation and a
//! persistent volume's phase transition time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::common::{Harness, harness};

async fn merge_patch(h: &Harness, uri: &str, patch: Value) -> Value {
    let (code, v, _) = h
        .send(
            "PATCH",
            uri,
            "application/merge-patch+json",
            patch.to_string().into_bytes(),
            None,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    v
}

fn template_generation(ds: &Value) -> (i64, &str) {
    (
        ds["metadata"]["generation"].as_i64().unwrap(),
        ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"]
            .as_str()
            .unwrap(),
    )
}

#[tokio::test]
async fn daemon_set_templates_count_their_generations() {
    let h = harness().await;
    let uri = "/apis/apps/v1/namespaces/default/daemonsets";
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let (code, v) = h.call("POST", uri, ds).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(template_generation(&v), (1, "1"));
    let item = format!("{uri}/d");
    let v = merge_patch(&h, &item, json!({"spec": {"minReadySeconds": 5}})).await;
    assert_eq!(
        template_generation(&v),
        (2, "1"),
        "the template did not change"
    );
    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}});
    let v = merge_patch(&h, &item, image).await;
    assert_eq!(template_generation(&v), (3, "2"));
    let forged =
        json!({"metadata": {"annotations": {"deprecated.daemonset.template.generation": "9"}}});
    let v = merge_patch(&h, &item, forged).await;
    assert_eq!(template_generation(&v), (3, "2"), "the server's count wins");
}

#[tokio::test]
async fn volume_phase_changes_move_the_transition_time() {
    let h = harness().await;
    let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "v"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/x"}}});
    let (code, v) = h.call("POST", "/api/v1/persistentvolumes", pv).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["status"]["phase"], "Pending");
    let created = v["status"]["lastPhaseTransitionTime"].clone();
    assert!(created.is_string(), "{v}");
    let status = "/api/v1/persistentvolumes/v/status";
    let v = merge_patch(&h, status, json!({"status": {"message": "m"}})).await;
    assert_eq!(
        v["status"]["lastPhaseTransitionTime"], created,
        "same phase"
    );
    // A written time moves; a time given with a phase change is kept.
    let v = merge_patch(&h, status, json!({"status": {"phase": "Available"}})).await;
    assert!(v["status"]["lastPhaseTransitionTime"].is_string());
    let given = json!("2020-01-01T00:00:00Z");
    let v = merge_patch(
        &h,
        status,
        json!({"status": {"phase": "Released", "lastPhaseTransitionTime": given}}),
    )
    .await;
    assert_eq!(v["status"]["lastPhaseTransitionTime"], given);
    // Through the main endpoint the status is the stored one.
    let v = merge_patch(
        &h,
        "/api/v1/persistentvolumes/v",
        json!({"status": {"phase": "Failed"}}),
    )
    .await;
    assert_eq!(v["status"]["phase"], "Released");
    assert_eq!(v["status"]["lastPhaseTransitionTime"], given);
}
