//! The aggregator's local APIServices, as kube-apiserver 1.32 keeps them
//! (kube-aggregator's autoregistration, crd-autoregistration and local
//! availability), against the list the real server answered right after
//! start (`tests/fixtures/aggregation/apiservices-1.32.json`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use kapi_test_support::{Server, http_exchange};
use serde_json::{Value, json};

const APISERVICES: &str = "/apis/apiregistration.k8s.io/v1/apiservices";

fn send(server: &Server, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let answer = http_exchange(
        server.address,
        method,
        path,
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .unwrap();
    let value = serde_json::from_str(&answer.body).unwrap_or(Value::Null);
    (answer.code, value)
}

fn get(server: &Server, path: &str) -> (u16, Value) {
    let answer = http_exchange(server.address, "GET", path, &[], b"").unwrap();
    let value = serde_json::from_str(&answer.body).unwrap_or(Value::Null);
    (answer.code, value)
}

/// Waits (at most 30 s) until `done` gives a value.
fn until<T>(what: &str, mut done: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = done() {
            return value;
        }
        assert!(Instant::now() < deadline, "waited 30 s for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// An APIService without what differs from run to run.
fn masked(item: &Value) -> Value {
    let mut item = item.clone();
    let meta = item["metadata"].as_object_mut().unwrap();
    for key in ["uid", "resourceVersion", "creationTimestamp"] {
        meta.remove(key);
    }
    for entry in meta
        .get_mut("managedFields")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        entry.as_object_mut().unwrap().remove("time");
    }
    for condition in item["status"]["conditions"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        condition
            .as_object_mut()
            .unwrap()
            .remove("lastTransitionTime");
    }
    item
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn local_apiservices_are_kube_apiservers() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/aggregation/apiservices-1.32.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let expected = names(&recorded);
    // The built-in group versions' APIServices, as upstream makes them.
    let list = until("the local APIServices", || {
        let (code, list) = get(&server, APISERVICES);
        (code == 200 && names(&list).len() >= expected.len()).then_some(list)
    });
    assert_eq!(names(&list), expected);
    // In YAML too, the items come without their kind.
    let yaml = http_exchange(
        server.address,
        "GET",
        APISERVICES,
        &[("Accept", "application/yaml")],
        b"",
    )
    .unwrap();
    assert!(!yaml.body.contains("kind: APIService\n"), "{}", yaml.body);
    assert!(
        yaml.body.contains("kind: APIServiceList\n"),
        "{}",
        yaml.body
    );
    for (ours, theirs) in list["items"]
        .as_array()
        .unwrap()
        .iter()
        .zip(recorded["items"].as_array().unwrap())
    {
        assert_eq!(masked(ours), masked(theirs));
    }
    // A definition's served versions get theirs, kept all along.
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.agg.example.com"},
        "spec": {"group": "agg.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object"}}},
                {"name": "v2", "served": false, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
    let (code, _) = send(
        &server,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &crd,
    );
    assert_eq!(code, 201);
    let path = format!("{APISERVICES}/v1.agg.example.com");
    let custom = until("the definition's APIService", || {
        let (code, item) = get(&server, &path);
        (code == 200).then_some(item)
    });
    assert_eq!(
        custom["metadata"]["labels"],
        json!({"kube-aggregator.kubernetes.io/automanaged": "true"})
    );
    assert_eq!(
        custom["spec"],
        json!({"group": "agg.example.com", "version": "v1",
            "groupPriorityMinimum": 1000, "versionPriority": 100})
    );
    assert_eq!(
        masked(&custom)["status"],
        json!({"conditions": [{"type": "Available", "status": "True", "reason": "Local",
            "message": "Local APIServices are always available"}]})
    );
    assert_eq!(
        get(&server, &format!("{APISERVICES}/v2.agg.example.com")).0,
        404
    );
    // Deleted by hand, it comes back; a built-in one edited by hand stays
    // as edited until the next start.
    let (code, _) = send(&server, "DELETE", &path, &json!({}));
    assert_eq!(code, 200);
    until("the definition's APIService back", || {
        let (code, item) = get(&server, &path);
        (code == 200 && item["metadata"]["uid"] != custom["metadata"]["uid"]).then_some(())
    });
    let (_, mut apps) = get(&server, &format!("{APISERVICES}/v1.apps"));
    apps["spec"]["versionPriority"] = json!(16);
    let (code, _) = send(&server, "PUT", &format!("{APISERVICES}/v1.apps"), &apps);
    assert_eq!(code, 200);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        get(&server, &format!("{APISERVICES}/v1.apps")).1["spec"]["versionPriority"],
        16
    );
    // The definition gone, its APIService goes.
    let (code, _) = send(
        &server,
        "DELETE",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.agg.example.com",
        &json!({}),
    );
    assert_eq!(code, 200);
    until("the definition's APIService gone", || {
        (get(&server, &path).0 == 404).then_some(())
    });
    // kubectl shows them as upstream's table does.
    let table = server.kubectl_ok(&["get", "apiservices", "v1.", "v1.apps"]);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "SERVICE", "AVAILABLE", "AGE"]);
    assert_eq!(&lines[1][..3], ["v1.", "Local", "True"]);
    assert_eq!(&lines[2][..3], ["v1.apps", "Local", "True"]);
}

/// The `extension-apiserver-authentication` ConfigMap, as kube-apiserver's
/// cluster-authentication-info controller keeps it for extension API
/// servers (with kubeadm's front-proxy settings, which kapi makes by
/// default).
#[test]
fn extension_servers_are_told_whom_to_trust() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let path = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
    let configmap = until("the ConfigMap", || {
        let (code, object) = get(&server, path);
        (code == 200).then_some(object)
    });
    let data = &configmap["data"];
    let read = |file: &str| std::fs::read_to_string(server.data_dir().join(file)).unwrap();
    let pems = |text: &str| -> Vec<String> {
        text.split("-----END CERTIFICATE-----")
            .filter(|part| part.contains("BEGIN"))
            .map(|part| part.trim().to_owned())
            .collect()
    };
    assert_eq!(
        pems(data["client-ca-file"].as_str().unwrap()),
        pems(&read("ca.crt"))
    );
    assert_eq!(
        pems(data["requestheader-client-ca-file"].as_str().unwrap()),
        pems(&read("front-proxy-ca.crt"))
    );
    assert_eq!(
        data["requestheader-allowed-names"],
        r#"["front-proxy-client"]"#
    );
    assert_eq!(
        data["requestheader-username-headers"],
        r#"["X-Remote-User"]"#
    );
    assert_eq!(data["requestheader-group-headers"], r#"["X-Remote-Group"]"#);
    assert_eq!(
        data["requestheader-extra-headers-prefix"],
        r#"["X-Remote-Extra-"]"#
    );
    assert_eq!(
        configmap["metadata"]["managedFields"][0]["manager"],
        "kube-apiserver"
    );
    // What an owner adds stays; what this server needs comes back.
    let mut edited = configmap.clone();
    edited["data"]["requestheader-allowed-names"] = json!(r#"["aggregator"]"#);
    let (code, _) = send(&server, "PUT", path, &edited);
    assert_eq!(code, 200);
    until("the allowed names merged", || {
        let (_, object) = get(&server, path);
        (object["data"]["requestheader-allowed-names"] == r#"["aggregator","front-proxy-client"]"#)
            .then_some(())
    });
    // Deleted, it is made again.
    let (code, _) = send(&server, "DELETE", path, &json!({}));
    assert_eq!(code, 200);
    until("the ConfigMap again", || {
        let (code, object) = get(&server, path);
        (code == 200 && object["metadata"]["uid"] != configmap["metadata"]["uid"]).then_some(())
    });
}

/// A front proxy (a client certificate of the front-proxy CA, named
/// `front-proxy-client`) names the user in headers, as kube-aggregator
/// forwards requests and k8s.io/apiserver's request-header authenticator
/// reads them; without a user header its certificate is no credential.
#[test]
fn a_front_proxy_names_the_user_in_headers() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let dir = server.data_dir().to_path_buf();
    let file = |name: &str| dir.join(name).display().to_string();
    let review = r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#;
    let curl = |headers: &[&str]| -> (u16, Value) {
        let mut command = std::process::Command::new("curl");
        command
            .args(["-sS", "--max-time", "20", "-w", "\n%{http_code}"])
            .args(["--cacert", &file("ca.crt")])
            .args(["--cert", &file("front-proxy-client.crt")])
            .args(["--key", &file("front-proxy-client.key")])
            .args([
                "-X",
                "POST",
                "-H",
                "Content-Type: application/json",
                "-d",
                review,
            ]);
        for header in headers {
            command.args(["-H", header]);
        }
        let out = command
            .arg(format!(
                "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
                server.url()
            ))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = stdout.rsplit_once('\n').unwrap_or(("", "0"));
        (
            code.trim().parse().unwrap_or(0),
            serde_json::from_str(body).unwrap_or(Value::Null),
        )
    };
    let (code, answer) = curl(&[
        "X-Remote-User: alice",
        "X-Remote-Group: devs",
        "X-Remote-Group: qa",
        "X-Remote-Extra-Foo%2fbar: baz",
    ]);
    assert_eq!(code, 201, "{answer}");
    assert_eq!(
        answer["status"]["userInfo"],
        json!({"username": "alice", "groups": ["devs", "qa", "system:authenticated"],
            "extra": {"foo/bar": ["baz"]}})
    );
    // The proxy's certificate alone is no credential.
    let (code, _) = curl(&[]);
    assert_eq!(code, 401);
}
