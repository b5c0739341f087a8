//! Helpers shared by the integration tests: fixtures and the scheme's admit path.

#![allow(dead_code)]

use kapi_runtime::Resource;
use kapi_runtime::scheme::KindEntry;
use kapi_runtime::validation::FieldErrors;
use serde_json::{Map, Value};

/// An object after the admit path, as JSON.
#[derive(Debug)]
pub struct Admitted {
    /// The object as the kind's type wrote it back.
    pub object: Map<String, Value>,
    /// Fields the kind's type did not know.
    pub unknown_fields: Vec<String>,
    /// Validation errors.
    pub errors: FieldErrors,
}

/// A fixture of `tests/fixtures/` as a JSON object.
pub fn fixture(name: &str) -> Map<String, Value> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    match serde_json::from_str(&text).expect("fixture is JSON") {
        Value::Object(object) => object,
        other => panic!("{path} is not an object: {other}"),
    }
}

/// A file of `../shared/upstream/` (Kubernetes 1.32's OpenAPI document and
/// protobuf definitions, outside this repository), or `None` where it is
/// absent: the skip is recorded in `target/kapi-skipped-tests.txt`, or fails
/// the test under `KAPI_REQUIRE_ALL` (`.ci/run`).
#[track_caller]
pub fn upstream(name: &str) -> Option<String> {
    let path = format!(
        "{}/../../shared/upstream/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => {
            let how = format!("{e}; ../shared/upstream comes with the shared checkout");
            kapi_test_support::require::require(false, &path, &how);
            None
        }
    }
}

/// Runs `object` through the kind's create path (decode, the kind's
/// PrepareForCreate, prepare, default, validate), as the server does on a
/// create, and encodes the result as JSON.
pub fn admit<T: Resource>(object: Map<String, Value>) -> Admitted {
    try_admit::<T>(object).expect("the object decodes")
}

/// Like [`admit`], with the decode error when the object does not decode.
pub fn try_admit<T: Resource>(object: Map<String, Value>) -> Result<Admitted, String> {
    let decoded = KindEntry::of::<T>()
        .ops
        .decode_value(Value::Object(object))?;
    let mut typed = decoded.object;
    typed.prepare_create();
    let errors = typed.admit();
    let Value::Object(object) = typed.to_json_value()? else {
        return Err("not a JSON object".into());
    };
    Ok(Admitted {
        object,
        unknown_fields: decoded.unknown_fields,
        errors,
    })
}

/// Like [`admit`], and asserts the object was fully understood and valid.
pub fn admit_clean<T: Resource>(object: Map<String, Value>) -> Value {
    let admitted = admit::<T>(object);
    assert_eq!(
        admitted.unknown_fields,
        Vec::<String>::new(),
        "unknown fields"
    );
    assert!(
        admitted.errors.is_empty(),
        "validation errors: {}",
        admitted.errors.summary()
    );
    Value::Object(admitted.object)
}

/// A JSON object from a literal.
pub fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(object) => object,
        other => panic!("not an object: {other}"),
    }
}

/// The JSON paths of the validation errors, e.g. `spec.ports[0].port`.
pub fn error_paths(admitted: &Admitted) -> Vec<String> {
    admitted
        .errors
        .0
        .iter()
        .map(|e| e.path.to_string())
        .collect()
}
