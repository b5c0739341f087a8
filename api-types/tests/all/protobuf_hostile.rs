//! Bad protobuf never hurts: random bytes, and truncations and byte flips of real
//! kube-apiserver objects, fed to every kind's decoder return an object or an
//! error, never a panic, and an object that decodes encodes again.
//! (A seeded generator keeps failures reproducible.)

use kapi_runtime::proto::envelope;
use kapi_runtime::scheme::Scheme;

use crate::support;

use support::Rng;

fn fixtures() -> Vec<Vec<u8>> {
    let dir = format!("{}/tests/fixtures/protobuf", env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let body = std::fs::read(entry.expect("entry").path()).expect("read");
        out.push(envelope::decode(&body).expect("envelope").raw.to_vec());
    }
    out
}

#[test]
fn random_and_mutated_bytes_decode_or_fail_cleanly() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let codecs: Vec<_> = scheme.entries().filter_map(|e| e.proto).collect();
    let seeds = fixtures();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut decoded, mut refused) = (0, 0);
    for round in 0..3000 {
        let input: Vec<u8> = match round % 3 {
            // Random bytes of random length.
            0 => (0..rng.below(300)).map(|_| rng.next() as u8).collect(),
            // A real object cut short.
            1 => {
                let seed = &seeds[rng.below(seeds.len())];
                seed[..rng.below(seed.len())].to_vec()
            }
            // A real object with a few bytes changed.
            _ => {
                let mut seed = seeds[rng.below(seeds.len())].clone();
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(seed.len());
                    seed[at] = rng.next() as u8;
                }
                seed
            }
        };
        for codec in &codecs {
            match codec.decode(&input) {
                Ok(mut object) => {
                    decoded += 1;
                    codec
                        .encode(&*object)
                        .expect("a decoded object encodes again");
                    // What passes admission (and so can be stored) can be
                    // given to a JSON client.
                    if object.admit().is_empty() {
                        serde_json::to_vec(object.as_serialize())
                            .expect("an admitted object is JSON");
                    }
                }
                Err(message) => {
                    refused += 1;
                    assert!(!message.is_empty());
                }
            }
        }
        // The envelope reader itself, on the same bytes.
        let _ = envelope::decode(&[b"k8s\0".as_slice(), &input].concat());
    }
    assert!(
        decoded > 0 && refused > 0,
        "decoded {decoded}, refused {refused}"
    );
}

#[test]
fn deep_nesting_and_huge_lengths_are_refused() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let pod = scheme
        .entries()
        .find(|e| e.info.kind == "Pod")
        .and_then(|e| e.proto)
        .expect("pod");
    // spec (2) -> containers (2) -> ... nested far past any real object.
    let mut deep = Vec::new();
    for _ in 0..100_000 {
        let mut outer = vec![0x12];
        let mut len = deep.len();
        while len >= 0x80 {
            outer.push((len as u8) | 0x80);
            len >>= 7;
        }
        outer.push(len as u8);
        outer.extend_from_slice(&deep);
        deep = outer;
        if deep.len() > 2_000_000 {
            break;
        }
    }
    assert!(pod.decode(&deep).is_err());
    // A length prefix claiming 4 GiB.
    assert!(pod.decode(&[0x12, 0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
    // A repeated field announcing more entries than bytes.
    assert!(pod.decode(&[0x12, 0x05, 0x12, 0x7f, 0x0a, 0x01]).is_err());
}
