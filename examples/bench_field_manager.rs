//! The cost of field ownership alone: ns per managedFields update of a
//! ConfigMap (as `bench_http` writes them: a 512-byte payload and a counter
//! a merge patch changes) on create and on update, and its parts (the
//! object's JSON, reading and writing FieldsV1, the comparison), in process.
//! Compare the totals with `bench_http`'s server CPU per write.
//!
//! `cargo run --release --example bench_field_manager`. Prints figures;
//! asserts nothing.

use std::hint::black_box;
use std::time::{Duration, Instant};

use kapi_api_types::core::v1::ConfigMap;
use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::scheme::Scheme;
use kapi_server::field_manager::{FieldManager, Schemas, Writer, entries};
use kapi_server::registry::{Endpoint, FieldValidation, Object, Scope, WriteOptions};
use kapi_structured_merge::set::Set;

/// Runs `f` for about half a second: ns per call.
fn ns_per_op(mut f: impl FnMut()) -> f64 {
    let mut runs = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(500) {
        for _ in 0..100 {
            f();
        }
        runs += 100;
    }
    start.elapsed().as_nanos() as f64 / runs as f64
}

fn config_map(counter: u32) -> Object {
    let object = ConfigMap {
        metadata: ObjectMeta {
            name: Some("bench-1".into()),
            namespace: Some("default".into()),
            uid: Some("6b7d3c3e-1f0e-4c55-9f4e-0d6f3a1c2b3d".into()),
            resource_version: Some("7".into()),
            creation_timestamp: Some(kapi_runtime::meta::Time::now()),
            ..Default::default()
        },
        data: Some(
            [
                ("payload".to_owned(), "x".repeat(512)),
                ("counter".to_owned(), counter.to_string()),
            ]
            .into(),
        ),
        ..Default::default()
    };
    Object::new(Box::new(object))
}

fn main() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let entry = scheme
        .get("", "v1", "configmaps")
        .expect("configmaps are registered")
        .clone();
    let schemas = Schemas::default();
    let manager = FieldManager {
        schemas: &schemas,
        scheme: &scheme,
    };
    let scope = Scope::new(&entry, Some("default"));
    let opts = WriteOptions {
        field_validation: FieldValidation::Strict,
        manager: "bench_http",
        ..WriteOptions::default()
    };
    let writer = || Writer::new(scope, Endpoint::Main, &opts);

    let mut created = config_map(0);
    manager.update(writer(), None, &mut created);
    let create = ns_per_op(|| {
        let mut object = config_map(0);
        manager.update(writer(), None, &mut object);
        black_box(object);
    });
    let build = ns_per_op(|| {
        black_box(config_map(0));
    });

    // A merge patch's result carries the live object's managedFields.
    let mut live = created.clone();
    let mut next = config_map(1);
    next.metadata_mut().managed_fields = live.metadata().managed_fields.clone();
    let update = ns_per_op(|| {
        let mut new = next.clone();
        manager.update(writer(), Some(&mut live), &mut new);
        black_box(new);
    });
    let clone = ns_per_op(|| {
        black_box(next.clone());
    });

    let to_value = ns_per_op(|| {
        black_box(live.to_value().ok());
    });
    let list = live.metadata().managed_fields.clone().unwrap_or_default();
    let decode = ns_per_op(|| {
        black_box(entries::decode(&list).ok());
    });
    let text = list
        .first()
        .and_then(|e| e.fields_v1.as_ref())
        .map(|f| String::from_utf8_lossy(f.raw()).into_owned())
        .unwrap_or_default();
    let set = Set::from_fields_v1(&text).unwrap_or_default();
    let read = ns_per_op(|| {
        black_box(Set::from_fields_v1(black_box(&text)).ok());
    });
    let write = ns_per_op(|| {
        black_box(set.to_fields_v1());
    });

    println!(
        "ConfigMap, one manager ({} bytes of FieldsV1: {text})",
        text.len()
    );
    println!("| step | ns |");
    println!("|---|---:|");
    println!("| ownership of a create | {:.0} |", create - build);
    println!("| ownership of an update | {:.0} |", update - clone);
    println!("| the object's JSON (to_value) | {to_value:.0} |");
    println!("| managedFields read (entries::decode) | {decode:.0} |");
    println!("| FieldsV1 text to Set | {read:.0} |");
    println!("| Set to FieldsV1 text | {write:.0} |");
}
