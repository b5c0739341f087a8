//! PersistentVolume, PersistentVolumeClaim, StatefulSet and VolumeAttachment as
//! the real kube-apiserver 1.32 sends them (`tests/fixtures/<group>/*.json` and
//! `*.pb`, fetched with `Accept: application/json` and `Accept:
//! application/vnd.kubernetes.protobuf`): the JSON decodes without unknown
//! fields and writes back to the same value, the protobuf re-encodes to exactly
//! Go's bytes, and the table hooks give the real server's rows.

use kapi_api_types::apps::v1::StatefulSet;
use kapi_api_types::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kapi_api_types::storage::v1::VolumeAttachment;
use kapi_runtime::Resource;
use kapi_runtime::meta::ListMeta;
use kapi_runtime::proto::{Field, Message, Reader, envelope, wire};
use kapi_runtime::scheme::{Decoded, KindEntry};
use serde_json::{Value, json};

use crate::support::go_bytes::{assert_same_key_order, assert_written_in_go_order};

fn read(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn decode<K: Resource>(json: &[u8], what: &str) -> Decoded {
    KindEntry::of::<K>()
        .ops
        .decode_json(json)
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// The object's JSON as the server writes it, `kind` and `apiVersion` included.
fn written(decoded: &Decoded) -> Value {
    let mut out = Vec::new();
    decoded.object.write_json(&mut out).expect("writes JSON");
    serde_json::from_slice(&out).expect("our JSON parses")
}

/// The JSON fixture decodes into `K` with no unknown field, passes the kind's
/// validation and writes back to the same JSON value.
fn assert_json_round_trip<K: Resource>(name: &str) {
    let body = read(name);
    let mut decoded = decode::<K>(&body, name);
    assert_eq!(decoded.unknown_fields, Vec::<String>::new(), "{name}");
    let go: Value = serde_json::from_slice(&body).expect("fixture is JSON");
    assert_eq!(written(&decoded), go, "{name}");
    assert_written_in_go_order(&*decoded.object, &body, name);
    let errors = decoded.object.admit();
    assert!(errors.is_empty(), "{name}: {errors:?}");
}

/// Every item of a JSON list fixture decodes into `K` with no unknown field and
/// writes back to the same value (items carry no `kind`/`apiVersion`).
fn assert_json_list_round_trip<K: Resource>(name: &str) -> usize {
    let list: Value = serde_json::from_slice(&read(name)).expect("fixture is JSON");
    let items = list["items"].as_array().expect("items");
    for (i, item) in items.iter().enumerate() {
        let what = format!("{name} items[{i}]");
        let decoded = decode::<K>(&serde_json::to_vec(item).expect("JSON"), &what);
        assert_eq!(decoded.unknown_fields, Vec::<String>::new(), "{what}");
        assert_eq!(
            &decoded.object.to_json_value().expect("JSON"),
            item,
            "{what}"
        );
        let ours = serde_json::to_vec(decoded.object.as_serialize()).expect("JSON");
        let go = serde_json::to_vec(item).expect("JSON");
        assert_same_key_order(&ours, &go, &what);
    }
    items.len()
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

/// The protobuf fixture decodes into `K` and re-encodes to Go's bytes, envelope
/// included; returns the object.
fn assert_proto_round_trip<K: Resource + Message>(name: &str) -> K {
    let body = read(name);
    let unknown = envelope::decode(&body).expect("envelope");
    assert_eq!(unknown.kind, K::INFO.kind, "{name}");
    let object = K::decode(unknown.raw).unwrap_or_else(|e| panic!("{name}: {e}"));
    let ours = object.encode_to_vec();
    assert_same_bytes(&ours, unknown.raw, name);
    let enveloped = envelope::encode(unknown.api_version, unknown.kind, &ours);
    assert_same_bytes(&enveloped, &body, &format!("{name} envelope"));
    object
}

/// Every item of a protobuf list fixture re-encodes to Go's bytes, and so does
/// the whole list.
fn assert_proto_list_round_trip<K: Resource + Message>(name: &str) -> usize {
    let body = read(name);
    let unknown = envelope::decode(&body).expect("envelope");
    assert_eq!(unknown.kind, format!("{}List", K::INFO.kind), "{name}");
    let mut r = Reader::new(unknown.raw);
    let mut ours = Vec::new();
    let mut items = 0;
    while !r.is_empty() {
        let (number, wire_type) = r.key().expect("key");
        match number {
            1 => {
                let mut meta = ListMeta::default();
                Field::merge_field(&mut meta, wire_type, &mut r).expect("ListMeta");
                meta.encode_field(1, &mut ours);
            }
            2 => {
                let raw = r.len_delimited().expect("item");
                let item = K::decode(raw).unwrap_or_else(|e| panic!("{name}: {e}"));
                let encoded = item.encode_to_vec();
                assert_same_bytes(&encoded, raw, &format!("{name} items[{items}]"));
                wire::put_bytes(&mut ours, 2, &encoded);
                items += 1;
            }
            other => panic!("{name}: unexpected field {other}"),
        }
    }
    assert_same_bytes(&ours, unknown.raw, name);
    items
}

#[test]
fn persistent_volume_json_round_trips() {
    assert_json_round_trip::<PersistentVolume>("core/persistentvolume.json");
}

#[test]
fn persistent_volume_protobuf_re_encodes_to_gos_bytes() {
    let pv = assert_proto_round_trip::<PersistentVolume>("core/persistentvolume.pb");
    let csi = pv.spec.csi.expect("a CSI volume");
    assert_eq!(csi.volume_handle, "vol-0123");
    let stage = csi.node_stage_secret_ref.expect("node stage secret");
    assert_eq!(stage.namespace.as_deref(), Some("core-b"));
    assert_eq!(pv.status.reason.as_deref(), Some("RecycleFailed"));
}

/// One volume per source of `PersistentVolumeSource` but CSI (in the single
/// object fixture): every source struct meets Go's JSON and bytes.
#[test]
fn persistent_volumes_of_every_source_round_trip() {
    let name = "core/persistentvolumelist";
    let json_items = assert_json_list_round_trip::<PersistentVolume>(&format!("{name}.json"));
    let proto_items = assert_proto_list_round_trip::<PersistentVolume>(&format!("{name}.pb"));
    assert_eq!(json_items, 22);
    assert_eq!(proto_items, json_items);
}

#[test]
fn persistent_volume_claim_json_round_trips() {
    assert_json_round_trip::<PersistentVolumeClaim>("core/persistentvolumeclaim.json");
}

#[test]
fn persistent_volume_claim_protobuf_re_encodes_to_gos_bytes() {
    let pvc = assert_proto_round_trip::<PersistentVolumeClaim>("core/persistentvolumeclaim.pb");
    let conditions = pvc.status.conditions.expect("conditions");
    assert_eq!(conditions.len(), 2);
    // A zero metav1.Time is a value field Go writes as an empty message.
    assert!(conditions[1].last_probe_time.is_none());
}

/// Go's apps/v1 conversion writes `kind: PersistentVolumeClaim` and `apiVersion:
/// v1` into every claim template: they are understood on the way in and written
/// back in Go's place.
#[test]
fn statefulset_json_round_trips_with_claim_template_type_meta() {
    assert_json_round_trip::<StatefulSet>("apps/statefulset.json");
}

#[test]
fn statefulset_protobuf_re_encodes_to_gos_bytes() {
    let set = assert_proto_round_trip::<StatefulSet>("apps/statefulset.pb");
    let templates = set.spec.volume_claim_templates.expect("claim templates");
    assert_eq!(templates[1].spec.volume_mode.as_deref(), Some("Block"));
    assert_eq!(set.status.available_replicas, 2);
}

#[test]
fn volume_attachment_json_round_trips() {
    assert_json_round_trip::<VolumeAttachment>("storage.k8s.io/volumeattachment.json");
    assert_json_round_trip::<VolumeAttachment>("storage.k8s.io/volumeattachment-pv.json");
}

#[test]
fn volume_attachment_protobuf_re_encodes_to_gos_bytes() {
    let inline = assert_proto_round_trip::<VolumeAttachment>("storage.k8s.io/volumeattachment.pb");
    let spec = inline.spec.source.inline_volume_spec.expect("inline spec");
    assert_eq!(spec.mount_options, Some(vec!["noatime".to_owned()]));
    let detach = inline.status.detach_error.expect("detach error");
    assert!(detach.time.is_none());
    let by_name =
        assert_proto_round_trip::<VolumeAttachment>("storage.k8s.io/volumeattachment-pv.pb");
    assert_eq!(
        by_name.spec.source.persistent_volume_name.as_deref(),
        Some("core-b-rich")
    );
}

/// The cells of a fixture object; the Age cell holds the creation time, which
/// the server turns into an age.
fn cells<K: Resource>(name: &str) -> Vec<Value> {
    let decoded = decode::<K>(&read(name), name);
    decoded
        .object
        .table_cells()
        .expect("the kind computes its cells")
}

fn created(name: &str) -> Value {
    let go: Value = serde_json::from_slice(&read(name)).expect("fixture is JSON");
    go["metadata"]["creationTimestamp"].clone()
}

/// Rows as `kubectl get` showed them on the real server (Name left out).
#[test]
fn table_rows_match_the_real_servers() {
    let pv = "core/persistentvolume.json";
    assert_eq!(
        cells::<PersistentVolume>(pv),
        [
            json!("10Gi"),
            json!("RWO,ROX,RWX"),
            json!("Retain"),
            json!("Failed"),
            json!("core-b/data"),
            json!("fast"),
            json!("<unset>"),
            json!("RecycleFailed"),
            created(pv),
            json!("Filesystem"),
        ]
    );
    let pvc = "core/persistentvolumeclaim.json";
    assert_eq!(
        cells::<PersistentVolumeClaim>(pvc),
        [
            json!("Bound"),
            json!("core-b-rich"),
            json!("10Gi"),
            json!("RWO,ROX"),
            json!("fast"),
            json!("<unset>"),
            created(pvc),
            json!("Filesystem"),
        ]
    );
    let sts = "apps/statefulset.json";
    assert_eq!(
        cells::<StatefulSet>(sts),
        [
            json!("2/3"),
            created(sts),
            json!("db"),
            json!("postgres:16")
        ]
    );
    let va = "storage.k8s.io/volumeattachment.json";
    assert_eq!(
        cells::<VolumeAttachment>(va),
        [
            json!("csi.example.com"),
            json!(""),
            json!("node-1"),
            json!(true),
            created(va)
        ]
    );
    let va = "storage.k8s.io/volumeattachment-pv.json";
    assert_eq!(
        cells::<VolumeAttachment>(va),
        [
            json!("csi.example.com"),
            json!("core-b-rich"),
            json!("node-2"),
            json!(true),
            created(va)
        ]
    );
}
