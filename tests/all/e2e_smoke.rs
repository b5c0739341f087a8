//! A few tests of Kubernetes' own e2e suite (`../shared/e2e/`, the v1.32 tests
//! that pass on the reference control plane), run through `e2e/run` against this
//! build's kapi with the real kube-controller-manager and kube-scheduler: the
//! smoke subset of `e2e/smoke.txt`. The whole list is run with `e2e/run` by hand
//! (about 10 minutes on two cores); this keeps CI from losing what it proved.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use kapi_test_support::require::require;

#[test]
fn e2e_smoke_subset_passes_on_kapi() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared");
    let present =
        shared.join("e2e/run").is_file() && shared.join("reference/start-control-plane").is_file();
    let what = format!("{}/e2e/run and reference/", shared.display());
    if !require(
        present,
        &what,
        "Kubernetes' e2e suite and the reference binaries come with ../shared",
    ) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(root.join("e2e/run"))
        .arg(out.path())
        .env("SMOKE", "1")
        .env("KAPI_BIN", env!("CARGO_BIN_EXE_kapi"))
        .env("JOBS", "2")
        .env("TEST_TIMEOUT", "240")
        .output()
        .expect("run e2e/run");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = std::fs::read_to_string(out.path().join("summary.txt")).unwrap_or_default();
    let failed = std::fs::read_to_string(out.path().join("failed.txt")).unwrap_or_default();
    let expected = std::fs::read_to_string(root.join("e2e/smoke.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .count();
    assert!(
        output.status.success()
            && failed.trim().is_empty()
            && summary.contains(&format!("{expected} passed, 0 failed")),
        "the e2e smoke tests failed:\n{stdout}\n{}\nfailed:\n{failed}\nlogs in {}",
        String::from_utf8_lossy(&output.stderr),
        out.keep().display()
    );
}
