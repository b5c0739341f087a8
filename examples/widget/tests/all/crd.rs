//! The widget as a CustomResourceDefinition: the manifest `crd` prints is
//! the one checked in, and the kind served from it by a kapi without the
//! widget compiled in answers as the compiled kind does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::time::{Duration, Instant};

use clap::Parser;
use kapi_runtime::scheme::Scheme;
use kapi_server::serve::ServeArgs;
use kapi_test_support::{Answer, Server, http_exchange};
use serde_json::{Value, json};

const MANIFEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/generated/widgets.example.kapi.dev.yaml"
);

fn printed_manifest() -> String {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    kapi_example_widget::install(&mut scheme);
    let (yaml, notes) =
        kapi_server::custom::manifest::crd_yaml(&scheme, "example.kapi.dev/Widget").unwrap();
    assert_eq!(notes.len(), 1, "v1alpha1 renames fields: {notes:?}");
    yaml
}

/// The checked-in manifest is what `crd` prints; a stale copy is rewritten
/// (and fails under `KAPI_REQUIRE_ALL`, as CI runs, where nothing is
/// written).
#[test]
fn the_checked_in_manifest_is_fresh() {
    let printed = printed_manifest();
    let stored = std::fs::read_to_string(MANIFEST).unwrap_or_default();
    if printed == stored {
        return;
    }
    let strict = std::env::var("KAPI_REQUIRE_ALL").is_ok_and(|v| !v.is_empty() && v != "0");
    assert!(
        !strict,
        "{MANIFEST} is stale: run `cargo test -p kapi-example-widget` and commit it"
    );
    std::fs::write(MANIFEST, printed).unwrap();
}

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    serve: ServeArgs,
}

/// A kapi with only the built-in kinds (what `kapi serve` runs), in this
/// process, on a free loopback port; it runs until the tests end.
fn plain_kapi(dir: &Path) -> SocketAddr {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let args = Args::parse_from([
        "kapi".to_owned(),
        format!("--data-dir={}", dir.display()),
        format!("--listen={address}"),
        "--controllers=-*".to_owned(),
    ]);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let mut scheme = Scheme::new();
        kapi_api_types::install(&mut scheme);
        runtime
            .block_on(kapi_server::serve::run(scheme, args.serve.options()))
            .unwrap();
    });
    // Spoken to over TLS as its kubeconfig says, once it is written.
    let kubeconfig = dir.join("kubeconfig");
    wait("the plain kapi to write its kubeconfig", || {
        std::fs::read_to_string(&kubeconfig).is_ok_and(|text| text.contains("users:"))
    });
    kapi_test_support::tls::remember(address, dir);
    wait("the plain kapi to answer", || {
        http_exchange(address, "GET", "/readyz", &[], b"").is_some_and(|a| a.code == 200)
    });
    address
}

fn wait(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "waited 30 s for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An answer with what differs between any two servers masked.
fn masked(answer: &Answer) -> (u16, Value) {
    let mut body: Value = serde_json::from_str(&answer.body).unwrap_or(Value::Null);
    fn mask(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    match k.as_str() {
                        "uid" | "resourceVersion" | "creationTimestamp" | "time" => {
                            *v = json!("<masked>")
                        }
                        // The created spec itself is owned (`.`) for a custom
                        // resource, whose empty object has no spec, and not for
                        // a compiled kind, whose empty object (Go's zero value)
                        // has one: upstream records the two so.
                        "f:spec" => {
                            if let Some(spec) = v.as_object_mut() {
                                spec.remove(".");
                            }
                        }
                        _ => mask(v),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(mask),
            _ => {}
        }
    }
    mask(&mut body);
    // Lists of custom resources say `continue: ""`, as upstream's do.
    if body["metadata"]["continue"] == "" {
        body["metadata"].as_object_mut().unwrap().remove("continue");
    }
    // A custom resource's list items carry their kind and apiVersion, a
    // compiled kind's do not: upstream's unstructured and typed lists.
    if body["kind"].as_str().is_some_and(|k| k.ends_with("List"))
        && let Some(items) = body.get_mut("items").and_then(Value::as_array_mut)
    {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            item.remove("kind");
            item.remove("apiVersion");
        }
    }
    if let Some(rows) = body.get_mut("rows").and_then(Value::as_array_mut) {
        // The last cell of a row is its age.
        for row in rows {
            if let Some(cells) = row["cells"].as_array_mut() {
                cells.pop();
            }
        }
    }
    (answer.code, body)
}

const WIDGETS: &str = "/apis/example.kapi.dev/v1/namespaces/default/widgets";
const JSON: (&str, &str) = ("Content-Type", "application/json");

#[test]
fn the_widget_served_from_its_crd_answers_as_the_compiled_widget() {
    let compiled = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi-example-widget")));
    let dir = tempfile::tempdir().unwrap();
    let plain = plain_kapi(&dir.path().join("data"));
    let manifest: Value = serde_saphyr::from_str(&printed_manifest()).unwrap();
    let created = http_exchange(
        plain,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &[JSON],
        manifest.to_string().as_bytes(),
    )
    .unwrap();
    assert_eq!(created.code, 201, "{}", created.body);
    wait("the widgets to be served", || {
        http_exchange(plain, "GET", WIDGETS, &[], b"").is_some_and(|a| a.code == 200)
    });

    let table = ("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io");
    let widget = |name: &str, spec: Value| {
        json!({"apiVersion": "example.kapi.dev/v1", "kind": "Widget",
               "metadata": {"name": name, "namespace": "default"}, "spec": spec})
        .to_string()
    };
    let requests: Vec<(&str, String, Vec<(&str, &str)>, String)> = vec![
        (
            "POST",
            WIDGETS.into(),
            vec![JSON],
            widget("gizmo", json!({"color": "blue", "factory": "north-1"})),
        ),
        (
            "POST",
            WIDGETS.into(),
            vec![JSON],
            widget("sprocket", json!({"color": "red", "size": 7})),
        ),
        ("GET", format!("{WIDGETS}/gizmo"), vec![], String::new()),
        ("GET", WIDGETS.into(), vec![table], String::new()),
        (
            "GET",
            format!("{WIDGETS}?fieldSelector=spec.color%3Dred"),
            vec![],
            String::new(),
        ),
        (
            "POST",
            WIDGETS.into(),
            vec![JSON],
            widget("pink", json!({"color": "pink"})),
        ),
        (
            "POST",
            WIDGETS.into(),
            vec![JSON],
            widget("colorless", json!({"size": 3})),
        ),
        (
            "POST",
            WIDGETS.into(),
            vec![JSON],
            widget("gizmo", json!({"color": "blue"})),
        ),
        (
            "PATCH",
            format!("{WIDGETS}/gizmo"),
            vec![("Content-Type", "application/merge-patch+json")],
            r#"{"spec":{"size":5}}"#.into(),
        ),
        (
            "PATCH",
            format!("{WIDGETS}/gizmo/status"),
            vec![("Content-Type", "application/merge-patch+json")],
            r#"{"status":{"phase":"Built"}}"#.into(),
        ),
        (
            "GET",
            format!("{WIDGETS}/gizmo"),
            vec![table],
            String::new(),
        ),
        (
            "DELETE",
            format!("{WIDGETS}/sprocket"),
            vec![],
            String::new(),
        ),
        ("GET", format!("{WIDGETS}/sprocket"), vec![], String::new()),
    ];
    let mut differences = Vec::new();
    for (method, path, headers, body) in &requests {
        let ours = |address| {
            masked(&http_exchange(address, method, path, headers, body.as_bytes()).unwrap())
        };
        let (from_struct, from_crd) = (ours(compiled.address), ours(plain));
        if from_struct != from_crd {
            differences.push(format!(
                "{method} {path}:\n  compiled {from_struct:?}\n  from CRD {from_crd:?}"
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
