//! merge/ignore_test.go: fields nobody owns (`IgnoredFields`, the same
//! cases as `TestIgnoreFilter` with an exclude-set filter) in
//! `TestIgnoredFields`, and per version in `TestFilteredFieldsUsesVersions`.

use std::rc::Rc;

use serde_json::json;

use crate::fixture::converters::Repeating;
use crate::fixture::{Parser, State};
use crate::nested::nested_type;

fn deduced_ignoring(paths: &[kapi_structured_merge::path::Path]) -> State {
    State::new(Parser::deduced()).ignoring("v1", paths)
}

#[test]
fn update_does_not_own_ignored() {
    let mut s = deduced_ignoring(&[path!["string"]]);
    let object = json!({"numeric": 1, "string": "some string"});
    s.update("default", "v1", object.clone());
    s.assert_live("v1", object);
    s.assert_managed(&[("default", "v1", vec![path!["numeric"]])]);
}

#[test]
fn update_does_not_own_deep_ignored() {
    let mut s = deduced_ignoring(&[path!["obj"]]);
    let object = json!({"numeric": 1, "obj": {"string": "foo", "numeric": 2}});
    s.update("default", "v1", object.clone());
    s.assert_live("v1", object);
    s.assert_managed(&[("default", "v1", vec![path!["numeric"]])]);
}

#[test]
fn apply_does_not_own_ignored() {
    let mut s = deduced_ignoring(&[path!["string"]]);
    let object = json!({"numeric": 1, "string": "some string"});
    s.apply("default", "v1", object.clone());
    s.assert_live("v1", object);
    s.assert_managed(&[("default", "v1", vec![path!["numeric"]])]);
}

#[test]
fn apply_does_not_own_deep_ignored() {
    let mut s = deduced_ignoring(&[path!["obj"]]);
    let object = json!({"numeric": 1, "obj": {"string": "foo", "numeric": 2}});
    s.apply("default", "v1", object.clone());
    s.assert_live("v1", object);
    s.assert_managed(&[("default", "v1", vec![path!["numeric"]])]);
}

// TestFilteredFieldsUsesVersions: the recursive map whose keys repeat per
// version (`repeatingConverter`), with `c` ignored in the version's spelling.

const M: &str = "mapOfMapsRecursive";

fn repeating() -> State {
    let parser = Rc::new(nested_type());
    let converter = Rc::new(Repeating {
        parser: parser.clone(),
    });
    State::with_converter(parser, converter)
}

fn recursive(v: serde_json::Value) -> serde_json::Value {
    json!({ "mapOfMapsRecursive": v })
}

#[test]
fn does_use_ignored_fields_versions() {
    let mut s = repeating()
        .ignoring("v1", &[path![M, "c"]])
        .ignoring("v2", &[path![M, "cc"]])
        .ignoring("v3", &[path![M, "ccc"]])
        .ignoring("v4", &[path![M, "cccc"]]);
    s.apply(
        "apply-one",
        "v1",
        recursive(json!({"a": {"b": null}, "c": {"d": null}})),
    );
    s.apply(
        "apply-two",
        "v2",
        recursive(json!({"aa": null, "cc": {"dd": null}})),
    );
    s.apply("apply-one", "v4", recursive(json!(null)));
    // cccc stays: an ignored field is not removed by the apply that stops
    // applying it (upstream's note).
    s.assert_live(
        "v4",
        recursive(json!({"aaaa": null, "cccc": {"dddd": null}})),
    );
    s.assert_managed(&[
        ("apply-one", "v4", vec![path![M]]),
        ("apply-two", "v2", vec![path![M, "aa"]]),
    ]);
}

#[test]
fn update_does_not_steal_ignored() {
    let mut s = repeating().ignoring("v2", &[path![M, "c"]]);
    s.update(
        "update-one",
        "v1",
        recursive(json!({"a": {"b": null}, "c": {"d": null}})),
    );
    s.update(
        "update-two",
        "v2",
        recursive(json!({"a": {"b": null}, "c": {"e": null}})),
    );
    s.assert_live("v1", recursive(json!({"a": {"b": null}, "c": {"e": null}})));
    s.assert_managed(&[
        (
            "update-one",
            "v1",
            vec![path![M], path![M, "a"], path![M, "a", "b"], path![M, "c"]],
        ),
        ("update-two", "v2", vec![path![M, "a"], path![M, "a", "b"]]),
    ]);
}

#[test]
fn apply_does_not_steal_ignored() {
    let mut s = repeating().ignoring("v2", &[path![M, "c"]]);
    s.apply(
        "apply-one",
        "v1",
        recursive(json!({"a": {"b": null}, "c": {"d": null}})),
    );
    s.apply(
        "apply-two",
        "v2",
        recursive(json!({"a": {"b": null}, "c": {"e": null}})),
    );
    s.assert_live("v1", recursive(json!({"a": {"b": null}, "c": {"d": null}})));
    s.assert_managed(&[
        (
            "apply-one",
            "v1",
            vec![
                path![M, "a"],
                path![M, "a", "b"],
                path![M, "c"],
                path![M, "c", "d"],
            ],
        ),
        ("apply-two", "v2", vec![path![M, "a"], path![M, "a", "b"]]),
    ]);
}
