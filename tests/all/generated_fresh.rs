//! `generated/` is what `build.rs` writes from the annotated kinds; the checked-in
//! copy must match what the current code generates.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[test]
fn checked_in_generated_files_are_fresh() {
    let mut scheme = kapi_runtime::scheme::Scheme::new();
    kapi_api_types::install(&mut scheme);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated");
    let mut documents = kapi_runtime::discovery::documents(&scheme);
    assert!(
        documents.len() >= 4,
        "discovery documents for every group version"
    );
    let openapi = kapi_runtime::openapi::document::files(&scheme);
    assert!(
        openapi
            .iter()
            .any(|(name, _)| name == "openapi/v3/apis__apps__v1.json"),
        "an OpenAPI v3 document per group version"
    );
    documents.extend(openapi);
    for (name, expected) in documents {
        let actual = std::fs::read_to_string(root.join(&name)).unwrap_or_default();
        assert!(
            actual == expected,
            "generated/{name} is stale: run `cargo build` and commit generated/"
        );
    }
}

#[test]
fn every_kind_is_registered_without_a_list() {
    let mut scheme = kapi_runtime::scheme::Scheme::new();
    kapi_api_types::install(&mut scheme);
    let kinds: Vec<String> = scheme
        .entries()
        .map(|e| format!("{}/{}", e.info.api_version(), e.info.kind))
        .collect();
    for expected in [
        "v1/Namespace",
        "v1/ConfigMap",
        "v1/Secret",
        "v1/Node",
        "v1/Pod",
        "v1/Service",
        "v1/Event",
        "apps/v1/Deployment",
    ] {
        assert!(
            kinds.iter().any(|k| k == expected),
            "{expected} missing from {kinds:?}"
        );
    }
}
