//! Objects as the real kube-apiserver 1.32 sends them in protobuf
//! (`tests/fixtures/protobuf/*.pb`, fetched with `Accept:
//! application/vnd.kubernetes.protobuf`): decoding them and encoding the result
//! again, through the same JSON form the server's request path uses, gives back
//! exactly Go's bytes, envelope included.

use kapi_runtime::meta::ListMeta;
use kapi_runtime::proto::{Field, Message, Reader, envelope, wire};
use kapi_runtime::scheme::{KindEntry, Scheme};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/protobuf/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn entry(kind: &str) -> KindEntry {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    scheme
        .entries()
        .find(|e| e.info.kind == kind)
        .unwrap_or_else(|| panic!("{kind} is not registered"))
        .clone()
}

/// Go's object message -> our object -> its JSON -> our object -> our message:
/// both the protobuf codec and the JSON form keep every byte of Go's.
fn round_trip(entry: &KindEntry, raw: &[u8]) -> Vec<u8> {
    let codec = entry.proto.expect("the kind has protobuf");
    let object = codec.decode(raw).expect("Go's bytes decode");
    assert_eq!(
        codec.encode(&*object).expect("encodes"),
        raw,
        "{}: straight re-encoding",
        entry.info.kind
    );
    let json = serde_json::to_vec(object.as_serialize()).expect("JSON");
    let back = entry
        .ops
        .decode_json(&json)
        .expect("our JSON decodes")
        .object;
    codec.encode(&*back).expect("encodes")
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

#[test]
fn objects_re_encode_to_gos_bytes() {
    for (file, kind) in [
        ("pod.pb", "Pod"),
        ("deployment.pb", "Deployment"),
        ("service.pb", "Service"),
        ("namespace.pb", "Namespace"),
        ("secret.pb", "Secret"),
        ("configmap.pb", "ConfigMap"),
        ("event.pb", "Event"),
    ] {
        let body = fixture(file);
        let unknown = envelope::decode(&body).expect("envelope");
        assert_eq!(unknown.kind, kind, "{file}");
        let entry = entry(kind);
        let ours = round_trip(&entry, unknown.raw);
        assert_same_bytes(&ours, unknown.raw, file);
        let enveloped = envelope::encode(unknown.api_version, unknown.kind, &ours);
        assert_same_bytes(&enveloped, &body, &format!("{file} envelope"));
    }
}

#[test]
fn lists_re_encode_to_gos_bytes() {
    for (file, kind) in [("nodelist.pb", "Node"), ("configmaplist.pb", "ConfigMap")] {
        let body = fixture(file);
        let unknown = envelope::decode(&body).expect("envelope");
        assert_eq!(unknown.kind, format!("{kind}List"), "{file}");
        let entry = entry(kind);
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
                    let item = r.len_delimited().expect("item");
                    wire::put_bytes(&mut ours, 2, &round_trip(&entry, item));
                    items += 1;
                }
                other => panic!("{file}: unexpected field {other}"),
            }
        }
        assert!(items > 0, "{file} has items");
        assert_same_bytes(&ours, unknown.raw, file);
    }
}

#[test]
fn a_pod_decodes_to_what_its_json_says() {
    let body = fixture("pod.pb");
    let unknown = envelope::decode(&body).expect("envelope");
    let pod = kapi_api_types::core::v1::pod::Pod::decode(unknown.raw).expect("pod");
    let json = serde_json::to_value(&pod).expect("json");
    assert_eq!(json["metadata"]["name"], "rich");
    assert_eq!(
        json["spec"]["containers"][0]["ports"][0]["containerPort"],
        8080
    );
    assert_eq!(
        json["spec"]["containers"][0]["livenessProbe"]["httpGet"]["port"],
        "http"
    );
    assert_eq!(
        json["spec"]["containers"][0]["env"][1]["valueFrom"]["configMapKeyRef"]["name"],
        "cfg"
    );
    assert_eq!(json["spec"]["volumes"][0]["emptyDir"]["sizeLimit"], "1Gi");
    assert_eq!(
        json["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "100m"
    );
    // Go's empty strings for unset value fields do not appear in JSON.
    assert!(json["metadata"].get("generateName").is_none());
}
