//! Random objects of every registered kind survive the server's round trip:
//! protobuf in, the object as the request path holds it, protobuf out.
//!
//! Objects are generated from each kind's own message descriptors (so every field
//! of every nested message gets values, and kinds added later are covered without
//! touching this file), with values a Go client could send: any strings, integers
//! and bytes, and well-formed values where a type has a format of its own (Time,
//! Quantity, IntOrString, FieldsV1). For each object `o`:
//! `decode(encode(o)) == o`, and encoding is a fixpoint (the second encoding equals
//! the first, byte for byte). A seeded generator keeps failures reproducible.

use kapi_runtime::scheme::Scheme;

use crate::support;

use support::Rng;
use support::random::message;

/// Objects generated per kind.
const ROUNDS: usize = 200;

#[test]
fn random_objects_of_every_kind_round_trip() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut kinds = 0;
    for entry in scheme.entries() {
        // Every built-in kind speaks protobuf, as upstream's do.
        let codec = entry
            .proto
            .unwrap_or_else(|| panic!("{} has no protobuf messages", entry.info.kind));
        kinds += 1;
        let (name, fields) = codec.describe();
        for round in 0..ROUNDS {
            let bytes = message(&mut rng, name, &fields, 0);
            let context = || format!("{} round {round}: {bytes:02x?}", entry.info.kind);
            // What the request path holds after a protobuf body...
            let object = codec
                .decode(&bytes)
                .unwrap_or_else(|e| panic!("{e}: {}", context()));
            // ...encoded for a protobuf client, and read back.
            let encoded = codec
                .encode(&*object)
                .unwrap_or_else(|e| panic!("encode: {e}: {}", context()));
            let again = codec
                .decode(&encoded)
                .unwrap_or_else(|e| panic!("decode of our own bytes: {e}: {}", context()));
            if !again.object_eq(&*object) {
                let (a, b) = (format!("{object:#?}"), format!("{again:#?}"));
                let diff: Vec<_> = a
                    .lines()
                    .zip(b.lines())
                    .filter(|(x, y)| x != y)
                    .take(6)
                    .collect();
                panic!("decoding our own bytes differs {diff:?}: {}", context());
            }
            assert_eq!(
                codec.encode(&*again).expect("encode"),
                encoded,
                "encoding is not a fixpoint: {}",
                context()
            );
            // A JSON client reads the same object. (Its JSON reads back to the
            // same JSON; what JSON cannot carry, such as an empty byte string
            // apart from an absent one, is lost on that hop in Go as well.)
            // The generator writes JSON into raw embedded documents, so every
            // object has a JSON form: none is skipped.
            let json = serde_json::to_vec(object.as_serialize())
                .unwrap_or_else(|e| panic!("no JSON ({e}): {}", context()));
            let from_json = entry
                .ops
                .decode_json(&json)
                .unwrap_or_else(|e| panic!("JSON: {e}: {}", context()))
                .object;
            let again_json = serde_json::to_vec(from_json.as_serialize()).expect("JSON");
            if again_json != json {
                let at = json
                    .iter()
                    .zip(&again_json)
                    .take_while(|(a, b)| a == b)
                    .count();
                let around = |text: &[u8]| {
                    String::from_utf8_lossy(&text[at.saturating_sub(80)..(at + 80).min(text.len())])
                        .into_owned()
                };
                panic!(
                    "JSON does not read back, from byte {at}:\n  ours:  {}\n  again: {}\n{}",
                    around(&json),
                    around(&again_json),
                    context()
                );
            }
        }
    }
    assert!(kinds >= 8, "only {kinds} kinds have protobuf messages");
}
