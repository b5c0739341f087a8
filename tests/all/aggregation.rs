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
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

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

/// Waits (at most 60 s) until APIService `name` has an `Available`
/// condition for which `wanted` holds, and gives it.
fn condition(server: &Server, name: &str, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = Value::Null;
    loop {
        let (_, object) = get(server, &format!("{APISERVICES}/{name}"));
        if let Some(found) = object["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Available")
        {
            if wanted(found) {
                return found.clone();
            }
            last = found.clone();
        }
        assert!(
            Instant::now() < deadline,
            "APIService {name}: waited 60 s, last condition {last}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn apiservice(group: &str, service: &str, port: u16, ca: Option<&str>) -> Value {
    let mut object = json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": format!("v1.{group}")},
        "spec": {"group": group, "version": "v1", "groupPriorityMinimum": 2000,
            "versionPriority": 15,
            "service": {"namespace": "default", "name": service, "port": port}}});
    match ca {
        Some(ca) => object["spec"]["caBundle"] = json!(ca),
        None => object["spec"]["insecureSkipTLSVerify"] = json!(true),
    }
    object
}

/// Another API server registered with an APIService is reached through
/// kapi as through kube-apiserver's aggregator: its availability checked
/// (upstream's reasons and messages), its group in discovery and OpenAPI,
/// every verb of kubectl passed on with the user named in the front-proxy
/// headers (the other server refuses whom its own RBAC does not allow, with
/// its own message), watches streamed; an APIService whose server is not
/// there is answered 503 as upstream answers it. The other server is a
/// second kapi that trusts this one's front-proxy CA; its Service is an
/// ExternalName (Services may not hold loopback endpoints).
#[test]
fn an_apiservice_is_served_by_its_server() {
    let binary = Path::new(env!("CARGO_BIN_EXE_kapi"));
    let front = Server::start(binary);
    let front_proxy_ca = front.data_dir().join("front-proxy-ca.crt");
    let extension = Server::start_args(
        binary,
        &[
            "--requestheader-client-ca-file",
            front_proxy_ca.to_str().unwrap(),
            "--tls-san",
            "extension.default.svc",
        ],
    );
    extension.kubectl_stdin_ok(
        &["apply", "-f", "-"],
        r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.ext.example.com"},
            "spec": {"group": "ext.example.com", "scope": "Namespaced",
                "names": {"plural": "things", "singular": "thing", "kind": "Thing",
                    "shortNames": ["th"]},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "description": "What the thing is.",
                            "properties": {"size": {"type": "integer"}}}}}}}]}}"#,
    );
    until("the extension's kind", || {
        let (code, _) = get(&extension, "/apis/ext.example.com/v1/things");
        (code == 200).then_some(())
    });
    let port = extension.address.port();
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "extension", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1", "ports": [{"port": port}]}});
    let (code, made) = send(
        &front,
        "POST",
        "/api/v1/namespaces/default/services",
        &service,
    );
    assert_eq!(code, 201, "{made}");
    let ca = std::fs::read(extension.data_dir().join("ca.crt")).unwrap();
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    let (code, made) = send(
        &front,
        "POST",
        APISERVICES,
        &apiservice("ext.example.com", "extension", port, Some(&ca)),
    );
    assert_eq!(code, 201, "{made}");
    let available = condition(&front, "v1.ext.example.com", |c| c["status"] == "True");
    assert_eq!(available["reason"], "Passed");
    assert_eq!(available["message"], "all checks passed");

    // Discovery learns what the other server serves, after its availability.
    until("the extension's resources in discovery", || {
        let answer = http_exchange(
            front.address,
            "GET",
            "/apis",
            &[("Accept", AGGREGATED)],
            b"",
        )?;
        let list: Value = serde_json::from_str(&answer.body).ok()?;
        let group = list["items"]
            .as_array()?
            .iter()
            .find(|g| g["metadata"]["name"] == "ext.example.com")?;
        (group["versions"][0]["freshness"] == "Current").then_some(())
    });
    // kubectl through the front: discovery, explain, and every verb.
    let resources = front.kubectl_ok(&["api-resources", "--api-group", "ext.example.com"]);
    assert!(
        resources.contains("things") && resources.contains("th "),
        "{resources}"
    );
    let explained = front.kubectl_ok(&["explain", "things.spec"]);
    assert!(explained.contains("What the thing is."), "{explained}");
    // The OpenAPI v2 document has the extension's paths and schemas too.
    let spec = until("the extension's paths in /openapi/v2", || {
        let (code, spec) = get(&front, "/openapi/v2");
        (code == 200
            && spec["paths"]
                .get("/apis/ext.example.com/v1/namespaces/{namespace}/things")
                .is_some())
        .then_some(spec)
    });
    assert!(spec["paths"].get("/api/v1/namespaces").is_some());
    let explained =
        front.kubectl_ok(&["explain", "things.spec", "--output", "plaintext-openapiv2"]);
    assert!(explained.contains("What the thing is."), "{explained}");
    let watch = front
        .kubectl_command(&[
            "get",
            "things",
            "--watch",
            "--output-watch-events",
            "-o",
            "jsonpath={.type} {.object.metadata.name}{\"\\n\"}",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut watch = scopeguard(watch);
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    let stdout = watch.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let created = front.kubectl_stdin_ok(
        &["apply", "-f", "-"],
        r#"{"apiVersion": "ext.example.com/v1", "kind": "Thing",
            "metadata": {"name": "one", "namespace": "default"}, "spec": {"size": 1}}"#,
    );
    assert!(
        created.contains("thing.ext.example.com/one created"),
        "{created}"
    );
    let event = lines_rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(event, "ADDED one");
    // The object is the other server's.
    let (code, there) = get(
        &extension,
        "/apis/ext.example.com/v1/namespaces/default/things/one",
    );
    assert_eq!(code, 200);
    let (code, here) = get(
        &front,
        "/apis/ext.example.com/v1/namespaces/default/things/one",
    );
    assert_eq!((code, &here), (200, &there));
    assert_eq!(
        there["metadata"]["managedFields"][0]["manager"],
        "kubectl-client-side-apply"
    );
    front.kubectl_ok(&[
        "patch",
        "thing",
        "one",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"size":2}}"#,
    ]);
    let modified = lines_rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(modified, "MODIFIED one");
    let size = front.kubectl_ok(&["get", "th", "one", "-o", "jsonpath={.spec.size}"]);
    assert_eq!(size, "2");
    front.kubectl_ok(&["delete", "thing", "one"]);
    let deleted = lines_rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(deleted, "DELETED one");

    // The user reaches the other server, which decides for itself: alice
    // may list things here, not there.
    front.kubectl_ok(&[
        "create",
        "clusterrole",
        "things",
        "--verb=list",
        "--resource=things.ext.example.com",
    ]);
    front.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "things",
        "--clusterrole=things",
        "--user=alice",
    ]);
    let answer = http_exchange(
        front.address,
        "GET",
        "/apis/ext.example.com/v1/namespaces/default/things",
        &[("Impersonate-User", "alice")],
        b"",
    )
    .unwrap();
    assert_eq!(answer.code, 403, "{}", answer.body);
    let refusal: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(
        refusal["message"],
        "things.ext.example.com is forbidden: User \"alice\" cannot list resource \"things\" \
         in API group \"ext.example.com\" in the namespace \"default\""
    );
    // Who may not list things here is refused here.
    let answer = http_exchange(
        front.address,
        "GET",
        "/apis/ext.example.com/v1/namespaces/default/things",
        &[("Impersonate-User", "bob")],
        b"",
    )
    .unwrap();
    assert_eq!(answer.code, 403, "{}", answer.body);

    // An APIService whose Service is missing, one whose Service has no
    // endpoints, and one whose server does not answer.
    let (code, _) = send(
        &front,
        "POST",
        APISERVICES,
        &apiservice("missing.example.com", "nowhere", 443, None),
    );
    assert_eq!(code, 201);
    let missing = condition(&front, "v1.missing.example.com", |c| {
        c["reason"] == "ServiceNotFound"
    });
    assert_eq!(missing["reason"], "ServiceNotFound");
    assert_eq!(
        missing["message"],
        "service/nowhere in \"default\" is not present"
    );
    let answer = http_exchange(
        front.address,
        "GET",
        "/apis/missing.example.com/v1/things",
        &[],
        b"",
    )
    .unwrap();
    assert_eq!(
        (
            answer.code,
            answer.body.as_str(),
            answer.header("content-type")
        ),
        (
            503,
            "service unavailable\n",
            vec!["text/plain; charset=utf-8"]
        )
    );
    let kubectl = front.kubectl_err(&["get", "--raw", "/apis/missing.example.com/v1"]);
    assert!(
        kubectl.contains("the server is currently unable to handle the request"),
        "{kubectl}"
    );
    // Its group is in discovery, stale.
    let aggregated = http_exchange(
        front.address,
        "GET",
        "/apis",
        &[("Accept", AGGREGATED)],
        b"",
    )
    .unwrap();
    let aggregated: Value = serde_json::from_str(&aggregated.body).unwrap();
    let group = aggregated["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "missing.example.com")
        .unwrap();
    assert_eq!(
        group["versions"],
        json!([{"version": "v1", "freshness": "Stale"}])
    );

    let plain = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "plain", "namespace": "default"},
        "spec": {"ports": [{"port": 443}]}});
    let (code, _) = send(
        &front,
        "POST",
        "/api/v1/namespaces/default/services",
        &plain,
    );
    assert_eq!(code, 201);
    let (code, _) = send(
        &front,
        "POST",
        APISERVICES,
        &apiservice("plain.example.com", "plain", 443, None),
    );
    assert_eq!(code, 201);
    let plain = condition(&front, "v1.plain.example.com", |c| {
        c["reason"] == "EndpointsNotFound"
    });
    assert_eq!(plain["reason"], "EndpointsNotFound");
    assert_eq!(
        plain["message"],
        "cannot find endpoints for service/plain in \"default\""
    );
    let (code, _) = send(
        &front,
        "POST",
        APISERVICES,
        &apiservice("port.example.com", "plain", 8443, None),
    );
    assert_eq!(code, 201);
    let port_error = condition(&front, "v1.port.example.com", |c| {
        c["reason"] == "ServicePortError"
    });
    assert_eq!(port_error["reason"], "ServicePortError");
    assert_eq!(
        port_error["message"],
        "service/plain in \"default\" is not listening on port 8443"
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let silent = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "silent", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1", "ports": [{"port": closed_port}]}});
    let (code, _) = send(
        &front,
        "POST",
        "/api/v1/namespaces/default/services",
        &silent,
    );
    assert_eq!(code, 201);
    let (code, _) = send(
        &front,
        "POST",
        APISERVICES,
        &apiservice("silent.example.com", "silent", closed_port, None),
    );
    assert_eq!(code, 201);
    let silent = condition(&front, "v1.silent.example.com", |c| {
        c["reason"] == "FailedDiscoveryCheck"
    });
    let url = format!("https://127.0.0.1:{closed_port}/apis/silent.example.com/v1");
    assert_eq!(silent["reason"], "FailedDiscoveryCheck");
    assert_eq!(
        silent["message"],
        format!(
            "failing or missing response from {url}: Get \"{url}\": dial tcp 127.0.0.1:{closed_port}: connect: connection refused"
        )
    );
    // The other server gone, the APIService becomes unavailable.
    drop(extension);
    let gone = condition(&front, "v1.ext.example.com", |c| c["status"] == "False");
    assert_eq!(gone["reason"], "FailedDiscoveryCheck");
}

/// Kills the child process when dropped.
struct ChildGuard(std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn scopeguard(child: std::process::Child) -> ChildGuard {
    ChildGuard(child)
}

/// `/healthz`, `/livez` and `/readyz` list what kapi starts with
/// kube-apiserver 1.32's names and in its order (the recorded verbose
/// answers), each passing once its work is done; one can be asked alone.
#[test]
fn health_lists_the_post_start_hooks_as_kube_apiserver() {
    // On the embedded store and on etcd.
    let binary = Path::new(env!("CARGO_BIN_EXE_kapi"));
    health_as_upstream(&Server::start(binary));
    if !kapi_test_support::etcd::etcd_available() {
        return;
    }
    let etcd = kapi_test_support::etcd::EtcdCluster::start(1);
    health_as_upstream(&Server::start_args(
        binary,
        &["--etcd-servers", &etcd.endpoints()],
    ));
}

fn health_as_upstream(server: &Server) {
    for endpoint in ["healthz", "livez", "readyz"] {
        let recorded = std::fs::read_to_string(format!(
            "{}/../shared/recorded/kube-apiserver-1.32-{endpoint}-verbose.txt",
            env!("CARGO_MANIFEST_DIR")
        ));
        let Ok(recorded) = recorded else {
            assert!(!kapi_test_support::require::require(
                false,
                "../shared/recorded",
                "the recorded kube-apiserver answers beside this repository"
            ));
            return;
        };
        let answer = until("every check passing", || {
            let answer = http_exchange(
                server.address,
                "GET",
                &format!("/{endpoint}?verbose"),
                &[],
                b"",
            )?;
            (answer.code == 200).then_some(answer.body)
        });
        let ours: Vec<&str> = answer.lines().collect();
        let theirs: Vec<&str> = recorded.lines().collect();
        // Every line is one of upstream's, in upstream's order (kapi keeps
        // its storage check in readiness too).
        let mut at = 0;
        for line in &ours {
            if *line == "[+]etcd ok" && endpoint == "readyz" {
                continue;
            }
            let found = theirs[at..]
                .iter()
                .position(|l| l == line)
                .unwrap_or_else(|| {
                    panic!("{endpoint}: {line:?} is not upstream's, or out of order:\n{answer}")
                });
            at += found + 1;
        }
        // What upstream's e2e test "health handlers should contain
        // necessary checks" requires (its 1.32 names).
        for required in [
            "[+]ping ok",
            "[+]log ok",
            "[+]poststarthook/start-apiserver-admission-initializer ok",
            "[+]poststarthook/generic-apiserver-start-informers ok",
            "[+]poststarthook/start-apiextensions-informers ok",
            "[+]poststarthook/start-apiextensions-controllers ok",
            "[+]poststarthook/crd-informer-synced ok",
            "[+]poststarthook/bootstrap-controller ok",
            "[+]poststarthook/start-system-namespaces-controller ok",
            "[+]poststarthook/scheduling/bootstrap-system-priority-classes ok",
            "[+]poststarthook/start-cluster-authentication-info-controller ok",
            "[+]poststarthook/start-kube-aggregator-informers ok",
            "[+]poststarthook/apiservice-registration-controller ok",
            "[+]poststarthook/apiservice-status-local-available-controller ok",
            "[+]poststarthook/apiservice-status-remote-available-controller ok",
            "[+]poststarthook/kube-apiserver-autoregistration ok",
            "[+]autoregister-completion ok",
            "[+]poststarthook/apiservice-openapi-controller ok",
        ] {
            assert!(
                ours.contains(&required),
                "{endpoint} lacks {required}:\n{answer}"
            );
        }
        let one = http_exchange(
            server.address,
            "GET",
            &format!("/{endpoint}/poststarthook/rbac/bootstrap-roles"),
            &[],
            b"",
        )
        .unwrap();
        assert_eq!((one.code, one.body.as_str()), (200, "ok"));
    }
    let answer = http_exchange(server.address, "GET", "/readyz?verbose", &[], b"").unwrap();
    assert!(
        answer.body.contains("[+]informer-sync ok"),
        "{}",
        answer.body
    );
}

/// A network namespace of the test's own with a veth pair on a private
/// /30 (Endpoints may not hold loopback addresses): the host end has `.1`,
/// the namespace's `.2`. Removed, with what runs in it, when dropped.
struct Namespace {
    name: String,
    children: Vec<std::process::Child>,
}

impl Namespace {
    fn create(subnet: u8) -> Option<Namespace> {
        let pid = std::process::id();
        let name = format!("kapi-agg-{pid}");
        let (host, inner) = (
            format!("kah{}", pid % 100_000),
            format!("kai{}", pid % 100_000),
        );
        let ip = |args: &[&str]| {
            std::process::Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success())
        };
        if !ip(&["netns", "add", &name]) {
            return None;
        }
        let namespace = Namespace {
            name: name.clone(),
            children: Vec::new(),
        };
        let host_address = format!("10.254.{subnet}.1/30");
        let inner_address = format!("10.254.{subnet}.2/30");
        let ok = ip(&["link", "add", &host, "type", "veth", "peer", "name", &inner])
            && ip(&["link", "set", &inner, "netns", &name])
            && ip(&["addr", "add", &host_address, "dev", &host])
            && ip(&["link", "set", &host, "up"])
            && ip(&["-n", &name, "addr", "add", &inner_address, "dev", &inner])
            && ip(&["-n", &name, "link", "set", &inner, "up"])
            && ip(&["-n", &name, "link", "set", "lo", "up"]);
        ok.then_some(namespace)
    }

    /// Runs `program` with `args` inside the namespace.
    fn spawn(&mut self, program: &Path, args: &[&str]) {
        let child = std::process::Command::new("ip")
            .args(["netns", "exec", &self.name])
            .arg(program)
            .args(args)
            .stdout(std::process::Stdio::null())
            .env("RUST_LOG", "warn")
            .spawn()
            .unwrap();
        self.children.push(child);
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        // Deleting the namespace deletes the veth pair with it.
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// With `--enable-aggregator-routing`, an APIService's requests go to an
/// endpoint of its Service (kube-proxy's work being left out): the
/// extension server listens on an address of a network namespace of the
/// test's own, which the Service's Endpoints name.
#[test]
fn aggregator_routing_sends_requests_to_an_endpoint() {
    let subnet = (std::process::id() % 200) as u8 + 20;
    let Some(mut namespace) = Namespace::create(subnet) else {
        kapi_test_support::require::require(
            false,
            "a network namespace (ip netns add)",
            "run the tests as root on Linux with iproute2",
        );
        return;
    };
    let binary = Path::new(env!("CARGO_BIN_EXE_kapi"));
    let front = Server::start_args(binary, &["--enable-aggregator-routing=true"]);
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().join("extension");
    let address = format!("10.254.{subnet}.2:6443");
    namespace.spawn(
        binary,
        &[
            "serve",
            "--listen",
            &address,
            "--data-dir",
            data_dir.to_str().unwrap(),
            "--controllers=-*",
            "--requestheader-client-ca-file",
            front
                .data_dir()
                .join("front-proxy-ca.crt")
                .to_str()
                .unwrap(),
            "--tls-san",
            "routed.default.svc",
        ],
    );
    let ca = data_dir.join("ca.crt");
    until("the extension in its namespace", || {
        let out = std::process::Command::new("curl")
            .args(["-sS", "--max-time", "2", "--cacert"])
            .arg(&ca)
            .arg(format!("https://{address}/readyz"))
            .output()
            .ok()?;
        (out.stdout == b"ok").then_some(())
    });
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "routed", "namespace": "default"},
        "spec": {"ports": [{"port": 443, "targetPort": 6443}]}});
    let (code, made) = send(
        &front,
        "POST",
        "/api/v1/namespaces/default/services",
        &service,
    );
    assert_eq!(code, 201, "{made}");
    use base64::Engine as _;
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(std::fs::read(&ca).unwrap());
    let (code, made) = send(
        &front,
        "POST",
        APISERVICES,
        &apiservice("routed.example.com", "routed", 443, Some(&ca_bundle)),
    );
    assert_eq!(code, 201, "{made}");
    // Without endpoints the Service cannot be reached.
    let missing = condition(&front, "v1.routed.example.com", |c| {
        c["reason"] == "EndpointsNotFound"
    });
    assert_eq!(missing["reason"], "EndpointsNotFound");
    let endpoints = json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "routed", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": format!("10.254.{subnet}.2")}],
            "ports": [{"port": 6443}]}]});
    let (code, made) = send(
        &front,
        "POST",
        "/api/v1/namespaces/default/endpoints",
        &endpoints,
    );
    assert_eq!(code, 201, "{made}");
    // Reached, it does not serve that group: its 404 fails the check.
    let url = format!("https://10.254.{subnet}.2:6443/apis/routed.example.com/v1");
    let failed = condition(&front, "v1.routed.example.com", |c| {
        c["reason"] == "FailedDiscoveryCheck"
    });
    assert_eq!(
        failed["message"],
        format!("failing or missing response from {url}: bad status from {url}: 404")
    );
    // A group it serves, registered the same way, is passed on to it.
    let kubectl = |args: &[&str], stdin: &str| {
        let mut child = std::process::Command::new(kapi_test_support::kubectl_path())
            .arg("--kubeconfig")
            .arg(data_dir.join("kubeconfig"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "kubectl {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    kubectl(
        &["apply", "-f", "-"],
        r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.ext.example.com"},
            "spec": {"group": "ext.example.com", "scope": "Namespaced",
                "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}}]}}"#,
    );
    let (code, made) = send(
        &front,
        "POST",
        APISERVICES,
        &apiservice("ext.example.com", "routed", 443, Some(&ca_bundle)),
    );
    assert_eq!(code, 201, "{made}");
    let available = condition(&front, "v1.ext.example.com", |c| c["status"] == "True");
    assert_eq!(available["message"], "all checks passed");
    let thing = json!({"apiVersion": "ext.example.com/v1", "kind": "Thing",
        "metadata": {"name": "routed"}, "spec": {"a": 1}});
    let (code, made) = send(
        &front,
        "POST",
        "/apis/ext.example.com/v1/namespaces/default/things",
        &thing,
    );
    assert_eq!(code, 201, "{made}");
    let there = kubectl(&["get", "things", "routed", "-o", "jsonpath={.spec.a}"], "");
    assert_eq!(there, "1");
    drop(namespace);
}

/// Reads an HTTP/1.1 answer's head (up to the blank line) from `stream`.
fn read_head(stream: &mut impl std::io::Read) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).unwrap();
        assert_eq!(n, 1, "the connection ended in the head: {head:?}");
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

/// An upgrade (SPDY, WebSocket: exec and port-forward on an extension's
/// resources) is passed through: the extension's 101 reaches the client
/// and bytes flow both ways; the user is named in the front-proxy headers
/// and none of the client's credentials go on; a refusal (403) comes back
/// as the extension gave it.
#[test]
fn upgrades_are_switched_through_to_the_extension() {
    use std::io::{Read, Write};
    if !super::custom_resources::webhook_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/aggregation/upgrade.py"
    );
    let (_stand_in, port, ca) = super::custom_resources::start_webhook(script, dir.path());
    let front = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "webhook", "namespace": "default"},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1",
            "ports": [{"port": port.parse::<u16>().unwrap()}]}});
    let (code, _) = send(
        &front,
        "POST",
        "/api/v1/namespaces/default/services",
        &service,
    );
    assert_eq!(code, 201);
    use base64::Engine as _;
    let ca = base64::engine::general_purpose::STANDARD.encode(ca);
    let (code, made) = send(
        &front,
        "POST",
        APISERVICES,
        &apiservice(
            "echo.example.com",
            "webhook",
            port.parse().unwrap(),
            Some(&ca),
        ),
    );
    assert_eq!(code, 201, "{made}");
    condition(&front, "v1.echo.example.com", |c| c["status"] == "True");

    let upgrade = |path: &str| {
        let mut stream =
            kapi_test_support::tls::Stream::connect(front.address, Some(&[b"http/1.1"])).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\
             X-Stream-Protocol-Version: v4.channel.k8s.io\r\nX-Remote-User: mallory\r\n\
             X-Remote-Extra-Scopes: everything\r\nContent-Length: 0\r\n\r\n",
            front.address
        );
        stream.write_all(request.as_bytes()).unwrap();
        let head = read_head(&mut stream);
        (stream, head)
    };
    let (mut stream, head) = upgrade(
        "/apis/echo.example.com/v1/namespaces/default/echoes/e1/exec?command=sh&stdin=true",
    );
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("upgrade: spdy/3.1"),
        "{head}"
    );
    for message in ["ping\n", "a second frame\n"] {
        stream.write_all(message.as_bytes()).unwrap();
        let mut back = vec![0u8; message.len()];
        stream.read_exact(&mut back).unwrap();
        assert_eq!(String::from_utf8(back).unwrap(), message);
    }
    drop(stream);
    let (mut stream, head) =
        upgrade("/apis/echo.example.com/v1/namespaces/default/echoes/e1/refuse");
    assert!(head.starts_with("HTTP/1.1 403"), "{head}");
    let mut rest = String::new();
    let _ = stream.read_to_string(&mut rest);
    assert!(rest.contains("no upgrades here"), "{rest}");

    // What the extension was sent.
    let log = std::fs::read_to_string(dir.path().join("upgrades.jsonl")).unwrap();
    let first: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(
        first["path"],
        "/apis/echo.example.com/v1/namespaces/default/echoes/e1/exec?command=sh&stdin=true"
    );
    let headers = &first["headers"];
    assert_ne!(headers["x-remote-user"], json!(["mallory"]), "{headers}");
    assert_eq!(
        headers["x-remote-user"].as_array().unwrap().len(),
        1,
        "{headers}"
    );
    assert!(
        headers["x-remote-group"]
            .as_array()
            .unwrap()
            .contains(&json!("system:masters")),
        "{headers}"
    );
    assert!(headers.get("x-remote-extra-scopes").is_none(), "{headers}");
    assert!(headers.get("authorization").is_none(), "{headers}");
    assert_eq!(
        headers["x-stream-protocol-version"],
        json!(["v4.channel.k8s.io"])
    );
    assert!(
        headers["x-forwarded-for"][0]
            .as_str()
            .unwrap()
            .contains("127.0.0.1"),
        "{headers}"
    );
}
