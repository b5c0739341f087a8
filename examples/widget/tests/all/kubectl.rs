//! The downstream kind served by the downstream binary, driven by kubectl.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kapi_test_support::{Server, text};

const WIDGET: &str = "\
apiVersion: example.kapi.dev/v1
kind: Widget
metadata:
  name: gizmo
  namespace: default
spec:
  color: blue
  factory: north-1
";

#[test]
fn kubectl_creates_lists_and_patches_widgets() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi-example-widget")));
    let resources = s.kubectl_ok(&["api-resources", "--api-group", "example.kapi.dev"]);
    assert!(
        resources.contains("widgets") && resources.contains("wd") && resources.contains("Widget"),
        "{resources}"
    );
    assert!(
        s.kubectl_stdin_ok(&["create", "-f", "-"], WIDGET)
            .contains("widget.example.kapi.dev/gizmo created")
    );

    let table = s.kubectl_ok(&["get", "widgets"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "COLOR", "SIZE", "AGE"], "{table}");
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        &row[..3],
        ["gizmo", "blue", "1"],
        "defaulted size shows: {table}"
    );
    assert!(
        s.kubectl_ok(&["get", "wd", "-o", "wide"])
            .lines()
            .next()
            .unwrap()
            .contains("PHASE")
    );

    s.kubectl_ok(&[
        "patch",
        "widget",
        "gizmo",
        "--type=merge",
        "-p",
        r#"{"spec":{"color":"red"}}"#,
    ]);
    assert_eq!(
        s.kubectl_ok(&[
            "get",
            "wd",
            "--field-selector",
            "spec.color=red",
            "-o",
            "name"
        ])
        .trim(),
        "widget.example.kapi.dev/gizmo"
    );
    assert_eq!(
        s.kubectl_ok(&[
            "get",
            "wd",
            "gizmo",
            "-o",
            "jsonpath={.metadata.generation}"
        ]),
        "2"
    );

    let bad = WIDGET
        .replace("color: blue", "color: purple")
        .replace("gizmo", "other");
    let err = text(&s.kubectl_stdin(&["create", "-f", "-"], &bad).stderr);
    assert!(
        err.contains(r#"spec.color: Unsupported value: "purple""#),
        "{err}"
    );

    s.kubectl_ok(&["delete", "widget", "gizmo"]);
    assert!(
        s.kubectl_ok(&["get", "widgets", "-o", "name"])
            .trim()
            .is_empty()
    );
}

#[test]
fn kubectl_explain_prints_the_widget_docs_in_each_version() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi-example-widget")));
    let out = s.kubectl_ok(&["explain", "widgets.spec"]);
    assert!(
        out.contains("VERSION:    v1"),
        "the preferred version: {out}"
    );
    assert!(out.contains("The desired state of a widget."), "{out}");
    assert!(out.contains("color\t<string> -required-"), "{out}");
    assert!(
        out.contains("The color; one of red, green and blue."),
        "{out}"
    );
    assert!(
        out.contains("Number of parts, 1 to 100; 1 when unset."),
        "{out}"
    );
    let alpha = s.kubectl_ok(&[
        "explain",
        "widgets.spec",
        "--api-version",
        "example.kapi.dev/v1alpha1",
    ]);
    assert!(alpha.contains("VERSION:    v1alpha1"), "{alpha}");
    assert!(
        alpha.contains("The colour; one of red, green and blue (`color` in v1)."),
        "{alpha}"
    );
}
