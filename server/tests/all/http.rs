//! The HTTP surface without a socket (`app(state).oneshot(request)`): Status codes
//! and reasons for bad input, and the registry rules of Kubernetes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::http::StatusCode;
use kapi_storage::Storage;
use serde_json::{Value, json};

use crate::common;

use common::harness;

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}})
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn assert_status(value: &Value, code: u16, reason: &str) {
    assert_eq!(value["kind"], "Status", "{value}");
    assert_eq!(value["code"], code, "{value}");
    assert_eq!(value["reason"], reason, "{value}");
}

#[tokio::test]
async fn bad_bodies_get_4xx_status_and_write_nothing() {
    let h = harness().await;
    let (code, v, _) = h
        .send("POST", CMS, "application/json", b"{not json".to_vec(), None)
        .await;
    assert_eq!(code, 400);
    assert_status(&v, 400, "BadRequest");
    let (code, v) = h
        .call(
            "POST",
            CMS,
            json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        )
        .await;
    assert_eq!(code, 400, "{v}");
    let (code, _) = h
        .call(
            "POST",
            CMS,
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}),
        )
        .await;
    assert_eq!(code, 400);
    let (code, v) = h
        .call(
            "POST",
            CMS,
            json!({"metadata": {"name": "x"}, "data": {"a": 5}}),
        )
        .await;
    assert_eq!(code, 400, "wrong field type: {v}");
    let (code, v) = h
        .call(
            "POST",
            CMS,
            json!({"metadata": {"name": "x", "namespace": "other"}}),
        )
        .await;
    assert_eq!(code, 400, "namespace mismatch: {v}");
    let (code, v) = h.call("POST", CMS, cm("Not_Valid")).await;
    assert_eq!(code, 422);
    assert_status(&v, 422, "Invalid");
    assert_eq!(v["details"]["causes"][0]["field"], "metadata.name");
    assert_eq!(v["details"]["causes"][0]["reason"], "FieldValueInvalid");
    let (code, v, _) = h
        .send("POST", CMS, "text/plain", b"name: x".to_vec(), None)
        .await;
    assert_eq!(code, 415);
    assert_status(&v, 415, "UnsupportedMediaType");
    let huge = json!({"metadata": {"name": "big"}, "data": {"a": "x".repeat(4 * 1024 * 1024)}});
    let (code, v) = h.call("POST", CMS, huge).await;
    assert_eq!(code, 413);
    assert_status(&v, 413, "RequestEntityTooLarge");
    let (code, _) = h
        .call(
            "POST",
            "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
            json!({"metadata": {"name": "s"}, "bogus": 1}),
        )
        .await;
    assert_eq!(code, 400);
    let (code, _) = h
        .call(
            "GET",
            "/api/v1/namespaces/default/configmaps?labelSelector=a%20in%20x",
            Value::Null,
        )
        .await;
    assert_eq!(code, 400);
    let (code, _) = h
        .call(
            "GET",
            "/api/v1/namespaces/default/configmaps?limit=abc",
            Value::Null,
        )
        .await;
    assert_eq!(code, 400);
    assert_eq!(h.count(CMS).await, 0, "nothing was written");

    // Name in the URL and the body must agree.
    h.call("POST", CMS, cm("one")).await;
    let (code, _) = h.call("PUT", &format!("{CMS}/one"), cm("two")).await;
    assert_eq!(code, 400);
}

#[tokio::test]
async fn unknown_paths_and_missing_objects() {
    let h = harness().await;
    let (code, v) = h
        .call("GET", "/api/v1/namespaces/default/widgets", Value::Null)
        .await;
    assert_eq!(code, 404);
    assert_status(&v, 404, "NotFound");
    let (code, v) = h.call("GET", &format!("{CMS}/nope"), Value::Null).await;
    assert_eq!(code, 404);
    assert_eq!(v["message"], "configmaps \"nope\" not found");
    assert_eq!(v["details"], json!({"name": "nope", "kind": "configmaps"}));
    let (code, v) = h
        .call("POST", "/api/v1/namespaces/missing/configmaps", cm("x"))
        .await;
    assert_eq!(code, 404);
    assert_eq!(v["message"], "namespaces \"missing\" not found");
    h.call("POST", CMS, cm("dup")).await;
    let (code, v) = h.call("POST", CMS, cm("dup")).await;
    assert_eq!(code, 409);
    assert_status(&v, 409, "AlreadyExists");
}

#[tokio::test]
async fn finalizers_keep_objects_until_removed() {
    let h = harness().await;
    let mut obj = cm("held");
    obj["metadata"]["finalizers"] = json!(["example.com/hold"]);
    h.call("POST", CMS, obj).await;
    let (code, v) = h.call("DELETE", &format!("{CMS}/held"), Value::Null).await;
    assert_eq!(code, 200);
    assert_eq!(
        v["kind"], "ConfigMap",
        "a pending delete returns the object"
    );
    assert!(v["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(v["metadata"]["deletionGracePeriodSeconds"], 0);
    let (code, _) = h.call("GET", &format!("{CMS}/held"), Value::Null).await;
    assert_eq!(code, 200, "still there while finalizers remain");
    // No new finalizers once deleting.
    let (code, _) = h
        .send(
            "PATCH",
            &format!("{CMS}/held"),
            "application/merge-patch+json",
            br#"{"metadata":{"finalizers":["a.com/x","example.com/hold"]}}"#.to_vec(),
            None,
        )
        .await
        .into_pair();
    assert_eq!(code, 422);
    let (code, _) = h
        .send(
            "PATCH",
            &format!("{CMS}/held"),
            "application/merge-patch+json",
            br#"{"metadata":{"finalizers":null}}"#.to_vec(),
            None,
        )
        .await
        .into_pair();
    assert_eq!(code, 200);
    let (code, _) = h.call("GET", &format!("{CMS}/held"), Value::Null).await;
    assert_eq!(code, 404, "gone once the last finalizer is removed");
}

trait IntoPair {
    fn into_pair(self) -> (StatusCode, Value);
}

impl IntoPair for (StatusCode, Value, Option<String>) {
    fn into_pair(self) -> (StatusCode, Value) {
        (self.0, self.1)
    }
}

#[tokio::test]
async fn delete_preconditions_and_success_status() {
    let h = harness().await;
    let (_, created) = h.call("POST", CMS, cm("p")).await;
    let (code, v) = h
        .call(
            "DELETE",
            &format!("{CMS}/p"),
            json!({"preconditions": {"uid": "wrong"}}),
        )
        .await;
    assert_eq!(code, 409);
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("Precondition failed: UID in precondition: wrong"),
        "{v}"
    );
    let (code, v) = h
        .call(
            "DELETE",
            &format!("{CMS}/p"),
            json!({"preconditions": {"uid": created["metadata"]["uid"]}}),
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(v["status"], "Success");
    assert_eq!(v["details"]["name"], "p");
    assert_eq!(v["details"]["kind"], "configmaps");
}

#[tokio::test]
async fn bound_pods_delete_gracefully() {
    let h = harness().await;
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "busybox"}]}});
    let pods = "/api/v1/namespaces/default/pods";
    let (code, v) = h.call("POST", pods, pod).await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = h.call("DELETE", &format!("{pods}/p"), Value::Null).await;
    assert_eq!(code, 200);
    assert_eq!(v["kind"], "Pod");
    assert_eq!(v["metadata"]["deletionGracePeriodSeconds"], 30);
    let (code, _) = h.call("GET", &format!("{pods}/p"), Value::Null).await;
    assert_eq!(code, 200, "terminating until the kubelet confirms");
    let (code, v) = h
        .call(
            "DELETE",
            &format!("{pods}/p?gracePeriodSeconds=0"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(v["kind"], "Pod", "pods return the deleted object");
    let (code, _) = h.call("GET", &format!("{pods}/p"), Value::Null).await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn status_and_spec_are_written_through_their_own_endpoints() {
    let h = harness().await;
    let nodes = "/api/v1/nodes";
    let (code, v) = h.call("POST", nodes, json!({"metadata": {"name": "n1"}, "spec": {"podCIDR": "10.0.0.0/24"}, "status": {"phase": "Running"}})).await;
    assert_eq!(code, 201, "{v}");
    assert!(
        v["status"].get("phase").is_none(),
        "status is reset on create: {v}"
    );
    assert!(
        v["metadata"].get("generation").is_none(),
        "nodes track no generation: {v}"
    );
    let mut update = v.clone();
    update["status"] = json!({"phase": "Running"});
    let (_, v) = h.call("PUT", &format!("{nodes}/n1"), update).await;
    assert!(
        v["status"].get("phase").is_none(),
        "main endpoint ignores status: {v}"
    );
    let mut status = v.clone();
    status["status"] = json!({"phase": "Running"});
    status["spec"]["unschedulable"] = json!(true);
    let (code, v) = h.call("PUT", &format!("{nodes}/n1/status"), status).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["status"]["phase"], "Running");
    assert!(
        v["spec"].get("unschedulable").is_none(),
        "/status ignores spec: {v}"
    );
}

#[tokio::test]
async fn generation_moves_with_the_spec_only() {
    let h = harness().await;
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let (code, v) = h.call("POST", deployments, deployment.clone()).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["metadata"]["generation"], 1);
    assert_eq!(v["spec"]["replicas"], 1, "defaulted");
    // The same body again: what defaulting fills in is no change.
    let (code, v) = h
        .call("PUT", &format!("{deployments}/d"), deployment.clone())
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v["metadata"]["generation"], 1,
        "defaulted fields are no spec change: {v}"
    );
    let merge = |body: &'static [u8]| {
        h.send(
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/d",
            "application/merge-patch+json",
            body.to_vec(),
            None,
        )
    };
    let (_, v) = merge(br#"{"metadata":{"labels":{"x":"y"}}}"#)
        .await
        .into_pair();
    assert_eq!(
        v["metadata"]["generation"], 1,
        "metadata changes keep the generation: {v}"
    );
    let (_, v) = merge(br#"{"spec":{"replicas":3}}"#).await.into_pair();
    assert_eq!(v["metadata"]["generation"], 2, "{v}");
    let (code, v) = h
        .send(
            "PATCH",
            "/apis/apps/v1/namespaces/default/deployments/d/status",
            "application/merge-patch+json",
            br#"{"status":{"replicas":3}}"#.to_vec(),
            None,
        )
        .await
        .into_pair();
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v["metadata"]["generation"], 2,
        "status changes keep the generation: {v}"
    );
    assert_eq!(v["status"]["replicas"], 3);
}

#[tokio::test]
async fn generate_name_and_stale_update() {
    let h = harness().await;
    let (code, v) = h
        .call("POST", CMS, json!({"metadata": {"generateName": "gen-"}}))
        .await;
    assert_eq!(code, 201);
    let name = v["metadata"]["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    let mut stale = v.clone();
    h.call(
        "PUT",
        &format!("{CMS}/{name}"),
        json!({"metadata": {"name": name}, "data": {"b": "2"}}),
    )
    .await;
    stale["data"] = json!({"c": "3"});
    let (code, v) = h.call("PUT", &format!("{CMS}/{name}"), stale).await;
    assert_eq!(code, 409);
    assert_status(&v, 409, "Conflict");
}

#[tokio::test]
async fn pages_are_consistent_at_the_first_revision() {
    let h = harness().await;
    for name in ["a", "b", "c"] {
        h.call("POST", CMS, cm(name)).await;
    }
    let (_, page) = h.call("GET", &format!("{CMS}?limit=2"), Value::Null).await;
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    let token = page["metadata"]["continue"].as_str().unwrap().to_owned();
    h.call("POST", CMS, cm("d")).await;
    h.call("DELETE", &format!("{CMS}/c"), Value::Null).await;
    let (_, rest) = h
        .call(
            "GET",
            &format!("{CMS}?limit=2&continue={}", urlencode(&token)),
            Value::Null,
        )
        .await;
    let names: Vec<&str> = rest["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c"], "second page at the first page's revision");
    assert_eq!(
        rest["metadata"]["resourceVersion"],
        page["metadata"]["resourceVersion"]
    );
    let (code, _) = h
        .call("GET", &format!("{CMS}?continue=garbage"), Value::Null)
        .await;
    assert_eq!(code, 400);
    let revision = h.store.current_revision().await.unwrap();
    h.store.compact(revision).await.unwrap();
    let (code, v) = h
        .call(
            "GET",
            &format!("{CMS}?limit=2&continue={}", urlencode(&token)),
            Value::Null,
        )
        .await;
    assert_eq!(code, 410);
    assert_status(&v, 410, "Expired");
}

#[tokio::test]
async fn watch_from_a_compacted_revision_reports_410() {
    let h = harness().await;
    h.call("POST", CMS, cm("a")).await;
    h.call("POST", CMS, cm("b")).await;
    let revision = h.store.current_revision().await.unwrap();
    h.store.compact(revision).await.unwrap();
    let (code, v, _) = h
        .send(
            "GET",
            &format!("{CMS}?watch=true&resourceVersion=1&timeoutSeconds=1"),
            "application/json",
            Vec::new(),
            None,
        )
        .await;
    assert_eq!(code, 200);
    let frame = if let Value::String(text) = &v {
        serde_json::from_str::<Value>(text.lines().next().unwrap()).unwrap()
    } else {
        v
    };
    assert_eq!(frame["type"], "ERROR");
    assert_status(&frame["object"], 410, "Expired");
}

#[tokio::test]
async fn tables_partial_metadata_and_aggregated_discovery() {
    let h = harness().await;
    h.call("POST", CMS, cm("t")).await;
    let (code, v, _) = h
        .send(
            "GET",
            CMS,
            "",
            Vec::new(),
            Some("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"),
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(v["kind"], "Table");
    let names: Vec<&str> = v["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Data", "Age"]);
    assert_eq!(v["rows"][0]["cells"][0], "t");
    assert_eq!(v["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    let (_, v, _) = h
        .send(
            "GET",
            CMS,
            "",
            Vec::new(),
            Some("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"),
        )
        .await;
    assert_eq!(v["kind"], "PartialObjectMetadataList");
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let (code, v, content_type) = h.send("GET", "/apis", "", Vec::new(), Some(accept)).await;
    assert_eq!(code, 200);
    assert_eq!(
        content_type.as_deref(),
        Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    );
    assert_eq!(v["kind"], "APIGroupDiscoveryList");
    // kube-apiserver's group order: apiregistration.k8s.io first.
    assert_eq!(v["items"][0]["metadata"]["name"], "apiregistration.k8s.io");
    let (_, v, _) = h.send("GET", "/api", "", Vec::new(), None).await;
    assert_eq!(v["kind"], "APIVersions");

    // A review has no Table form (kube-apiserver 1.32): 406 when only a Table
    // is acceptable, the next acceptable form when there is one.
    let reviews = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    let review = serde_json::to_vec(&json!({"apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}}))
    .unwrap();
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let (code, v, _) = h
        .send(
            "POST",
            reviews,
            "application/json",
            review.clone(),
            Some(table),
        )
        .await;
    assert_eq!(code, 406, "{v}");
    let (code, v, _) = h
        .send(
            "POST",
            reviews,
            "application/json",
            review,
            Some(&format!("{table}, application/json")),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["kind"], "SelfSubjectAccessReview");
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn delete_collection_and_group_discovery() {
    let h = harness().await;
    for (name, tier) in [("a", "web"), ("b", "web"), ("c", "db")] {
        let mut obj = cm(name);
        obj["metadata"]["labels"] = json!({ "tier": tier });
        h.call("POST", CMS, obj).await;
    }
    let (code, v) = h
        .call(
            "DELETE",
            &format!("{CMS}?labelSelector=tier%3Dweb"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["kind"], "ConfigMapList");
    assert_eq!(v["items"].as_array().unwrap().len(), 2);
    let (_, left) = h.call("GET", CMS, Value::Null).await;
    let names: Vec<&str> = left["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c"]);

    let (code, v) = h.call("GET", "/apis/apps", Value::Null).await;
    assert_eq!(code, 200);
    assert_eq!(v["kind"], "APIGroup");
    assert_eq!(v["preferredVersion"]["groupVersion"], "apps/v1");
    let (code, _) = h.call("GET", "/apis/nope", Value::Null).await;
    assert_eq!(code, 404);
    let (_, v) = h.call("GET", "/api/v1", Value::Null).await;
    let pods_status = v["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods/status")
        .cloned();
    assert_eq!(
        pods_status.unwrap()["verbs"],
        json!(["get", "patch", "update"])
    );
}

/// `?timeout=` is checked in front of every path, as kube-apiserver's
/// WithRequestDeadline (texts recorded from 1.32), but not for a watch, which
/// it does not bound.
#[tokio::test]
async fn a_timeout_that_does_not_parse_is_a_bad_request_on_any_path() {
    let h = harness().await;
    for path in [
        "/version?timeout=invalid",
        "/api/v1/namespaces?timeout=invalid",
    ] {
        let (code, v) = h.call("GET", path, Value::Null).await;
        assert_eq!(code, 400, "{path}: {v}");
        assert_eq!(
            v["message"],
            "invalid timeout specified in the request URL - time: invalid duration \"invalid\"",
            "{path}"
        );
    }
    let (code, v) = h
        .call("GET", "/api/v1/namespaces?timeout=1", Value::Null)
        .await;
    assert_eq!(code, 400);
    assert_eq!(
        v["message"],
        "invalid timeout specified in the request URL - time: missing unit in duration \"1\""
    );
    for fine in ["timeout=0s", "timeout=3m", "timeout=", "timeoutSeconds=1"] {
        let (code, v) = h
            .call("GET", &format!("/api/v1/namespaces?{fine}"), Value::Null)
            .await;
        assert_eq!(code, 200, "{fine}: {v}");
    }
    let (code, _, _) = h
        .send_raw(
            "GET",
            "/api/v1/namespaces?watch=true&timeoutSeconds=1&timeout=bad",
            "",
            Vec::new(),
            None,
        )
        .await;
    assert_eq!(code, 200, "a watch's timeout is not checked");
}

/// A field the object leaves out reads as Go's zero value of its type (a
/// Node without `spec.unschedulable` is schedulable), as kube-apiserver's
/// field sets format it; a string reads as empty.
#[tokio::test]
async fn field_selectors_read_absent_fields_as_zero_values() {
    let h = harness().await;
    let (code, _) = h
        .call("POST", "/api/v1/nodes", json!({"metadata": {"name": "n"}}))
        .await;
    assert_eq!(code, 201);
    for (selector, count) in [
        ("spec.unschedulable%3Dfalse", 1),
        ("spec.unschedulable%3Dtrue", 0),
        ("spec.unschedulable!%3Dfalse", 0),
        ("metadata.name%3Dn,spec.unschedulable%3Dfalse", 1),
    ] {
        let (code, v) = h
            .call(
                "GET",
                &format!("/api/v1/nodes?fieldSelector={selector}"),
                Value::Null,
            )
            .await;
        assert_eq!(code, 200, "{v}");
        assert_eq!(v["items"].as_array().unwrap().len(), count, "{selector}");
    }
}
