//! Events are one stored kind served as core/v1 and events.k8s.io/v1, and
//! kube-apiserver checks a write by the version it comes through: an old
//! client's core Event may be named freely and leave out the reporting
//! fields, a write through events.k8s.io/v1 is held to the new shape.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kapi_test_support::Server;

const CORE_EVENT: &str = "\
apiVersion: v1
kind: Event
metadata: {name: Started_Once, namespace: default}
involvedObject: {kind: Pod, name: web, namespace: default}
reason: Started
count: 1
source: {component: kubelet}
";

const NEW_EVENT: &str = "\
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: started, namespace: default}
eventTime: '2026-01-01T00:00:00.000000Z'
reportingController: example.com/ctl
reportingInstance: ctl-1
action: Start
reason: Started
type: Normal
regarding: {kind: Pod, name: web, namespace: default}
";

#[test]
fn an_event_is_checked_by_the_version_it_is_written_through() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    // The old shape through core/v1: any name a URL path can carry.
    s.kubectl_stdin_ok(&["create", "-f", "-"], CORE_EVENT);

    // The same object through events.k8s.io/v1 is refused for its name and
    // every old-shape field, with upstream's words.
    let renamed = CORE_EVENT
        .replace("apiVersion: v1", "apiVersion: events.k8s.io/v1")
        .replace("involvedObject:", "regarding:")
        .replace("count: 1", "deprecatedCount: 1")
        .replace("source:", "deprecatedSource:")
        .replace("Started_Once", "Started_Twice");
    let err = s.kubectl_stdin(&["create", "-f", "-"], &renamed);
    let stderr = String::from_utf8_lossy(&err.stderr).into_owned();
    assert!(!err.status.success(), "{stderr}");
    for expected in [
        "metadata.name: Invalid value: \"Started_Twice\": a lowercase RFC 1123 subdomain",
        "eventTime: Required value",
        "type: Invalid value: \"\": has invalid value: ",
        "count: Invalid value: \"\": needs to be unset",
        "source: Invalid value: \"\": needs to be unset",
    ] {
        assert!(
            stderr.contains(expected),
            "{expected:?} missing from {stderr}"
        );
    }

    // A new-shape event is accepted, and may then not change what it reports.
    s.kubectl_stdin_ok(&["create", "-f", "-"], NEW_EVENT);
    let err = s.kubectl_err(&[
        "patch",
        "events.v1.events.k8s.io",
        "started",
        "--type=merge",
        "-p",
        r#"{"note":"changed","series":{"count":1}}"#,
    ]);
    for expected in [
        "message: Invalid value: \"changed\": field is immutable",
        "series.count: Invalid value: \"\": should be at least 2",
        "series.lastObservedTime: Required value",
    ] {
        assert!(err.contains(expected), "{expected:?} missing from {err}");
    }
    // Through core/v1 the same change is an old client's update: allowed.
    s.kubectl_ok(&[
        "patch",
        "events.v1.",
        "started",
        "--type=merge",
        "-p",
        r#"{"message":"changed"}"#,
    ]);
}
