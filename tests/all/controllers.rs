//! The built-in controllers in the real binary: on by default (`--controllers`
//! given explicitly here, since the test harness turns them off otherwise),
//! off with `--controllers=-*`, and an unknown name refused at start. Their
//! behaviour is tested in depth in `server/tests/all/controllers.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kapi_test_support::{Server, http_get};

fn kapi() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_kapi"))
}

fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}");
}

#[test]
fn serve_runs_the_controllers_by_default() {
    let s = Server::start_args(kapi(), &["--controllers=*"]);
    s.kubectl_ok(&["create", "namespace", "ctl"]);
    wait_for("the default service account and kube-root-ca.crt", || {
        s.kubectl(&[
            "get",
            "serviceaccount/default",
            "configmap/kube-root-ca.crt",
            "-n",
            "ctl",
        ])
        .status
        .success()
    });
    let ca = s.kubectl_ok(&[
        "get",
        "configmap",
        "kube-root-ca.crt",
        "-n",
        "ctl",
        "-o",
        "jsonpath={.data.ca\\.crt}",
    ]);
    let on_disk = std::fs::read_to_string(s.data_dir().join("ca.crt")).unwrap();
    assert_eq!(ca.trim(), on_disk.trim());
    let holder = s.kubectl_ok(&[
        "get",
        "lease",
        "kapi-controller-manager",
        "-n",
        "kube-system",
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ]);
    assert!(holder.contains('_'), "{holder}");
}

#[test]
fn controllers_flag_turns_them_off() {
    let s = Server::start_args(kapi(), &["--controllers=-*"]);
    s.kubectl_ok(&["create", "namespace", "quiet"]);
    std::thread::sleep(Duration::from_secs(3));
    let (code, _) = http_get(
        s.address,
        "/api/v1/namespaces/quiet/serviceaccounts/default",
    )
    .unwrap();
    assert_eq!(code, 404);
    let (code, _) = http_get(
        s.address,
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kapi-controller-manager",
    )
    .unwrap();
    assert_eq!(code, 404);
}

#[test]
fn an_unknown_controller_is_a_startup_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(kapi())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--controllers=*,bogus",
            "--data-dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"bogus\" is not in the list of known controllers"),
        "{err}"
    );
}
