//! The storage, networking, discovery and events kinds against objects the
//! real kube-apiserver 1.32 sent (`tests/fixtures/<group>/<kind>.json` and
//! `.pb`, fetched with `Accept: application/json` and
//! `application/vnd.kubernetes.protobuf`): the JSON decodes without unknown
//! fields and encodes back to the same value, the protobuf re-encodes to Go's
//! exact bytes, both decode to the same object, and the table cells match the
//! real server's Table rows for these objects.

use kapi_api_types::discovery::v1::EndpointSlice;
use kapi_api_types::events::v1::Event;
use kapi_api_types::networking::v1::{Ingress, IngressClass, NetworkPolicy};
use kapi_api_types::storage::v1::{CSIDriver, CSINode, CSIStorageCapacity, StorageClass};
use kapi_runtime::Resource;
use kapi_runtime::proto::{Message, envelope};
use kapi_runtime::scheme::KindEntry;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::support::go_bytes::assert_written_in_go_order;

fn fixture(path: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[track_caller]
fn assert_same_bytes(ours: &[u8], go: &[u8], what: &str) {
    if ours != go {
        let at = ours
            .iter()
            .zip(go)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(go.len()));
        panic!(
            "{what}: bytes differ from Go's at offset {at} (ours {} bytes, Go {} bytes)\n ours: {:02x?}\n   go: {:02x?}",
            ours.len(),
            go.len(),
            &ours[at.saturating_sub(8)..(at + 24).min(ours.len())],
            &go[at.saturating_sub(8)..(at + 24).min(go.len())],
        );
    }
}

/// Checks the JSON and protobuf fixtures `<name>.json` and `<name>.pb` of kind
/// `K`, and returns the kind's table cells for the object, if it computes them.
fn check<K>(name: &str) -> Option<Vec<Value>>
where
    K: Resource + Message + DeserializeOwned,
{
    let info = K::INFO;
    let api_version = if info.group.is_empty() {
        info.version.to_owned()
    } else {
        format!("{}/{}", info.group, info.version)
    };

    // JSON: every field known, and written back as Go wrote it.
    let json = fixture(&format!("{name}.json"));
    let decoded = KindEntry::of::<K>()
        .ops
        .decode_json(&json)
        .unwrap_or_else(|e| panic!("{name}.json: {e}"));
    assert_eq!(
        decoded.unknown_fields,
        Vec::<String>::new(),
        "{name}.json: unknown fields"
    );
    let go_json: Value = serde_json::from_slice(&json).expect("fixture is JSON");
    let from_json: K = serde_json::from_slice(&json).expect("decodes");
    let mut ours = serde_json::to_value(&from_json).expect("encodes");
    let object = ours.as_object_mut().expect("an object");
    object.insert("kind".into(), json!(info.kind));
    object.insert("apiVersion".into(), json!(api_version));
    assert_eq!(ours, go_json, "{name}.json: written back differently");
    assert_written_in_go_order(&*decoded.object, &json, &format!("{name}.json"));

    // Protobuf: Go's bytes, envelope included.
    let body = fixture(&format!("{name}.pb"));
    let unknown = envelope::decode(&body).unwrap_or_else(|e| panic!("{name}.pb: {e}"));
    assert_eq!(unknown.kind, info.kind, "{name}.pb");
    assert_eq!(unknown.api_version, api_version, "{name}.pb");
    let from_proto = K::decode(unknown.raw).unwrap_or_else(|e| panic!("{name}.pb: {e}"));
    assert_same_bytes(
        &from_proto.encode_to_vec(),
        unknown.raw,
        &format!("{name}.pb"),
    );
    let enveloped = envelope::encode(unknown.api_version, unknown.kind, unknown.raw);
    assert_same_bytes(&enveloped, &body, &format!("{name}.pb envelope"));

    // Both encodings carry the same object (compared as JSON values: the
    // managed fields are raw JSON text, spaced differently in the two).
    let proto_json = serde_json::to_value(&from_proto).expect("encodes");
    let json_json = serde_json::to_value(&from_json).expect("encodes");
    assert_eq!(
        proto_json, json_json,
        "{name}: protobuf and JSON decode differently"
    );

    decoded.object.table_cells()
}

#[test]
fn storage_class() {
    let cells = check::<StorageClass>("storage/storageclass").expect("cells");
    assert_eq!(
        cells,
        [
            json!("csi.storage-net.example.com"),
            json!("Retain"),
            json!("WaitForFirstConsumer"),
            json!(true)
        ]
    );
}

#[test]
fn csi_driver() {
    let cells = check::<CSIDriver>("storage/csidriver").expect("cells");
    assert_eq!(
        cells,
        [
            json!(false),
            json!(true),
            json!(true),
            json!("storage-net.example.com,"),
            json!(true),
            json!("Persistent,Ephemeral")
        ]
    );
}

#[test]
fn csi_node() {
    // The second driver's `topologyKeys` is `null`, as kubelet leaves it.
    let cells = check::<CSINode>("storage/csinode").expect("cells");
    assert_eq!(cells, [json!(2)]);
}

#[test]
fn csi_storage_capacity() {
    // No hook: the one column (`Created At`) is the creation timestamp as is.
    let cells = check::<CSIStorageCapacity>("storage/csistoragecapacity");
    assert_eq!(cells, None);
}

#[test]
fn ingress_class() {
    let cells = check::<IngressClass>("networking/ingressclass").expect("cells");
    assert_eq!(
        cells,
        [
            json!("example.com/ingress-controller"),
            json!("IngressParameters.k8s.example.com/external-lb")
        ]
    );
}

#[test]
fn ingress() {
    let cells = check::<Ingress>("networking/ingress").expect("cells");
    assert_eq!(
        cells,
        [
            json!("storage-net-nginx"),
            json!("web.example.com,*.example.com"),
            json!("203.0.113.10,203.0.113.11,lb.example.com"),
            json!("80, 443")
        ]
    );
}

#[test]
fn ingress_with_a_rule_without_http() {
    // Protobuf nests the inlined rule value: Go writes it empty when `http` is
    // unset. The unset class prints as `<none>`, no TLS as port 80 only.
    let cells = check::<Ingress>("networking/ingress-minimal").expect("cells");
    assert_eq!(
        cells,
        [
            json!("<none>"),
            json!("only.example.com"),
            json!(""),
            json!("80")
        ]
    );
}

#[test]
fn network_policy() {
    let cells = check::<NetworkPolicy>("networking/networkpolicy").expect("cells");
    assert_eq!(cells, [json!("app=db,tier notin (test)")]);
}

#[test]
fn endpoint_slice() {
    let cells = check::<EndpointSlice>("discovery/endpointslice").expect("cells");
    assert_eq!(
        cells,
        [
            json!("IPv4"),
            json!("8080,9090,53 + 1 more..."),
            json!("10.244.1.7,10.244.2.9,10.244.3.1")
        ]
    );
}

#[test]
fn endpoint_slice_without_endpoints_or_ports() {
    // Go writes `"endpoints": null` and `"ports": null` for the empty lists.
    let cells = check::<EndpointSlice>("discovery/endpointslice-empty").expect("cells");
    assert_eq!(cells, [json!("FQDN"), json!("<unset>"), json!("<unset>")]);
}

#[test]
fn event() {
    // Written through the core API with every field, read through events.k8s.io.
    let cells = check::<Event>("events/event").expect("cells");
    // Last Seen comes from the series, First Seen from the deprecated first
    // timestamp; the server prints both as ages.
    assert_eq!(cells[0], json!("2025-01-02T04:05:06Z"));
    assert_eq!(
        cells[1..7],
        [
            json!("Normal"),
            json!("Sync"),
            json!("ingress/storage-net-web"),
            json!("spec.rules[0]"),
            json!("ingress-controller, worker-1"),
            json!("Scheduled for sync"),
        ]
    );
    assert_eq!(cells[7], json!("2025-01-02T03:04:05Z"));
    assert_eq!(cells[8], json!(6));
}
