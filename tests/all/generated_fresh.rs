//! `generated/` is what `build.rs` writes from the annotated kinds; the checked-in
//! copy must match what the current code generates, file for file.
//!
//! A plain `cargo test` runs `build.rs` first, which rewrites `generated/`, so
//! locally this passes once the build has run; under `KAPI_REQUIRE_ALL`
//! (`.ci/run`) `build.rs` writes nothing and this compares what was committed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
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
    let openapi = kapi_runtime::openapi_documents::files(&scheme);
    assert!(
        openapi
            .iter()
            .any(|(name, _)| name == "openapi/v3/apis__apps__v1.json"),
        "an OpenAPI v3 document per group version"
    );
    documents.extend(openapi);
    let stale: Vec<&str> = documents
        .iter()
        .filter(|(name, expected)| {
            std::fs::read_to_string(root.join(name)).ok().as_ref() != Some(expected)
        })
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(
        stale.is_empty(),
        "stale or missing in generated/: {stale:?}; run `cargo build` (without \
         KAPI_REQUIRE_ALL) and commit generated/"
    );
    let generated: BTreeSet<&str> = documents.iter().map(|(name, _)| name.as_str()).collect();
    let extra: Vec<String> = files_under(&root)
        .into_iter()
        .filter(|name| !generated.contains(name.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "generated/ holds files the code no longer generates: {extra:?}; delete them"
    );
}

/// Every file under `root`, as a path relative to it with `/` separators.
fn files_under(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                let parts: Vec<_> = relative.iter().map(|p| p.to_string_lossy()).collect();
                files.push(parts.join("/"));
            }
        }
    }
    files.sort();
    files
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
