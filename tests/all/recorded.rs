//! Answers recorded from kube-apiserver 1.32, kept as fixtures under
//! `tests/fixtures/reference/`: the comparison tests ask kapi what they
//! once asked both servers and check its answers against the recorded ones.
//!
//! To record them again from a kube-apiserver you run yourself (set up as
//! the fixture's entry in `tests/fixtures/reference/README.md` says), point
//! `KAPI_REFERENCE_KUBECONFIG` at its kubeconfig: the test then sends the
//! same requests to that server and writes its answers to the fixture
//! instead of checking kapi.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The variable naming the kubeconfig of a reference server to record from.
pub const REFERENCE: &str = "KAPI_REFERENCE_KUBECONFIG";

/// The path of fixture `name` (`tests/fixtures/reference/<name>.json`).
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference")
        .join(format!("{name}.json"))
}

/// The reference server's kubeconfig when the test is to record from it.
pub fn reference() -> Option<PathBuf> {
    std::env::var_os(REFERENCE)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The answers of fixture `name`: recorded now from the reference server
/// when [`REFERENCE`] names one (`ask` runs against it and its answers are
/// written), else read from the fixture. Answers are kept as JSON.
pub fn answers(name: &str, ask: impl FnOnce(&Path) -> Value) -> Value {
    let path = fixture(name);
    if let Some(kubeconfig) = reference() {
        let answers = ask(&kubeconfig);
        let text = serde_json::to_string_pretty(&answers).expect("answers serialize");
        std::fs::write(&path, format!("{text}\n"))
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        eprintln!("recorded {} from {}", path.display(), kubeconfig.display());
        return answers;
    }
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the recorded answers {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The variable naming the audit log of the reference server being
/// recorded from (for the tests that read audit events).
pub const REFERENCE_AUDIT_LOG: &str = "KAPI_REFERENCE_AUDIT_LOG";

/// The reference server's audit log, named by [`REFERENCE_AUDIT_LOG`].
pub fn reference_audit_log() -> PathBuf {
    std::env::var_os(REFERENCE_AUDIT_LOG)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{REFERENCE_AUDIT_LOG} names the reference's audit log"))
}

/// The URL of the server of `kubeconfig`'s current context.
pub fn server_url(kubeconfig: &Path) -> String {
    let (_, url, _) = crate::rbac::kubectl(
        kubeconfig,
        &[
            "config",
            "view",
            "--minify",
            "-o",
            "jsonpath={.clusters[0].cluster.server}",
        ],
        None,
    );
    url
}

/// Whether the test is recording (it then checks nothing of kapi).
pub fn recording() -> bool {
    reference().is_some()
}
