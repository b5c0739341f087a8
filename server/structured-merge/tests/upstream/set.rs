//! merge/set_test.go, `TestUpdateSet`: a list of type set of strings.

use serde_json::{Value, json};

use crate::fixture::{Parser, State, val};

/// `setFieldsParser` (`elementRelationship: associative`, no keys).
pub fn set_fields() -> Parser {
    Parser::same(
        json!({
            "sets": {
                "type": "object",
                "properties": {
                    "list": {
                        "type": "array",
                        "items": {"type": "string"},
                        "x-kubernetes-list-type": "set"
                    }
                }
            }
        }),
        "sets",
    )
}

fn list(items: &[&str]) -> Value {
    json!({ "list": items })
}

fn owned(items: &[&str]) -> Vec<kapi_structured_merge::path::Path> {
    items.iter().map(|i| path!["list", val(*i)]).collect()
}

#[test]
fn apply_twice() {
    let mut s = State::new(set_fields());
    s.apply("default", "v1", list(&["a", "c"]));
    s.apply("default", "v1", list(&["a", "b", "c", "d"]));
    s.assert_live("v1", list(&["a", "b", "c", "d"]));
    s.assert_managed(&[("default", "v1", owned(&["a", "b", "c", "d"]))]);
}

fn apply_update_apply_no_overlap_in(controller_version: &str) {
    let mut s = State::new(set_fields());
    s.apply("default", "v1", list(&["a", "c"]));
    s.update(
        "controller",
        controller_version,
        list(&["a", "b", "c", "d"]),
    );
    s.apply("default", "v1", list(&["a", "aprime", "c", "cprime"]));
    s.assert_live("v1", list(&["a", "b", "aprime", "c", "d", "cprime"]));
    s.assert_managed(&[
        ("default", "v1", owned(&["a", "aprime", "c", "cprime"])),
        ("controller", controller_version, owned(&["b", "d"])),
    ]);
}

#[test]
fn apply_update_apply_no_overlap() {
    apply_update_apply_no_overlap_in("v1");
}

#[test]
fn apply_update_apply_no_overlap_and_different_version() {
    apply_update_apply_no_overlap_in("v2");
}

fn apply_update_apply_with_overlap_in(controller_version: &str) {
    let mut s = State::new(set_fields());
    s.apply("default", "v1", list(&["a", "c"]));
    s.update(
        "controller",
        controller_version,
        list(&["a", "b", "c", "d"]),
    );
    s.apply("default", "v1", list(&["a", "b", "c"]));
    s.assert_live("v1", list(&["a", "b", "c", "d"]));
    s.assert_managed(&[
        ("default", "v1", owned(&["a", "b", "c"])),
        ("controller", controller_version, owned(&["b", "d"])),
    ]);
}

#[test]
fn apply_update_apply_with_overlap() {
    apply_update_apply_with_overlap_in("v1");
}

#[test]
fn apply_update_apply_with_overlap_and_different_version() {
    apply_update_apply_with_overlap_in("v2");
}

#[test]
fn apply_twice_reorder() {
    let mut s = State::new(set_fields());
    s.apply("default", "v1", list(&["a", "b", "c", "d"]));
    s.apply("default", "v1", list(&["a", "d", "c", "b"]));
    s.assert_live("v1", list(&["a", "d", "c", "b"]));
    s.assert_managed(&[("default", "v1", owned(&["a", "b", "c", "d"]))]);
}

fn apply_update_apply_reorder_in(second_apply_version: &str) {
    let mut s = State::new(set_fields());
    s.apply("default", "v1", list(&["a", "b", "c", "d"]));
    s.update("controller", "v1", list(&["a", "d", "c", "b"]));
    s.apply("default", second_apply_version, list(&["a", "b", "c", "d"]));
    s.assert_live("v1", list(&["a", "b", "c", "d"]));
    s.assert_managed(&[(
        "default",
        second_apply_version,
        owned(&["a", "b", "c", "d"]),
    )]);
}

#[test]
fn apply_update_apply_reorder() {
    apply_update_apply_reorder_in("v1");
}

#[test]
fn apply_update_apply_reorder_across_versions() {
    apply_update_apply_reorder_in("v2");
}

#[test]
fn apply_twice_remove() {
    let mut s = State::new(set_fields());
    s.apply("default", "v1", list(&["a", "b", "c", "d"]));
    s.apply("default", "v1", list(&["a", "c"]));
    s.assert_live("v1", list(&["a", "c"]));
    s.assert_managed(&[("default", "v1", owned(&["a", "c"]))]);
}

#[test]
fn apply_twice_remove_across_versions() {
    let mut s = State::new(set_fields());
    s.apply("default", "v1", list(&["a", "b", "c", "d"]));
    s.apply("default", "v2", list(&["a", "c", "e"]));
    s.assert_live("v1", list(&["a", "c", "e"]));
    s.assert_managed(&[("default", "v2", owned(&["a", "c", "e"]))]);
}
