//! Durability: every acknowledged write survives `kill -9`, with the same
//! resourceVersions, and revisions keep growing after the restart.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use kapi_test_support::Server;

fn configmap(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\ndata:\n  n: {name}\n"
    )
}

fn versions(s: &Server) -> BTreeMap<String, String> {
    let list: serde_json::Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "configmaps", "-n", "default", "-o", "json"]))
            .unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["metadata"]["name"].as_str().unwrap().to_owned(),
                i["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect()
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().join("data");
    let mut s = Server::start_in(Path::new(env!("CARGO_BIN_EXE_kapi")), &data);
    for i in 0..8 {
        s.kubectl_stdin_ok(&["create", "-f", "-"], &configmap(&format!("cm-{i}")));
    }
    s.kubectl_ok(&["label", "configmap", "cm-3", "changed=yes"]);
    s.kubectl_ok(&["delete", "configmap", "cm-5"]);
    let before = versions(&s);
    assert_eq!(before.len(), 7);
    let max_before: u64 = before
        .values()
        .map(|v| v.parse::<u64>().unwrap())
        .max()
        .unwrap();

    s.kill9();
    s.restart();

    assert_eq!(
        versions(&s),
        before,
        "same objects with the same resourceVersions after kill -9"
    );
    let label = s.kubectl_ok(&[
        "get",
        "configmap",
        "cm-3",
        "-o",
        "jsonpath={.metadata.labels.changed}",
    ]);
    assert_eq!(label, "yes");
    s.kubectl_stdin_ok(&["create", "-f", "-"], &configmap("after-restart"));
    let after: u64 = s
        .kubectl_ok(&[
            "get",
            "configmap",
            "after-restart",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ])
        .parse()
        .unwrap();
    assert!(
        after > max_before + 1,
        "revision grows across restarts: {after} vs {max_before}"
    );
}

#[test]
fn sigterm_shuts_down_cleanly_and_ends_watches() {
    use std::io::{Read, Write};
    let mut s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    s.kubectl_stdin_ok(&["create", "-f", "-"], &configmap("x"));
    // An open watch must not keep the server from stopping.
    let mut watch = kapi_test_support::Stream::connect(s.address, None).unwrap();
    watch
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    write!(
        watch,
        "GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    .unwrap();
    watch.flush().unwrap();
    let mut first = [0u8; 12];
    watch.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    assert_eq!(s.terminate(), Some(0), "exit code after SIGTERM");
    let mut rest = Vec::new();
    watch.read_to_end(&mut rest).unwrap();
    let rest = String::from_utf8_lossy(&rest);
    assert!(
        rest.contains(r#""type":"ADDED""#),
        "the initial state was streamed: {rest}"
    );
    s.restart();
    assert!(
        s.kubectl_ok(&["get", "configmap", "x", "-o", "name"])
            .contains("configmap/x")
    );
}
