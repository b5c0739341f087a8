//! The widget served in two versions from one stored object: `v1alpha1`
//! converted to and from `v1` (the hub) by `#[derive(Convert)]`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kapi_example_widget::{Widget, WidgetSpec, WidgetStatus, v1alpha1};
use kapi_runtime::Convert;
use kapi_runtime::meta::ObjectMeta;
use kapi_test_support::Server;
use serde_json::Value;

/// xorshift64*: a small seeded generator, so a failure names its case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn text(&mut self) -> Option<String> {
        (!self.next().is_multiple_of(3)).then(|| format!("t{}", self.next() % 1000))
    }
}

fn random_v1alpha1(rng: &mut Rng) -> v1alpha1::Widget {
    v1alpha1::Widget {
        metadata: ObjectMeta {
            name: rng.text(),
            namespace: rng.text(),
            labels: rng
                .text()
                .map(|v| [("app".to_owned(), v)].into_iter().collect()),
            ..ObjectMeta::default()
        },
        spec: v1alpha1::WidgetSpec {
            colour: rng.text().unwrap_or_default(),
            parts: rng
                .next()
                .is_multiple_of(2)
                .then(|| (rng.next() % 200) as i64 - 50),
            factory: rng.text(),
        },
        status: rng
            .next()
            .is_multiple_of(2)
            .then(|| WidgetStatus { phase: rng.text() }),
    }
}

#[test]
fn random_widgets_round_trip_through_the_hub() {
    let mut rng = Rng(0x005e_ed0f_a1fa);
    for case in 0..500 {
        let alpha = random_v1alpha1(&mut rng);
        let hub: Widget = alpha.clone().convert();
        assert_eq!(hub.spec.color, alpha.spec.colour, "case {case}");
        assert_eq!(hub.spec.size, alpha.spec.parts, "case {case}");
        let back: v1alpha1::Widget = hub.clone().convert();
        assert_eq!(back, alpha, "case {case}: v1alpha1 -> v1 -> v1alpha1");
        let again: Widget = back.convert();
        assert_eq!(again, hub, "case {case}: v1 -> v1alpha1 -> v1");
    }
    // A v1 object that no v1alpha1 object produced converts back unchanged too.
    let v1 = Widget {
        spec: WidgetSpec {
            color: "green".into(),
            size: Some(7),
            factory: None,
        },
        ..Widget::default()
    };
    let alpha: v1alpha1::Widget = v1.clone().convert();
    assert_eq!(Convert::<Widget>::convert(alpha), v1);
}

const ALPHA: &str = "\
apiVersion: example.kapi.dev/v1alpha1
kind: Widget
metadata:
  name: old-style
  namespace: default
spec:
  colour: green
  parts: 3
";

fn json(s: &Server, args: &[&str]) -> Value {
    serde_json::from_str(&s.kubectl_ok(args)).expect("JSON")
}

#[test]
fn one_object_is_read_written_listed_and_watched_in_both_versions() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi-example-widget")));

    let group = json(&s, &["get", "--raw", "/apis/example.kapi.dev"]);
    assert_eq!(group["preferredVersion"]["version"], "v1", "{group}");
    let versions: Vec<&str> = group["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["v1", "v1alpha1"]);

    // Written in v1alpha1, read in v1 (kubectl's default: the preferred version).
    s.kubectl_stdin_ok(&["create", "-f", "-"], ALPHA);
    let v1 = json(&s, &["get", "widget", "old-style", "-o", "json"]);
    assert_eq!(v1["apiVersion"], "example.kapi.dev/v1");
    assert_eq!(v1["spec"]["color"], "green");
    assert_eq!(v1["spec"]["size"], 3);
    assert!(v1["spec"].get("colour").is_none(), "{v1}");

    // Patched in v1alpha1's shape, seen in v1.
    s.kubectl_ok(&[
        "patch",
        "widgets.v1alpha1.example.kapi.dev",
        "old-style",
        "--type=merge",
        "-p",
        r#"{"spec":{"colour":"red"}}"#,
    ]);
    let v1 = json(&s, &["get", "widget", "old-style", "-o", "json"]);
    assert_eq!(v1["spec"]["color"], "red");
    assert_eq!(v1["metadata"]["generation"], 2);

    // Written in v1, listed and read in v1alpha1.
    s.kubectl_stdin_ok(
        &["create", "-f", "-"],
        "apiVersion: example.kapi.dev/v1\nkind: Widget\nmetadata:\n  name: new-style\n  namespace: default\nspec:\n  color: blue\n",
    );
    let list = json(
        &s,
        &[
            "get",
            "--raw",
            "/apis/example.kapi.dev/v1alpha1/namespaces/default/widgets",
        ],
    );
    assert_eq!(list["apiVersion"], "example.kapi.dev/v1alpha1");
    let items = list["items"].as_array().unwrap();
    let colours: Vec<(&str, &str)> = items
        .iter()
        .map(|i| {
            (
                i["metadata"]["name"].as_str().unwrap(),
                i["spec"]["colour"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(colours, [("new-style", "blue"), ("old-style", "red")]);
    assert_eq!(
        items[0]["spec"]["parts"], 1,
        "defaulted in v1, seen in v1alpha1"
    );
    let table = s.kubectl_ok(&["get", "widgets.v1alpha1.example.kapi.dev"]);
    assert!(table.starts_with("NAME"), "{table}");
    assert!(table.contains("COLOUR"), "{table}");

    // A watch in either version sees the same objects, each in its version.
    for (version, field) in [("v1alpha1", "colour"), ("v1", "color")] {
        let path = format!(
            "/apis/example.kapi.dev/{version}/namespaces/default/widgets?watch=true&resourceVersion=0&timeoutSeconds=1"
        );
        let out = s.kubectl_ok(&["get", "--raw", &path]);
        let events: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("watch line"))
            .collect();
        assert_eq!(events.len(), 2, "{out}");
        for event in &events {
            assert_eq!(event["type"], "ADDED");
            let object = &event["object"];
            assert_eq!(object["apiVersion"], format!("example.kapi.dev/{version}"));
            assert!(object["spec"][field].is_string(), "{object}");
        }
    }
}
