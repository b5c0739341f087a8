//! Protobuf over HTTP without a socket: bodies in and out, negotiation, watch
//! frames, JSON-only kinds, and hostile bodies that must change nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use axum::http::StatusCode;
use common::{Harness, harness, harness_with};
use kapi_api_types::core::v1::ConfigMap;
use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::{DeleteOptions, ObjectMeta, Status};
use kapi_runtime::proto::{Message, envelope};
use kapi_runtime::scheme::KindEntry;
use serde::{Deserialize, Serialize};
use serde_json::json;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str) -> Vec<u8> {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some([("a".to_owned(), "1".to_owned())].into()),
        ..ConfigMap::default()
    };
    envelope::encode("v1", "ConfigMap", &cm.encode_to_vec())
}

fn open_configmap(body: &[u8]) -> ConfigMap {
    let u = envelope::decode(body).expect("enveloped");
    assert_eq!((u.api_version, u.kind), ("v1", "ConfigMap"));
    ConfigMap::decode(u.raw).expect("a ConfigMap message")
}

fn open_status(body: &[u8]) -> Status {
    let u = envelope::decode(body).expect("enveloped");
    assert_eq!((u.api_version, u.kind), ("v1", "Status"));
    Status::decode(u.raw).expect("a Status message")
}

#[tokio::test]
async fn create_get_list_update_delete_in_protobuf() {
    let h = harness().await;
    let accept = Some("application/vnd.kubernetes.protobuf,application/json");
    let (code, body, ct) = h
        .send_raw("POST", CMS, PROTOBUF, configmap("p"), accept)
        .await;
    assert_eq!(code, StatusCode::CREATED);
    assert_eq!(ct.as_deref(), Some(PROTOBUF));
    let created = open_configmap(&body);
    assert_eq!(created.metadata.name.as_deref(), Some("p"));
    assert!(created.metadata.uid.is_some() && created.metadata.resource_version.is_some());

    // JSON clients read what the protobuf client wrote.
    let (_, json) = h
        .call("GET", &format!("{CMS}/p"), serde_json::Value::Null)
        .await;
    assert_eq!(json["data"]["a"], "1");
    assert!(json["metadata"].get("generateName").is_none(), "{json}");

    let (code, body, _) = h
        .send_raw("GET", &format!("{CMS}/p"), "", vec![], accept)
        .await;
    assert_eq!(code, 200);
    assert_eq!(open_configmap(&body), created);

    let (code, body, ct) = h.send_raw("GET", CMS, "", vec![], accept).await;
    assert_eq!((code, ct.as_deref()), (StatusCode::OK, Some(PROTOBUF)));
    let u = envelope::decode(&body).unwrap();
    assert_eq!(u.kind, "ConfigMapList");

    let mut changed = created.clone();
    changed.data = Some([("a".to_owned(), "2".to_owned())].into());
    let body = envelope::encode("v1", "ConfigMap", &changed.encode_to_vec());
    let (code, body, _) = h
        .send_raw("PUT", &format!("{CMS}/p"), PROTOBUF, body, accept)
        .await;
    assert_eq!(code, 200);
    assert_eq!(open_configmap(&body).data.unwrap()["a"], "2");

    let options = DeleteOptions {
        grace_period_seconds: Some(0),
        ..DeleteOptions::default()
    };
    let body = envelope::encode("meta.k8s.io/v1", "DeleteOptions", &options.encode_to_vec());
    let (code, body, _) = h
        .send_raw("DELETE", &format!("{CMS}/p"), PROTOBUF, body, accept)
        .await;
    assert_eq!(code, 200);
    assert_eq!(open_status(&body).status.as_deref(), Some("Success"));
    assert_eq!(h.count(CMS).await, 0);
}

#[tokio::test]
async fn errors_travel_as_protobuf_status() {
    let h = harness().await;
    let accept = Some("application/vnd.kubernetes.protobuf, application/json");
    let (code, body, ct) = h
        .send_raw("GET", &format!("{CMS}/missing"), "", vec![], accept)
        .await;
    assert_eq!(
        (code, ct.as_deref()),
        (StatusCode::NOT_FOUND, Some(PROTOBUF))
    );
    let status = open_status(&body);
    assert_eq!(status.reason.as_deref(), Some("NotFound"));
    assert_eq!(status.code, Some(404));
}

/// Truncated, garbage, wrong magic, wrong kind, lengths past the end, deep
/// nesting: 400 with a clear message, and nothing stored.
#[tokio::test]
async fn hostile_bodies_are_refused_and_change_nothing() {
    let h = harness().await;
    let good = configmap("x");
    let mut deep = Vec::new();
    for _ in 0..10_000 {
        deep = [vec![0x0a], varint(deep.len()), deep].concat();
    }
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("no magic", b"{\"kind\":\"ConfigMap\"}".to_vec()),
        ("magic only", b"k8s\0".to_vec()),
        ("truncated", good[..good.len() - 7].to_vec()),
        ("garbage", (0..200u8).map(|i| i.wrapping_mul(97)).collect()),
        (
            "wrong kind",
            envelope::encode("v1", "Secret", envelope::decode(&good).unwrap().raw),
        ),
        (
            "length past the end",
            [b"k8s\0".to_vec(), vec![0x12, 0xff, 0xff, 0xff, 0x0f, 0x0a]].concat(),
        ),
        ("deep nesting", envelope::encode("v1", "ConfigMap", &deep)),
        (
            "bad UTF-8",
            envelope::encode("v1", "ConfigMap", &[0x0a, 0x04, 0x0a, 0x02, 0xff, 0xfe]),
        ),
        (
            "huge repeated count",
            envelope::encode("v1", "ConfigMap", &[0x0a, 0xff, 0xff, 0xff, 0xff, 0x07]),
        ),
    ];
    for (what, body) in cases {
        let (code, value, _) = h.send("POST", CMS, PROTOBUF, body, None).await;
        assert_eq!(code, 400, "{what}: {value}");
        assert_eq!(value["reason"], "BadRequest", "{what}: {value}");
        assert!(
            value["message"].as_str().unwrap().len() > 10,
            "{what}: {value}"
        );
    }
    assert_eq!(h.count(CMS).await, 0);
}

fn varint(mut v: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// A kind that declares no field numbers: JSON only, as custom resources are.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(group = "example.kapi.dev", version = "v1")]
pub struct Gadget {
    /// Metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Size.
    #[serde(default)]
    pub size: i32,
}

#[tokio::test]
async fn json_only_kinds_answer_as_kube_apiserver_answers_for_custom_resources() {
    let h: Harness = harness_with(|s| s.add(KindEntry::of::<Gadget>())).await;
    let uri = "/apis/example.kapi.dev/v1/namespaces/default/gadgets";
    let (code, v, _) = h.send("POST", uri, PROTOBUF, configmap("g"), None).await;
    assert_eq!(code, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{v}");
    let body = json!({"apiVersion": "example.kapi.dev/v1", "kind": "Gadget", "metadata": {"name": "g"}, "size": 3});
    let accept = Some("application/vnd.kubernetes.protobuf, application/json");
    let (code, v, ct) = h
        .send(
            "POST",
            uri,
            "application/json",
            body.to_string().into_bytes(),
            accept,
        )
        .await;
    assert_eq!(
        (code, ct.as_deref()),
        (StatusCode::CREATED, Some("application/json"))
    );
    assert_eq!(v["size"], 3);
    // As kube-apiserver 1.32 answers for a CRD: a protobuf Status listing all
    // three media types.
    let (code, body, ct) = h.send_raw("GET", uri, "", vec![], Some(PROTOBUF)).await;
    assert_eq!(
        (code, ct.as_deref()),
        (StatusCode::NOT_ACCEPTABLE, Some(PROTOBUF))
    );
    let status = open_status(&body);
    assert_eq!(status.reason.as_deref(), Some("NotAcceptable"));
    assert_eq!(
        status.message.as_deref(),
        Some(
            "only the following media types are accepted: application/json, \
             application/yaml, application/vnd.kubernetes.protobuf"
        )
    );
    // A missing object of a JSON-only kind: a protobuf Status for a protobuf-first
    // client, as upstream sends for a CRD.
    let accept = Some("application/vnd.kubernetes.protobuf, application/json");
    let (code, body, _) = h
        .send_raw("GET", &format!("{uri}/nope"), "", vec![], accept)
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);
    assert_eq!(open_status(&body).reason.as_deref(), Some("NotFound"));
}

#[tokio::test]
async fn a_protobuf_table_is_not_acceptable_but_metadata_is() {
    let h = harness().await;
    let (code, _, _) = h
        .send_raw("POST", CMS, PROTOBUF, configmap("t"), None)
        .await;
    assert_eq!(code, StatusCode::CREATED);
    let table = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io";
    // kube-apiserver answers this 406 in JSON: no offered range can carry a Status.
    let (code, v, ct) = h.send("GET", CMS, "", vec![], Some(table)).await;
    assert_eq!(code, StatusCode::NOT_ACCEPTABLE, "{v}");
    assert_eq!(ct.as_deref(), Some("application/json"));
    assert_eq!(v["reason"], "NotAcceptable");
    let partial =
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
    let (code, body, _) = h.send_raw("GET", CMS, "", vec![], Some(partial)).await;
    assert_eq!(code, 200);
    let u = envelope::decode(&body).unwrap();
    assert_eq!(
        (u.api_version, u.kind),
        ("meta.k8s.io/v1", "PartialObjectMetadataList")
    );
}

/// Length-prefixed WatchEvents whose object is enveloped, BOOKMARKs included.
#[tokio::test]
async fn watch_frames_in_protobuf() {
    let h = harness().await;
    let (code, _, _) = h
        .send_raw("POST", CMS, PROTOBUF, configmap("w"), None)
        .await;
    assert_eq!(code, StatusCode::CREATED);
    let uri = format!(
        "{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
    );
    let (code, body, ct) = h
        .send_raw(
            "GET",
            &uri,
            "",
            vec![],
            Some("application/vnd.kubernetes.protobuf;stream=watch"),
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        ct.as_deref(),
        Some("application/vnd.kubernetes.protobuf;stream=watch")
    );
    let mut rest = &body[..];
    let mut events = Vec::new();
    while rest.len() >= 4 {
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let frame = &rest[4..4 + len];
        rest = &rest[4 + len..];
        let (type_, object) = watch_event(frame);
        let u = envelope::decode(&object).expect("the event's object is enveloped");
        assert_eq!(u.kind, "ConfigMap");
        let cm = ConfigMap::decode(u.raw).unwrap();
        events.push((type_, cm.metadata));
    }
    assert!(rest.is_empty());
    assert_eq!(events[0].0, "ADDED");
    assert_eq!(events[0].1.name.as_deref(), Some("w"));
    let end = events
        .iter()
        .find(|(t, _)| t == "BOOKMARK")
        .expect("a bookmark");
    let annotations = end.1.annotations.as_ref().unwrap();
    assert_eq!(annotations["k8s.io/initial-events-end"], "true");
    // The list the watch stands for, empty, in protobuf.
    use base64::Engine;
    let blueprint = base64::engine::general_purpose::STANDARD
        .decode(&annotations["kubernetes.io/initial-events-list-blueprint"])
        .unwrap();
    let list = envelope::decode(&blueprint).expect("an enveloped list");
    assert_eq!((list.api_version, list.kind), ("v1", "ConfigMapList"));
}

#[tokio::test]
async fn metadata_watch_lists_end_with_a_metadata_bookmark() {
    let h = harness().await;
    let (code, _, _) = h
        .send_raw("POST", CMS, PROTOBUF, configmap("m"), None)
        .await;
    assert_eq!(code, StatusCode::CREATED);
    let uri = format!(
        "{CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
    );
    // What client-go's metadata informers ask for when a kind has no protobuf.
    let accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
    let (code, body, _) = h.send_raw("GET", &uri, "", vec![], Some(accept)).await;
    assert_eq!(code, 200);
    let frames: Vec<serde_json::Value> = body
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(frames[0]["type"], "ADDED");
    assert_eq!(frames[0]["object"]["kind"], "PartialObjectMetadata");
    let end = frames
        .iter()
        .find(|f| f["type"] == "BOOKMARK")
        .expect("a bookmark");
    assert_eq!(end["object"]["kind"], "PartialObjectMetadata", "{end}");
    assert_eq!(end["object"]["apiVersion"], "meta.k8s.io/v1");
    let annotations = &end["object"]["metadata"]["annotations"];
    assert_eq!(annotations["k8s.io/initial-events-end"], "true");
    use base64::Engine;
    let blueprint = base64::engine::general_purpose::STANDARD
        .decode(
            annotations["kubernetes.io/initial-events-list-blueprint"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&blueprint).unwrap(),
        json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": {}, "items": null})
    );
}

/// Splits a WatchEvent message: type (1) and object.raw (2.1).
fn watch_event(frame: &[u8]) -> (String, Vec<u8>) {
    use kapi_runtime::proto::Reader;
    let mut r = Reader::new(frame);
    let (mut type_, mut object) = (String::new(), Vec::new());
    while !r.is_empty() {
        match r.key().unwrap() {
            (1, _) => type_ = String::from_utf8(r.len_delimited().unwrap().to_vec()).unwrap(),
            (2, _) => {
                let mut ext = r.nested().unwrap();
                let (n, _) = ext.key().unwrap();
                assert_eq!(n, 1);
                object = ext.len_delimited().unwrap().to_vec();
            }
            (n, _) => panic!("unexpected field {n}"),
        }
    }
    (type_, object)
}

/// Legacy discovery in protobuf, enveloped with each document's own type, and
/// `/version`, which has no protobuf form (406, as kube-apiserver answers).
#[tokio::test]
async fn discovery_in_protobuf() {
    use kapi_runtime::meta::{APIGroupList, APIResourceList, APIVersions};
    let h = harness().await;
    let accept = Some("application/vnd.kubernetes.protobuf, application/json");
    let (code, body, ct) = h.send_raw("GET", "/api", "", vec![], accept).await;
    assert_eq!((code, ct.as_deref()), (StatusCode::OK, Some(PROTOBUF)));
    let u = envelope::decode(&body).unwrap();
    assert_eq!((u.api_version, u.kind), ("", "APIVersions"));
    assert_eq!(APIVersions::decode(u.raw).unwrap().versions, vec!["v1"]);

    let (_, body, _) = h.send_raw("GET", "/apis", "", vec![], accept).await;
    let u = envelope::decode(&body).unwrap();
    assert_eq!((u.api_version, u.kind), ("v1", "APIGroupList"));
    let groups = APIGroupList::decode(u.raw).unwrap();
    assert!(groups.groups.iter().any(|g| g.name == "apps"));

    let (_, body, _) = h.send_raw("GET", "/api/v1", "", vec![], accept).await;
    let u = envelope::decode(&body).unwrap();
    assert_eq!(u.kind, "APIResourceList");
    let list = APIResourceList::decode(u.raw).unwrap();
    let pods = list.resources.iter().find(|r| r.name == "pods").unwrap();
    assert!(pods.verbs.iter().any(|v| v == "watch"), "{:?}", pods.verbs);

    let (code, body, ct) = h
        .send_raw("GET", "/version", "", vec![], Some(PROTOBUF))
        .await;
    assert_eq!(
        (code, ct.as_deref()),
        (StatusCode::NOT_ACCEPTABLE, Some(PROTOBUF))
    );
    let status = open_status(&body);
    // kube-apiserver 1.32's words, read off its protobuf answer.
    assert_eq!(
        status.message.as_deref(),
        Some("406: Not Acceptable\n\nAvailable representations: application/json")
    );
    assert_eq!(status.reason.as_deref(), Some("NotAcceptable"));
    let (code, _, ct) = h.send_raw("GET", "/version", "", vec![], accept).await;
    assert_eq!(
        (code, ct.as_deref()),
        (StatusCode::OK, Some("application/json"))
    );
}
