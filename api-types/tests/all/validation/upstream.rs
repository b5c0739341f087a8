//! Runs the invalid manifests of `tests/fixtures/validation/` through our admit
//! path and compares the errors with the causes the real kube-apiserver 1.32
//! answered (`<case>.status.json`, recorded by `capture.py` beside them).

use kapi_runtime::Resource;
use kapi_runtime::scheme::KindEntry;
use kapi_runtime::validation::FieldErrors;
use serde_json::Value;

/// The namespace `capture.py` creates namespaced objects in.
const NAMESPACE: &str = "validation";

/// One field error as a StatusCause shows it: reason, field, message.
type Cause = (String, String, String);

fn read(case: &str, suffix: &str) -> Option<Value> {
    let path = format!(
        "{}/tests/fixtures/validation/{case}.{suffix}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).ok()?;
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}")))
}

/// Decodes `value`, converts it to the kind's hub (the stored version) and
/// runs the server's write path on it: the kind's PrepareForCreate (or
/// PrepareForUpdate against `old`), then admit.
fn admit<K: Resource>(
    value: Value,
    old: Option<&dyn kapi_runtime::DynObject>,
    errs: &mut FieldErrors,
) -> Box<dyn kapi_runtime::DynObject> {
    let mut value = value;
    if K::INFO.namespaced && value["metadata"]["namespace"].is_null() {
        // capture.py writes into this namespace; the server sets it from the path.
        value["metadata"]["namespace"] = Value::from(NAMESPACE);
    }
    let decoded = KindEntry::of::<K>()
        .ops
        .decode_value(value)
        .expect("the manifest decodes");
    assert_eq!(
        decoded.unknown_fields,
        Vec::<String>::new(),
        "unknown fields"
    );
    let mut object = decoded.object;
    if let Some(link) = K::HUB {
        object = (link.to_hub)(object).expect("the manifest converts to its hub");
    }
    match old {
        Some(old) => object.prepare_update(None, old),
        None => object.prepare_create(),
    }
    errs.0.extend(object.admit().0);
    object
}

/// The causes of the server's answer, without those of `metadata` (which the
/// server, not the kind, checks) unless `with_metadata`; sorted, as our rules
/// run in field order. A
/// message that goes on after a line break (the Go diff of two pod specs that
/// a forbidden pod update shows) is compared on its first line.
fn server_causes(status: &Value, with_metadata: bool) -> Vec<Cause> {
    let mut causes: Vec<Cause> = status["details"]["causes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            let message = text("message");
            let first_line = message.lines().next().unwrap_or_default().to_owned();
            (text("reason"), text("field"), first_line)
        })
        .filter(|(_, field, _)| with_metadata || !field.starts_with("metadata."))
        .collect();
    causes.sort();
    causes
}

/// Admits `<case>.in.json` (and, for an update case, checks it against the
/// admitted `<case>.old.json`) and asserts our errors are the server's causes.
pub fn check<K: Resource>(case: &str) {
    let input = read(case, "in").unwrap_or_else(|| panic!("{case}.in.json"));
    let status = read(case, "status").unwrap_or_else(|| panic!("{case}.status.json"));
    let mut errs = FieldErrors::default();
    let old = read(case, "old").map(|old| {
        let mut old_errs = FieldErrors::default();
        let old = admit::<K>(old, None, &mut old_errs);
        assert!(old_errs.is_empty(), "old object: {}", old_errs.summary());
        old
    });
    let object = admit::<K>(input, old.as_deref(), &mut errs);
    if let Some(old) = &old {
        object.validate_update(old.as_ref(), &mut errs);
    }
    K::validate_served(object.as_ref(), old.as_deref(), &mut errs);
    // A kind that reports causes under `metadata` itself (a node's taints)
    // is compared on them too.
    let with_metadata = errs
        .0
        .iter()
        .any(|e| e.path.as_str().starts_with("metadata."));
    let mut ours: Vec<Cause> = errs
        .0
        .iter()
        .map(|e| {
            (
                e.kind.reason().to_owned(),
                e.path.to_string(),
                e.message.clone(),
            )
        })
        .collect();
    ours.sort();
    let theirs = server_causes(&status, with_metadata);
    if ours != theirs {
        let show = |causes: &[Cause]| {
            causes
                .iter()
                .map(|(r, f, m)| format!("  {r} {f}: {m}"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{case}: causes differ\nours:\n{}\nserver:\n{}",
            show(&ours),
            show(&theirs)
        );
    }
}
