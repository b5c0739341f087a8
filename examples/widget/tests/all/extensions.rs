//! The example's admission plugin, kind hook and controller, added through
//! kapi's extension points, seen through kubectl.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use kapi_test_support::Server;

fn widget(name: &str, size: u32, factory: Option<&str>) -> String {
    let factory = factory.map_or(String::new(), |f| format!("  factory: {f}\n"));
    format!(
        "apiVersion: example.kapi.dev/v1\nkind: Widget\nmetadata:\n  name: {name}\n  \
         namespace: default\nspec:\n  color: green\n  size: {size}\n{factory}"
    )
}

/// The widget's `status.phase`, once it is `want` (at most 30 s).
fn wait_phase(s: &Server, name: &str, want: &str) {
    let mut seen = String::new();
    for _ in 0..150 {
        seen = s.kubectl_ok(&["get", "widget", name, "-o", "jsonpath={.status.phase}"]);
        if seen == want {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("widget {name} has phase {seen:?}, not {want:?}");
}

#[test]
fn the_widget_plugin_hook_and_controller_run_in_the_example_server() {
    // The added controller alone, named as the built-in ones are.
    let s = Server::start_args(
        Path::new(env!("CARGO_BIN_EXE_kapi-example-widget")),
        &["--controllers=widget-phase-controller"],
    );

    // The admission plugin refuses a large widget without a factory...
    let refused = String::from_utf8_lossy(
        &s.kubectl_stdin(&["create", "-f", "-"], &widget("big", 20, None))
            .stderr,
    )
    .into_owned();
    assert!(
        refused.contains(
            "widgets.example.kapi.dev \"big\" is forbidden: a widget of more than 10 parts \
             needs a factory (spec.factory)"
        ),
        "{refused}"
    );
    assert!(
        s.kubectl(&["get", "widget", "big"])
            .stderr
            .starts_with(b"Error from server (NotFound)")
    );
    // ...and lets a small one, or a large one with a factory, through.
    s.kubectl_stdin_ok(&["create", "-f", "-"], &widget("small", 3, None));
    s.kubectl_stdin_ok(
        &["create", "-f", "-"],
        &widget("large", 20, Some("north-1")),
    );

    // The controller writes each widget's phase through /status.
    wait_phase(&s, "small", "Pending");
    wait_phase(&s, "large", "Built");
    s.kubectl_ok(&[
        "patch",
        "widget",
        "small",
        "--type=merge",
        "-p",
        r#"{"spec":{"factory":"south-2"}}"#,
    ]);
    wait_phase(&s, "small", "Built");

    // The kind hook keeps a factory once named: a 422 on spec.factory.
    let changed = s.kubectl_err(&[
        "patch",
        "widget",
        "large",
        "--type=merge",
        "-p",
        r#"{"spec":{"factory":"east-3"}}"#,
    ]);
    assert!(
        changed.contains(
            "The Widget \"large\" is invalid: spec.factory: Invalid value: \"east-3\": field is immutable"
        ),
        "{changed}"
    );
    let factory = s.kubectl_ok(&["get", "widget", "large", "-o", "jsonpath={.spec.factory}"]);
    assert_eq!(factory, "north-1");
}

#[test]
fn controllers_flag_turns_an_added_controller_off() {
    let s = Server::start_args(
        Path::new(env!("CARGO_BIN_EXE_kapi-example-widget")),
        &["--controllers=*,-widget-phase-controller"],
    );
    s.kubectl_stdin_ok(&["create", "-f", "-"], &widget("idle", 1, None));
    // The built-in controllers run (the namespace's default ServiceAccount
    // appears), the widget's does not: no phase.
    let mut accounts = String::new();
    for _ in 0..150 {
        accounts = s.kubectl_ok(&["get", "serviceaccounts", "-o", "name"]);
        if accounts.contains("serviceaccount/default") {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(accounts.contains("serviceaccount/default"), "{accounts}");
    let phase = s.kubectl_ok(&["get", "widget", "idle", "-o", "jsonpath={.status.phase}"]);
    assert_eq!(phase, "");
}
