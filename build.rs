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
    // The server links as a position-dependent executable, as Go links
    // kube-apiserver: a position-independent one makes the loader patch
    // 2 MB of pointers at every start, which costs start time and keeps
    // those pages resident (3.5 MiB of an idle server's memory).
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
    link_order();
    if std::env::var("KAPI_REQUIRE_ALL").is_ok_and(|v| !v.is_empty() && v != "0") {
        return;
    }
    let mut scheme = kapi_runtime::scheme::Scheme::new();
    kapi_api_types::install(&mut scheme);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated");
    let files = kapi_runtime::discovery::documents(&scheme)
        .into_iter()
        .chain(kapi_runtime::openapi_documents::files(&scheme));
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

/// A release build on x86-64 Linux (linked by rust-lld) places the functions
/// a fresh server runs side by side, as `bench/startup/order.txt` lists them
/// (`bench/startup/refresh-order.sh` writes it). Started, the server then
/// keeps about 5 MiB of its code resident instead of 17. `KAPI_LINK_ORDER=0`
/// links without it.
fn link_order() {
    println!("cargo::rerun-if-env-changed=KAPI_LINK_ORDER");
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    let wanted = env("PROFILE") == "release"
        && env("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && env("CARGO_CFG_TARGET_OS") == "linux"
        && env("CARGO_CFG_TARGET_ENV") == "gnu"
        && env("KAPI_LINK_ORDER") != "0";
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/startup/order.txt");
    println!("cargo::rerun-if-changed={}", order.display());
    if wanted && order.is_file() {
        println!(
            "cargo::rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo::rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
