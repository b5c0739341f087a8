//! `--storage-media-type`: every verb on objects stored as protobuf, what lands in
//! the store, and a store that changes media type keeping its objects readable.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::http::StatusCode;
use kapi_api_types::core::v1::ConfigMap;
use kapi_runtime::proto::{Message, envelope};
use kapi_server::stored::StorageMediaType;
use kapi_storage::Storage;
use serde_json::{Value, json};

use crate::common;

use common::{Harness, harness, harness_stored_as};

#[tokio::test]
async fn protobuf_is_the_default() {
    let h = harness().await;
    let (code, _) = h.call("POST", CMS, cm("d", "x")).await;
    assert_eq!(code, StatusCode::CREATED);
    assert_eq!(
        stored_configmap(&stored(&h, "d").await).data.unwrap()["k"],
        "d"
    );
}

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn cm(name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "labels": {"app": app}}, "data": {"k": name}})
}

/// The stored bytes of ConfigMap `name` in `default`.
async fn stored(h: &Harness, name: &str) -> Vec<u8> {
    let key = format!("/registry/configmaps/default/{name}");
    h.store.get(&key).await.unwrap().unwrap().value.to_vec()
}

fn stored_configmap(bytes: &[u8]) -> ConfigMap {
    let unknown = envelope::decode(bytes).expect("stored as a protobuf envelope");
    assert_eq!((unknown.api_version, unknown.kind), ("v1", "ConfigMap"));
    ConfigMap::decode(unknown.raw).unwrap()
}

async fn data_of(h: &Harness, name: &str) -> Value {
    let (code, v) = h.call("GET", &format!("{CMS}/{name}"), Value::Null).await;
    assert_eq!(code, StatusCode::OK, "{v}");
    v["data"]["k"].clone()
}

#[tokio::test]
async fn every_verb_on_objects_stored_as_protobuf() {
    let h = harness_stored_as(StorageMediaType::Protobuf).await;
    for (name, app) in [("a", "x"), ("b", "y"), ("c", "y")] {
        let (code, v) = h.call("POST", CMS, cm(name, app)).await;
        assert_eq!(code, StatusCode::CREATED, "{v}");
    }
    // In the store: the envelope, the message, no resourceVersion (the revision is).
    let a = stored_configmap(&stored(&h, "a").await);
    assert_eq!(a.data.as_ref().unwrap()["k"], "a");
    assert_eq!(a.metadata.resource_version, None);
    assert!(a.metadata.uid.is_some());

    // get: the revision stamped as resourceVersion.
    let (_, got) = h.call("GET", &format!("{CMS}/a"), Value::Null).await;
    let rv = got["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let kv = h
        .store
        .get("/registry/configmaps/default/a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rv, kv.mod_revision.to_string());
    assert_eq!(got["metadata"]["labels"]["app"], "x");

    // list with label and field selectors (evaluated on decoded protobuf).
    assert_eq!(h.count(&format!("{CMS}?labelSelector=app%3Dy")).await, 2);
    assert_eq!(
        h.count(&format!("{CMS}?fieldSelector=metadata.name%3Db"))
            .await,
        1
    );

    // update, merge patch, then a watch from the first revision sees them.
    let mut changed = got.clone();
    changed["data"]["k"] = json!("a2");
    let (code, v) = h.call("PUT", &format!("{CMS}/a"), changed).await;
    assert_eq!(code, StatusCode::OK, "{v}");
    assert_eq!(data_of(&h, "a").await, "a2");
    let (code, v, _) = h
        .send(
            "PATCH",
            &format!("{CMS}/b"),
            "application/merge-patch+json",
            br#"{"data":{"k":"b2"}}"#.to_vec(),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    assert_eq!(
        stored_configmap(&stored(&h, "b").await).data.unwrap()["k"],
        "b2"
    );
    let (code, body, _) = h
        .send_raw(
            "GET",
            &format!("{CMS}?watch=true&resourceVersion={rv}&timeoutSeconds=1"),
            "",
            vec![],
            None,
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    let events: Vec<(String, String)> = String::from_utf8(body)
        .unwrap()
        .lines()
        .map(|line| {
            let e: Value = serde_json::from_str(line).unwrap();
            (
                e["type"].as_str().unwrap().to_owned(),
                e["object"]["data"]["k"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("ADDED".to_owned(), "b".to_owned()),
            ("ADDED".to_owned(), "c".to_owned()),
            ("MODIFIED".to_owned(), "a2".to_owned()),
            ("MODIFIED".to_owned(), "b2".to_owned()),
        ]
    );

    // A kind with defaults and a status subresource.
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let (code, created) = h.call("POST", DEPLOYMENTS, deployment).await;
    assert_eq!(code, StatusCode::CREATED, "{created}");
    let mut with_status = created.clone();
    with_status["status"] = json!({"replicas": 3, "observedGeneration": 1});
    let (code, v) = h
        .call("PUT", &format!("{DEPLOYMENTS}/d/status"), with_status)
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    let (_, got) = h
        .call("GET", &format!("{DEPLOYMENTS}/d"), Value::Null)
        .await;
    assert_eq!(got["status"]["replicas"], 3);
    assert_eq!(got["spec"], created["spec"], "defaults survive storage");
    let raw = h
        .store
        .get("/registry/deployments/default/d")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        envelope::decode(&raw.value).unwrap().kind,
        "Deployment",
        "stored as protobuf"
    );

    // delete and deletecollection.
    let (code, _) = h.call("DELETE", &format!("{CMS}/a"), Value::Null).await;
    assert_eq!(code, StatusCode::OK);
    let (code, _) = h
        .call(
            "DELETE",
            &format!("{CMS}?labelSelector=app%3Dy"),
            Value::Null,
        )
        .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(h.count(CMS).await, 0);
}

#[tokio::test]
async fn changing_the_media_type_keeps_stored_objects_readable() {
    let h = harness_stored_as(StorageMediaType::Json).await;
    let (code, _) = h.call("POST", CMS, cm("old", "x")).await;
    assert_eq!(code, StatusCode::CREATED);
    assert!(
        stored(&h, "old")
            .await
            .starts_with(b"{\"kind\":\"ConfigMap\"")
    );

    // Restarted writing protobuf: the JSON object reads as before, and is
    // rewritten as protobuf on its next write.
    let h = h.restart_stored_as(StorageMediaType::Protobuf).await;
    assert_eq!(data_of(&h, "old").await, "old");
    let (code, _) = h.call("POST", CMS, cm("new", "x")).await;
    assert_eq!(code, StatusCode::CREATED);
    assert!(stored(&h, "new").await.starts_with(envelope::MAGIC));
    assert!(stored(&h, "old").await.starts_with(b"{"));
    let (code, v, _) = h
        .send(
            "PATCH",
            &format!("{CMS}/old"),
            "application/merge-patch+json",
            br#"{"metadata":{"labels":{"touched":"yes"}}}"#.to_vec(),
            None,
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{v}");
    let old = stored_configmap(&stored(&h, "old").await);
    assert_eq!(old.metadata.labels.unwrap()["touched"], "yes");

    // And back to JSON: both read, list and select.
    let h = h.restart_stored_as(StorageMediaType::Json).await;
    assert_eq!(data_of(&h, "old").await, "old");
    assert_eq!(data_of(&h, "new").await, "new");
    assert_eq!(h.count(&format!("{CMS}?labelSelector=app%3Dx")).await, 2);
    assert_eq!(
        h.count(&format!("{CMS}?labelSelector=touched%3Dyes")).await,
        1
    );
}

#[tokio::test]
async fn yaml_storage_round_trips() {
    let h = harness_stored_as(StorageMediaType::Yaml).await;
    let (code, _) = h.call("POST", CMS, cm("y", "x")).await;
    assert_eq!(code, StatusCode::CREATED);
    let text = String::from_utf8(stored(&h, "y").await).unwrap();
    assert!(text.starts_with("kind: ConfigMap\n"), "{text}");
    assert_eq!(data_of(&h, "y").await, "y");
}
