//! Checks of fixtures against Go's bytes, shared by the kind tests: a JSON
//! fixture decodes with no unknown field and is written back as Go wrote it, a
//! protobuf fixture re-encodes to exactly Go's bytes. Names are paths below
//! `tests/fixtures/` without the extension (`apps/replicaset`).

use kapi_runtime::proto::{Message, envelope};
use kapi_runtime::scheme::KindEntry;
use kapi_runtime::{DynObject, Resource};
use serde_json::{Value, json};

pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The JSON fixture decodes with no unknown field and serializes back to the
/// same value; returns the typed object.
pub fn json_round_trip<K: Resource + PartialEq>(name: &str) -> K {
    let bytes = fixture(&format!("{name}.json"));
    let decoded = KindEntry::of::<K>()
        .ops
        .decode_json(&bytes)
        .unwrap_or_else(|e| panic!("{name}.json: {e}"));
    assert_eq!(
        decoded.unknown_fields,
        Vec::<String>::new(),
        "{name}.json: unknown fields"
    );
    let typed: K = serde_json::from_slice(&bytes).expect("decodes");
    let mut ours = serde_json::to_value(&typed).expect("serializes");
    let object = ours.as_object_mut().expect("an object");
    object.insert("kind".into(), json!(K::INFO.kind));
    object.insert("apiVersion".into(), json!(K::INFO.api_version()));
    let go: Value = serde_json::from_slice(&bytes).expect("fixture is JSON");
    assert_eq!(ours, go, "{name}.json: written back differently");
    assert_written_in_go_order(&*decoded.object, &bytes, &format!("{name}.json"));
    typed
}

/// The server's JSON of `object` (`write_json`: `kind` and `apiVersion` first)
/// has the `recorded` JSON's keys in the recorded order. Value equality ignores
/// the order of keys, which is part of the wire form (Go writes struct fields
/// in declaration order).
#[track_caller]
pub fn assert_written_in_go_order(object: &dyn DynObject, recorded: &[u8], what: &str) {
    let mut ours = Vec::new();
    object.write_json(&mut ours).expect("writes JSON");
    assert_same_key_order(&ours, recorded, what);
}

/// `ours` and `recorded` are the same JSON with the same keys in the same
/// order. Both are parsed (serde_json keeps the order here) and written
/// compactly, which takes only whitespace away: the fixtures are indented, and
/// managed fields keep the text they were read from (`kinds_access` and
/// `kinds_kinds` compare exact bytes with compact recordings).
#[track_caller]
pub fn assert_same_key_order(ours: &[u8], recorded: &[u8], what: &str) {
    let compact = |text: &[u8]| {
        let value: Value = serde_json::from_slice(text).expect("JSON");
        serde_json::to_vec(&value).expect("JSON")
    };
    let (ours, go) = (compact(ours), compact(recorded));
    if ours != go {
        let at = ours.iter().zip(&go).take_while(|(a, b)| a == b).count();
        let around = |text: &[u8]| {
            String::from_utf8_lossy(&text[at.saturating_sub(60)..(at + 60).min(text.len())])
                .into_owned()
        };
        panic!(
            "{what}: our JSON differs from the recorded JSON (in key order) from byte {at}:\n  ours: {}\n    go: {}",
            around(&ours),
            around(&go)
        );
    }
}

/// The protobuf fixture decodes and re-encodes to exactly Go's bytes, envelope
/// included; returns the typed object.
pub fn proto_round_trip<K: Resource + Message>(name: &str) -> K {
    let body = fixture(&format!("{name}.pb"));
    let unknown = envelope::decode(&body).expect("envelope");
    assert_eq!(unknown.kind, K::INFO.kind, "{name}.pb");
    assert_eq!(unknown.api_version, K::INFO.api_version(), "{name}.pb");
    let typed = K::decode(unknown.raw).unwrap_or_else(|e| panic!("{name}.pb: {e:?}"));
    let ours = typed.encode_to_vec();
    assert_same_bytes(&ours, unknown.raw, name);
    let enveloped = envelope::encode(unknown.api_version, unknown.kind, &ours);
    assert_same_bytes(&enveloped, &body, name);
    typed
}

#[track_caller]
pub fn assert_same_bytes(ours: &[u8], go: &[u8], what: &str) {
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

/// Both fixtures of a kind round-trip, and describe the same object (modulo the
/// embedded JSON of a RawExtension, which protobuf keeps as sent).
pub fn both<K: Resource + Message + PartialEq>(name: &str) -> K {
    let from_json = json_round_trip::<K>(name);
    let from_proto = proto_round_trip::<K>(name);
    assert_eq!(
        serde_json::to_value(&from_json).expect("JSON"),
        serde_json::to_value(&from_proto).expect("JSON"),
        "{name}: the JSON and protobuf fixtures differ"
    );
    from_json
}

#[test]
#[should_panic(expected = "in key order")]
fn the_key_order_check_sees_keys_swapped() {
    assert_same_key_order(br#"{"a":1,"b":2}"#, br#"{ "b": 2, "a": 1 }"#, "swapped");
}
