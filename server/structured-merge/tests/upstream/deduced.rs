//! merge/deduced_test.go, `TestDeduced`: no schema (`DeducedParser`):
//! maps are granular, lists atomic.

use serde_json::{Value, json};

use crate::fixture::{Parser, State};

fn deduced() -> State {
    State::new(Parser::deduced())
}

#[test]
fn leaf_apply_twice() {
    let mut s = deduced();
    s.apply("default", "v1", json!({"numeric": 1, "string": "string"}));
    s.apply(
        "default",
        "v1",
        json!({"numeric": 2, "string": "string", "bool": false}),
    );
    s.assert_live(
        "v1",
        json!({"numeric": 2, "string": "string", "bool": false}),
    );
    s.assert_managed(&[(
        "default",
        "v1",
        vec![path!["numeric"], path!["string"], path!["bool"]],
    )]);
}

#[test]
fn leaf_apply_update_apply_no_conflict() {
    let mut s = deduced();
    s.apply("default", "v1", json!({"numeric": 1, "string": "string"}));
    s.update(
        "controller",
        "v1",
        json!({"numeric": 1, "string": "string", "bool": true}),
    );
    s.apply("default", "v1", json!({"numeric": 2, "string": "string"}));
    s.assert_live(
        "v1",
        json!({"numeric": 2, "string": "string", "bool": true}),
    );
    s.assert_managed(&[
        ("default", "v1", vec![path!["numeric"], path!["string"]]),
        ("controller", "v1", vec![path!["bool"]]),
    ]);
}

#[test]
fn leaf_apply_update_apply_with_conflict() {
    let mut s = deduced();
    s.apply("default", "v1", json!({"numeric": 1, "string": "string"}));
    s.update(
        "controller",
        "v1",
        json!({"numeric": 1, "string": "controller string", "bool": true}),
    );
    let config = json!({"numeric": 2, "string": "user string"});
    s.apply_conflicts(
        "default",
        "v1",
        config.clone(),
        &[("controller", path!["string"])],
    );
    s.force_apply("default", "v1", config);
    s.assert_live(
        "v1",
        json!({"numeric": 2, "string": "user string", "bool": true}),
    );
    s.assert_managed(&[
        ("default", "v1", vec![path!["numeric"], path!["string"]]),
        ("controller", "v1", vec![path!["bool"]]),
    ]);
}

#[test]
fn leaf_apply_twice_remove() {
    let mut s = deduced();
    s.apply(
        "default",
        "v1",
        json!({"numeric": 1, "string": "string", "bool": false}),
    );
    s.apply("default", "v1", json!({"string": "new string"}));
    s.assert_live("v1", json!({"string": "new string"}));
    s.assert_managed(&[("default", "v1", vec![path!["string"]])]);
}

#[test]
fn leaf_update_remove_empty_set() {
    let mut s = deduced();
    s.apply("default", "v1", json!({"string": "string"}));
    s.update("controller", "v1", json!({"string": "new string"}));
    s.assert_live("v1", json!({"string": "new string"}));
    s.assert_managed(&[("controller", "v1", vec![path!["string"]])]);
}

#[test]
fn apply_twice_list_is_atomic() {
    let mut s = deduced();
    s.apply("default", "v1", json!({"list": ["a", "c"]}));
    s.apply("default", "v1", json!({"list": ["a", "d", "c", "b"]}));
    s.assert_live("v1", json!({"list": ["a", "d", "c", "b"]}));
    s.assert_managed(&[("default", "v1", vec![path!["list"]])]);
}

#[test]
fn apply_update_apply_list() {
    let mut s = deduced();
    s.apply("default", "v1", json!({"list": ["a", "c"]}));
    s.update("controller", "v1", json!({"list": ["a", "b", "c", "d"]}));
    s.force_apply("default", "v1", json!({"list": ["a", "b", "c"]}));
    s.assert_live("v1", json!({"list": ["a", "b", "c"]}));
    s.assert_managed(&[("default", "v1", vec![path!["list"]])]);
}

#[test]
fn leaf_apply_remove_empty_set() {
    let mut s = deduced();
    s.apply("default", "v1", json!({"string": "string"}));
    s.apply("default", "v1", json!(null));
    s.assert_live("v1", json!(null));
    s.assert_managed(&[]);
}

/// A nested map with an atomic list and a list of maps (atomic too, being
/// deduced), changed by a controller, then applied again: conflicts on the
/// controller's values, forced.
fn apply_update_apply_nested_in(controller_version: &str, applier_version: &str) {
    let mut s = deduced();
    s.apply(
        "default",
        "v1",
        json!({"a": 1, "b": {"c": {"d": 2, "e": [1, 2, 3], "f": [{"name": "n", "value": 1}]}}}),
    );
    s.update(
        "controller",
        controller_version,
        json!({
            "a": 1,
            "b": {"c": {"d": 3, "e": [1, 2, 3, 4], "f": [{"name": "n", "value": 2}]}},
            "g": 5
        }),
    );
    let config: Value =
        json!({"a": 2, "b": {"c": {"d": 2, "e": [3, 2, 1], "f": [{"name": "n", "value": 1}]}}});
    s.apply_conflicts(
        "default",
        applier_version,
        config.clone(),
        &[
            ("controller", path!["b", "c", "d"]),
            ("controller", path!["b", "c", "e"]),
            ("controller", path!["b", "c", "f"]),
        ],
    );
    s.force_apply("default", applier_version, config);
    s.assert_live(
        "v1",
        json!({
            "a": 2,
            "b": {"c": {"d": 2, "e": [3, 2, 1], "f": [{"name": "n", "value": 1}]}},
            "g": 5
        }),
    );
}

#[test]
fn apply_update_apply_nested() {
    apply_update_apply_nested_in("v1", "v1");
}

#[test]
fn apply_update_apply_nested_different_version() {
    apply_update_apply_nested_in("v2", "v3");
}
