//! Every kind's body decoders: JSON, YAML and protobuf bytes for the kind
//! the first byte picks, then the decoded object's defaults, validation
//! and encodings. Nothing may panic.

#![no_main]

use std::sync::OnceLock;

use kapi_runtime::scheme::{KindEntry, Scheme};
use kapi_server::body::Input;
use libfuzzer_sys::fuzz_target;

fn scheme() -> &'static Scheme {
    static SCHEME: OnceLock<Scheme> = OnceLock::new();
    SCHEME.get_or_init(|| {
        let mut scheme = Scheme::new();
        kapi_api_types::install(&mut scheme);
        scheme
    })
}

fuzz_target!(|data: &[u8]| {
    let [kind, format, body @ ..] = data else {
        return;
    };
    let entries: Vec<&KindEntry> = scheme().entries().collect();
    let entry = entries[usize::from(*kind) % entries.len()];
    let decoded = match format % 3 {
        0 => Input::from_json(entry, body),
        1 => Input::from_yaml(entry, body),
        _ => kapi_server::protobuf::decode_object(entry, body),
    };
    if let Ok(input) = decoded {
        let mut object = input.object;
        object.typed_mut().apply_defaults();
        let _ = object.to_value();
        let _ = kapi_server::protobuf::encode_object(entry, &object);
    }
});
