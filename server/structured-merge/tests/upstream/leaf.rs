//! merge/leaf_test.go, `TestUpdateLeaf`: a struct of three scalars.

use serde_json::json;

use crate::fixture::{Parser, State};

/// `leafFieldsParser`.
fn leaf_fields() -> State {
    State::new(Parser::same(
        json!({
            "leafFields": {
                "type": "object",
                "properties": {
                    "numeric": {"type": "number"},
                    "string": {"type": "string"},
                    "bool": {"type": "boolean"}
                }
            }
        }),
        "leafFields",
    ))
}

#[test]
fn apply_twice() {
    let mut s = leaf_fields();
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
fn apply_twice_different_versions() {
    let mut s = leaf_fields();
    s.apply("default", "v1", json!({"numeric": 1, "string": "string"}));
    s.apply(
        "default",
        "v2",
        json!({"numeric": 2, "string": "string", "bool": false}),
    );
    s.assert_live(
        "v1",
        json!({"numeric": 2, "string": "string", "bool": false}),
    );
    s.assert_managed(&[(
        "default",
        "v2",
        vec![path!["numeric"], path!["string"], path!["bool"]],
    )]);
}

fn apply_update_apply_no_conflict_in(controller_version: &str) {
    let mut s = leaf_fields();
    s.apply("default", "v1", json!({"numeric": 1, "string": "string"}));
    s.update(
        "controller",
        controller_version,
        json!({"numeric": 1, "string": "string", "bool": true}),
    );
    s.apply("default", "v1", json!({"numeric": 2, "string": "string"}));
    s.assert_live(
        "v1",
        json!({"numeric": 2, "string": "string", "bool": true}),
    );
    s.assert_managed(&[
        ("default", "v1", vec![path!["numeric"], path!["string"]]),
        ("controller", controller_version, vec![path!["bool"]]),
    ]);
}

#[test]
fn apply_update_apply_no_conflict() {
    apply_update_apply_no_conflict_in("v1");
}

#[test]
fn apply_update_apply_no_conflict_different_version() {
    apply_update_apply_no_conflict_in("v2");
}

fn apply_update_apply_with_conflict_in(controller_version: &str) {
    let mut s = leaf_fields();
    s.apply("default", "v1", json!({"numeric": 1, "string": "string"}));
    s.update(
        "controller",
        controller_version,
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
        ("controller", controller_version, vec![path!["bool"]]),
    ]);
}

#[test]
fn apply_update_apply_with_conflict() {
    apply_update_apply_with_conflict_in("v1");
}

#[test]
fn apply_update_apply_with_conflict_across_version() {
    apply_update_apply_with_conflict_in("v2");
}

#[test]
fn apply_twice_remove() {
    let mut s = leaf_fields();
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
fn update_apply_omits() {
    let mut s = leaf_fields();
    s.apply("default", "v1", json!({"numeric": 2}));
    s.update("controller", "v1", json!({"numeric": 1}));
    s.apply("default", "v1", json!(null));
    s.assert_live("v1", json!({"numeric": 1}));
    s.assert_managed(&[("controller", "v1", vec![path!["numeric"]])]);
}

#[test]
fn apply_twice_remove_different_version() {
    let mut s = leaf_fields();
    s.apply(
        "default",
        "v1",
        json!({"numeric": 1, "string": "string", "bool": false}),
    );
    s.apply("default", "v2", json!({"string": "new string"}));
    s.assert_live("v1", json!({"string": "new string"}));
    s.assert_managed(&[("default", "v2", vec![path!["string"]])]);
}

#[test]
fn update_remove_empty_set() {
    let mut s = leaf_fields();
    s.apply("default", "v1", json!({"string": "string"}));
    s.update("controller", "v1", json!({"string": "new string"}));
    s.assert_live("v1", json!({"string": "new string"}));
    s.assert_managed(&[("controller", "v1", vec![path!["string"]])]);
}

#[test]
fn apply_remove_empty_set() {
    let mut s = leaf_fields();
    s.apply("default", "v1", json!({"string": "string"}));
    s.apply("default", "v1", json!(null));
    s.assert_live("v1", json!(null));
    s.assert_managed(&[]);
}
