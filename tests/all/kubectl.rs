//! End to end with the real kubectl against the real `kapi` binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use kapi_test_support::{Server, text};

fn server() -> Server {
    Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")))
}

const NAMESPACE: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n";

const CONFIGMAP: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  namespace: demo
  labels:
    app: web
    tier: frontend
data:
  color: blue
";

const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: demo
  labels:
    app: web
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    ports:
    - containerPort: 80
    env:
    - name: MODE
      value: production
    - name: POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    resources:
      requests:
        cpu: 100m
        memory: 64Mi
    readinessProbe:
      httpGet:
        path: /healthz
        port: 80
    volumeMounts:
    - name: config
      mountPath: /etc/app
  volumes:
  - name: config
    configMap:
      name: app-config
";

#[test]
fn configmap_lifecycle_with_kubectl() {
    let s = server();
    assert!(
        s.kubectl_stdin_ok(&["create", "-f", "-"], NAMESPACE)
            .contains("namespace/demo created")
    );
    assert!(
        s.kubectl_stdin_ok(&["create", "-f", "-"], CONFIGMAP)
            .contains("configmap/app-config created")
    );

    let json: serde_json::Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "configmap",
        "app-config",
        "-n",
        "demo",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(json["kind"], "ConfigMap");
    assert_eq!(json["apiVersion"], "v1");
    assert_eq!(json["data"]["color"], "blue");
    assert!(
        json["metadata"]["uid"]
            .as_str()
            .is_some_and(|u| u.len() == 36)
    );
    assert!(
        json["metadata"]["creationTimestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    let rv: u64 = json["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    let yaml = s.kubectl_ok(&["get", "cm", "app-config", "-n", "demo", "-o", "yaml"]);
    assert!(
        yaml.contains("color: blue") && yaml.contains("kind: ConfigMap"),
        "{yaml}"
    );
    assert_eq!(
        s.kubectl_ok(&["get", "cm", "-n", "demo", "-o", "name"])
            .trim(),
        "configmap/app-config"
    );

    // Table output: NAME, DATA, AGE.
    let table = s.kubectl_ok(&["get", "configmaps", "-n", "demo"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "DATA", "AGE"], "{table}");
    assert!(
        table.lines().nth(1).unwrap().starts_with("app-config"),
        "{table}"
    );

    // Selectors.
    assert!(
        s.kubectl_ok(&[
            "get",
            "cm",
            "-n",
            "demo",
            "-l",
            "app=web,tier in (frontend,backend)",
            "-o",
            "name"
        ])
        .contains("app-config")
    );
    assert!(
        s.kubectl_ok(&["get", "cm", "-n", "demo", "-l", "app!=web", "-o", "name"])
            .trim()
            .is_empty()
    );
    assert!(
        s.kubectl_ok(&["get", "cm", "-n", "demo", "-l", "!tier", "-o", "name"])
            .trim()
            .is_empty()
    );
    assert!(
        s.kubectl_ok(&[
            "get",
            "cm",
            "-A",
            "--field-selector",
            "metadata.name=app-config",
            "-o",
            "name"
        ])
        .contains("app-config")
    );
    assert!(
        s.kubectl_ok(&[
            "get",
            "cm",
            "-A",
            "--field-selector",
            "metadata.namespace!=demo,metadata.name=app-config",
            "-o",
            "name"
        ])
        .trim()
        .is_empty()
    );
    let err = s.kubectl_err(&[
        "get",
        "cm",
        "-n",
        "demo",
        "--field-selector",
        "data.color=blue",
    ]);
    assert!(
        err.contains(r#""data.color" is not a known field selector: only "metadata.name", "metadata.namespace""#),
        "{err}"
    );

    // label, annotate, patch (merge and JSON).
    assert!(
        s.kubectl_ok(&["label", "cm", "app-config", "-n", "demo", "release=stable"])
            .contains("labeled")
    );
    assert!(
        s.kubectl_ok(&["annotate", "cm", "app-config", "-n", "demo", "owner=team-a"])
            .contains("annotated")
    );
    s.kubectl_ok(&[
        "patch",
        "cm",
        "app-config",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"size":"large"}}"#,
    ]);
    s.kubectl_ok(&[
        "patch",
        "cm",
        "app-config",
        "-n",
        "demo",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/data/color","value":"green"}]"#,
    ]);
    let json: serde_json::Value = serde_json::from_str(&s.kubectl_ok(&[
        "get",
        "cm",
        "app-config",
        "-n",
        "demo",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(json["metadata"]["labels"]["release"], "stable");
    assert_eq!(json["metadata"]["annotations"]["owner"], "team-a");
    assert_eq!(
        json["data"],
        serde_json::json!({"color": "green", "size": "large"})
    );
    let new_rv: u64 = json["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(new_rv > rv);

    // replace with a stale resourceVersion: Conflict.
    let mut stale = json.clone();
    stale["metadata"]["resourceVersion"] = serde_json::Value::String(rv.to_string());
    stale["data"]["color"] = "red".into();
    let out = s.kubectl_stdin(&["replace", "-f", "-"], &stale.to_string());
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("Conflict") && err.contains("the object has been modified"),
        "{err}"
    );
    // A fresh replace works.
    let mut fresh = json.clone();
    fresh["data"]["color"] = "red".into();
    s.kubectl_stdin_ok(&["replace", "-f", "-"], &fresh.to_string());
    assert_eq!(
        s.kubectl_ok(&[
            "get",
            "cm",
            "app-config",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.color}"
        ]),
        "red"
    );

    assert!(
        s.kubectl_ok(&["delete", "cm", "app-config", "-n", "demo"])
            .contains("deleted")
    );
    let err = s.kubectl_err(&["get", "cm", "app-config", "-n", "demo"]);
    assert!(
        err.contains("NotFound") && err.contains(r#"configmaps "app-config" not found"#),
        "{err}"
    );
}

#[test]
fn pods_from_manifests_print_like_kubernetes() {
    let s = server();
    s.kubectl_stdin_ok(&["create", "-f", "-"], NAMESPACE);
    // Pods run as their namespace's `default` account (as upstream requires).
    s.kubectl_ok(&["create", "serviceaccount", "default", "-n", "demo"]);
    assert!(
        s.kubectl_stdin_ok(&["create", "-f", "-"], POD)
            .contains("pod/web-0 created")
    );
    let table = s.kubectl_ok(&["get", "pods", "-n", "demo"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        "{table}"
    );
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..4], ["web-0", "0/1", "Pending", "0"], "{table}");
    let wide = s.kubectl_ok(&["get", "pods", "-n", "demo", "-o", "wide"]);
    assert!(wide.lines().next().unwrap().contains("NODE"), "{wide}");

    let pod: serde_json::Value =
        serde_json::from_str(&s.kubectl_ok(&["get", "pod", "web-0", "-n", "demo", "-o", "json"]))
            .unwrap();
    assert_eq!(pod["status"]["phase"], "Pending");
    assert_eq!(pod["spec"]["restartPolicy"], "Always");
    assert_eq!(
        pod["spec"]["containers"][0]["terminationMessagePath"],
        "/dev/termination-log"
    );
    assert_eq!(pod["spec"]["containers"][0]["ports"][0]["protocol"], "TCP");

    // Status is written only through /status, spec only through the object.
    assert_eq!(
        s.kubectl_ok(&[
            "get",
            "pods",
            "-n",
            "demo",
            "--field-selector",
            "status.phase=Pending",
            "-o",
            "name"
        ])
        .trim(),
        "pod/web-0"
    );

    // Creating in a namespace that does not exist.
    let err = text(
        &s.kubectl_stdin(
            &["create", "-n", "nowhere", "-f", "-"],
            &POD.replace("namespace: demo", "namespace: nowhere"),
        )
        .stderr,
    );
    assert!(err.contains(r#"namespaces "nowhere" not found"#), "{err}");

    // An unbound pod is deleted at once.
    assert!(
        s.kubectl_ok(&["delete", "pod", "web-0", "-n", "demo"])
            .contains("deleted")
    );
    assert!(
        s.kubectl_ok(&["get", "pods", "-n", "demo", "-o", "name"])
            .trim()
            .is_empty()
    );
}

#[test]
fn invalid_objects_are_refused_with_kubernetes_messages() {
    let s = server();
    // Else the pod is refused for its missing account first, as upstream.
    s.kubectl_ok(&["create", "serviceaccount", "default"]);
    let bad = CONFIGMAP
        .replace("name: app-config", "name: Bad_Name")
        .replace("namespace: demo", "namespace: default");
    let err = text(&s.kubectl_stdin(&["create", "-f", "-"], &bad).stderr);
    assert!(
        err.contains("is invalid") && err.contains("metadata.name: Invalid value: \"Bad_Name\""),
        "{err}"
    );
    let bad_pod = POD
        .replace("namespace: demo", "namespace: default")
        .replace("containerPort: 80", "containerPort: 70000");
    let err = text(&s.kubectl_stdin(&["create", "-f", "-"], &bad_pod).stderr);
    assert!(
        err.contains("spec.containers[0].ports[0].containerPort"),
        "{err}"
    );
    let unknown = CONFIGMAP
        .replace("namespace: demo", "namespace: default")
        .replace("data:", "bogus: 1\ndata:");
    let err = text(&s.kubectl_stdin(&["create", "-f", "-"], &unknown).stderr);
    assert!(err.contains("unknown field \"bogus\""), "{err}");
    assert!(
        s.kubectl_ok(&["get", "cm", "-n", "default", "-o", "name"])
            .trim()
            .is_empty(),
        "nothing was written"
    );
}

/// The create must arrive as a watch event, not in the initial list: the test
/// waits for the list (which shows `configmap/before`) before creating.
#[test]
fn watch_sees_a_create() {
    let s = server();
    s.kubectl_ok(&["create", "configmap", "before", "-n", "default"]);
    let mut watcher = s
        .kubectl_command(&[
            "get",
            "configmaps",
            "-n",
            "default",
            "-w",
            "-o",
            "name",
            "--request-timeout=60s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = watcher.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // `get -w` lists, then watches from the list's resourceVersion: once the
    // list has been printed, a later create can only come through the watch.
    let listed = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    while Instant::now() < listed && !seen.iter().any(|l: &String| l == "configmap/before") {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push(line);
        }
    }
    assert!(
        seen.iter().any(|l| l == "configmap/before"),
        "the initial list: {seen:?}"
    );
    assert!(
        !seen.iter().any(|l| l.contains("configmap/app-config")),
        "app-config before its create: {seen:?}"
    );
    s.kubectl_stdin_ok(
        &["create", "-f", "-"],
        &CONFIGMAP.replace("namespace: demo", "namespace: default"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push(line);
            if seen.iter().any(|l| l.contains("configmap/app-config")) {
                break;
            }
        }
    }
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert!(
        seen.iter().any(|l| l.contains("configmap/app-config")),
        "watch saw: {seen:?}"
    );
}

#[test]
fn discovery_for_api_resources_and_versions() {
    let s = server();
    let resources = s.kubectl_ok(&["api-resources"]);
    for (name, short, version, namespaced, kind) in [
        ("configmaps", "cm", "v1", "true", "ConfigMap"),
        ("namespaces", "ns", "v1", "false", "Namespace"),
        ("pods", "po", "v1", "true", "Pod"),
        ("deployments", "deploy", "apps/v1", "true", "Deployment"),
    ] {
        let row = resources
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing:\n{resources}"));
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols, [name, short, version, namespaced, kind], "{row}");
    }
    let versions = s.kubectl_ok(&["api-versions"]);
    let versions: Vec<&str> = versions.lines().collect();
    assert!(
        versions.contains(&"v1") && versions.contains(&"apps/v1"),
        "{versions:?}"
    );
    assert!(
        s.kubectl_ok(&["get", "namespaces", "-o", "name"])
            .contains("namespace/kube-system")
    );
}

#[test]
fn bad_listen_address_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kapi"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--authorization-mode=AlwaysAllow",
        ])
        .arg("--data-dir")
        .arg(temp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("with --authorization-mode=AlwaysAllow"),
        "{}",
        text(&out.stderr)
    );
}

/// The `Warning` headers of a pod and a deployment full of deprecated and
/// surprising settings, as kubectl prints them, against what kube-apiserver
/// 1.32 sent for the same manifests (`tests/fixtures/warnings/*.warnings.txt`).
#[test]
fn warnings_are_upstreams() {
    let s = server();
    s.kubectl_ok(&["create", "serviceaccount", "default"]);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/warnings");
    for kind in ["pod", "deployment"] {
        let manifest = std::fs::read_to_string(format!("{dir}/{kind}.yaml")).unwrap();
        let expected = std::fs::read_to_string(format!("{dir}/{kind}.warnings.txt")).unwrap();
        let out = s.kubectl_stdin(&["create", "-f", "-"], &manifest);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut warnings: Vec<String> = text(&out.stderr)
            .lines()
            .filter(|l| l.starts_with("Warning:"))
            .map(str::to_owned)
            .collect();
        warnings.sort();
        let expected: Vec<&str> = expected.lines().collect();
        assert_eq!(warnings, expected, "{kind}");
    }
    // An update that leaves the spec alone warns about nothing.
    let out = s.kubectl(&[
        "patch",
        "deployment",
        "wd",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"x":"y"}}}"#,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("Warning"),
        "{}",
        text(&out.stderr)
    );
    // Nor does any update of the pod, through the pod or /status, whatever
    // its spec holds: upstream warns about pods on create only.
    for subresource in [&[][..], &["--subresource=status"][..]] {
        let patch = r#"{"metadata":{"labels":{"x":"y"}},"status":{"message":"m"}}"#;
        let mut args = vec!["patch", "pod", "web.example", "-n", "default"];
        args.extend_from_slice(subresource);
        args.extend(["--type=merge", "-p", patch]);
        let out = s.kubectl(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(
            !text(&out.stderr).contains("Warning"),
            "{}",
            text(&out.stderr)
        );
    }
}
