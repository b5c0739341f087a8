//! kubectl's generator commands speak protobuf (as every Go client does): they work
//! against the real `kapi` binary without `--validate=false` or any flag that
//! avoids protobuf, and the server's own counters show the bodies arrived as
//! protobuf.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use kapi_test_support::{Server, http_get};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// `kapi_resource_requests_total` samples whose labels contain all of `labels`.
fn requests(s: &Server, labels: &[&str]) -> u64 {
    let (code, text) = http_get(s.address, "/metrics").expect("metrics");
    assert_eq!(code, 200, "{text}");
    text.lines()
        .filter(|l| l.starts_with("kapi_resource_requests_total{"))
        .filter(|l| labels.iter().all(|want| l.contains(want)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[test]
fn kubectl_create_commands_send_protobuf() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let proto_body = format!("request_content_type=\"{PROTOBUF}\"");
    let proto_answer = format!("response_content_type=\"{PROTOBUF}\"");
    let before = requests(&s, &["method=\"POST\"", &proto_body]);

    for (args, expect) in [
        (
            &["create", "namespace", "demo"][..],
            "namespace/demo created",
        ),
        (
            &[
                "create",
                "configmap",
                "cfg",
                "-n",
                "demo",
                "--from-literal=a=1",
            ],
            "configmap/cfg created",
        ),
        (
            &[
                "create",
                "secret",
                "generic",
                "s",
                "-n",
                "demo",
                "--from-literal=k=v",
            ],
            "secret/s created",
        ),
        (
            &[
                "create",
                "deployment",
                "web",
                "-n",
                "demo",
                "--image=nginx:1.27",
            ],
            "deployment.apps/web created",
        ),
        (
            &[
                "create",
                "service",
                "clusterip",
                "web",
                "-n",
                "demo",
                "--tcp=80:8080",
            ],
            "service/web created",
        ),
    ] {
        assert!(s.kubectl_ok(args).contains(expect), "{args:?}");
    }
    let posted = requests(
        &s,
        &[
            "method=\"POST\"",
            &proto_body,
            &proto_answer,
            "code=\"201\"",
        ],
    );
    assert_eq!(
        posted - before,
        5,
        "five protobuf creates answered in protobuf"
    );

    // What was created is what a Go client asked for.
    let cm = s.kubectl_ok(&[
        "get",
        "configmap",
        "cfg",
        "-n",
        "demo",
        "-o",
        "jsonpath={.data.a}",
    ]);
    assert_eq!(cm, "1");
    let secret = s.kubectl_ok(&[
        "get",
        "secret",
        "s",
        "-n",
        "demo",
        "-o",
        "jsonpath={.data.k}",
    ]);
    assert_eq!(secret, "dg=="); // base64 of "v"
    let deploy: serde_json::Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "deployment",
        "web",
        "-n",
        "demo",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(
        deploy["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    assert_eq!(deploy["spec"]["selector"]["matchLabels"]["app"], "web");
    assert_eq!(deploy["spec"]["replicas"], 1);
    assert_eq!(
        deploy["spec"]["template"]["metadata"]["creationTimestamp"],
        serde_json::Value::Null,
        "Go's zero time travels as an empty message and comes back as null"
    );
    let ports = s.kubectl_ok(&[
        "get",
        "service",
        "web",
        "-n",
        "demo",
        "-o",
        "jsonpath={.spec.ports[0].targetPort}",
    ]);
    assert_eq!(ports, "8080");

    // Server-side dry run in protobuf: returned, not stored.
    let dry = s.kubectl_ok(&[
        "create",
        "configmap",
        "dry",
        "-n",
        "demo",
        "--from-literal=b=2",
        "--dry-run=server",
        "-o",
        "yaml",
    ]);
    assert!(
        dry.contains("name: dry") && dry.contains("b: \"2\""),
        "{dry}"
    );
    let missing = s.kubectl(&["get", "configmap", "dry", "-n", "demo"]);
    assert!(!missing.status.success());

    // A conflict comes back as a protobuf Status that kubectl prints.
    let err = s.kubectl_err(&["create", "namespace", "demo"]);
    assert!(err.contains("namespaces \"demo\" already exists"), "{err}");
    assert!(requests(&s, &["code=\"409\"", &proto_answer]) >= 1);

    // kubectl 1.32's delete sends its DeleteOptions as JSON (checked against
    // kube-apiserver 1.32 with -v=9); typed client-go clients send them as
    // protobuf, which server/tests/protobuf.rs covers.
    let before_delete = requests(&s, &["method=\"DELETE\"", "code=\"200\""]);
    assert!(
        s.kubectl_ok(&["delete", "configmap", "cfg", "-n", "demo"])
            .contains("deleted")
    );
    assert!(requests(&s, &["method=\"DELETE\"", "code=\"200\""]) > before_delete);
}

#[test]
fn kubectl_reads_and_watches_what_go_clients_wrote() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    s.kubectl_ok(&["create", "namespace", "w"]);
    s.kubectl_ok(&[
        "create",
        "configmap",
        "one",
        "-n",
        "w",
        "--from-literal=x=1",
    ]);
    let yaml = s.kubectl_ok(&["get", "configmap", "one", "-n", "w", "-o", "yaml"]);
    assert!(yaml.contains("x: \"1\""), "{yaml}");
    let names = s.kubectl_ok(&["get", "configmaps", "-n", "w", "-o", "name"]);
    assert!(names.contains("configmap/one"), "{names}");

    let mut watch = s
        .kubectl_command(&[
            "get",
            "configmaps",
            "-n",
            "w",
            "-w",
            "-o",
            "name",
            "--request-timeout=20s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get -w");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = watch.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The initial list, then the event of a create made by a protobuf client.
    let first = rx
        .recv_timeout(Duration::from_secs(15))
        .expect("initial line");
    assert_eq!(first, "configmap/one");
    s.kubectl_ok(&[
        "create",
        "configmap",
        "two",
        "-n",
        "w",
        "--from-literal=y=2",
    ]);
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut seen = Vec::new();
    while Instant::now() < deadline && !seen.iter().any(|l: &String| l == "configmap/two") {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push(line);
        }
    }
    let _ = watch.kill();
    let _ = watch.wait();
    assert!(seen.iter().any(|l| l == "configmap/two"), "{seen:?}");
}
