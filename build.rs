//! Regenerates `generated/` from the annotated kinds on every `cargo build`:
//! discovery documents, the table of kinds and the OpenAPI documents, computed by the same functions the
//! server serves them with. Files are rewritten only when their content changes,
//! so the output is deterministic and reviewable; `tests/all/generated_fresh.rs`
//! fails when the checked-in copy is stale.
//!
//! Under `KAPI_REQUIRE_ALL` (set by `.ci/run`) nothing is written: the test then
//! compares what was committed, not what this build just wrote, and can fail.

use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=api-types/src");
    println!("cargo::rerun-if-changed=runtime/src");
    println!("cargo::rerun-if-changed=generated");
    println!("cargo::rerun-if-env-changed=KAPI_REQUIRE_ALL");
    if std::env::var("KAPI_REQUIRE_ALL").is_ok_and(|v| !v.is_empty() && v != "0") {
        return;
    }
    let mut scheme = kapi_runtime::scheme::Scheme::new();
    kapi_api_types::install(&mut scheme);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated");
    let files = kapi_runtime::discovery::documents(&scheme)
        .into_iter()
        .chain(kapi_runtime::openapi::document::files(&scheme));
    for (name, content) in files {
        let path = root.join(&name);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(content.as_str()) {
            continue;
        }
        if let Some(dir) = path.parent()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            println!("cargo::warning=cannot create {}: {e}", dir.display());
            continue;
        }
        if let Err(e) = std::fs::write(&path, content) {
            println!("cargo::warning=cannot write {}: {e}", path.display());
        }
    }
}
