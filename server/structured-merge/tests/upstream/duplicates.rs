//! merge/duplicates_test.go, `TestDuplicates`: updaters may write lists
//! with repeated keys or values; such an item is owned as a whole, once.

use kapi_structured_merge::path::{Path, PathElement};
use serde_json::json;

use crate::fixture::{Parser, State, key, val};

/// `duplicatesParser`.
fn duplicates() -> State {
    State::new(Parser::same(
        json!({
            "type": {
                "type": "object",
                "properties": {
                    "list": {"$ref": "#/definitions/associativeList"},
                    "unrelated": {"type": "number"},
                    "set": {"$ref": "#/definitions/set"}
                }
            },
            "associativeList": {
                "type": "array",
                "items": {"$ref": "#/definitions/myElement"},
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"]
            },
            "myElement": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "value1": {"type": "number"},
                    "value2": {"type": "number"}
                }
            },
            "set": {
                "type": "array",
                "items": {"type": "number"},
                "x-kubernetes-list-type": "set"
            }
        }),
        "type",
    ))
}

fn name(n: &str) -> PathElement {
    key(json!({ "name": n }))
}

fn set_items(items: &[i64]) -> Vec<Path> {
    items.iter().map(|i| path!["set", val(*i)]).collect()
}

/// `list[name=b]` with its name and value1.
fn b_item() -> Vec<Path> {
    vec![
        path!["list", name("b")],
        path!["list", name("b"), "name"],
        path!["list", name("b"), "value1"],
    ]
}

fn with(mut paths: Vec<Path>, more: Vec<Path>) -> Vec<Path> {
    paths.extend(more);
    paths
}

#[test]
fn sets_ownership_duplicates() {
    // "sets/ownership/duplicates"
    let mut s = duplicates();
    s.update("updater-one", "v1", json!({"set": [1, 1, 3, 4]}));
    s.assert_managed(&[(
        "updater-one",
        "v1",
        with(vec![path!["set"]], set_items(&[1, 3, 4])),
    )]);
}

#[test]
fn sets_ownership_add_duplicate() {
    // "sets/ownership/add_duplicate"
    let mut s = duplicates();
    s.update("updater-one", "v1", json!({"set": [1, 3, 4]}));
    s.update("updater-two", "v1", json!({"set": [1, 1, 3, 4]}));
    s.assert_managed(&[
        (
            "updater-one",
            "v1",
            with(vec![path!["set"]], set_items(&[3, 4])),
        ),
        ("updater-two", "v1", set_items(&[1])),
    ]);
}

#[test]
fn sets_ownership_remove_duplicate() {
    // "sets/ownership/remove_duplicate"
    let mut s = duplicates();
    s.update("updater-one", "v1", json!({"set": [1, 1, 3, 4]}));
    s.update("updater-two", "v1", json!({"set": [1, 3, 4]}));
    s.assert_managed(&[
        (
            "updater-one",
            "v1",
            with(vec![path!["set"]], set_items(&[3, 4])),
        ),
        ("updater-two", "v1", set_items(&[1])),
    ]);
}

#[test]
fn sets_merging_remove_duplicate() {
    // "sets/merging/remove_duplicate"
    let mut s = duplicates();
    s.update("updater", "v1", json!({"set": [1, 1, 3, 4]}));
    s.apply_conflicts(
        "applier",
        "v1",
        json!({"set": [1]}),
        &[("updater", path!["set", val(1)])],
    );
    s.force_apply("applier", "v1", json!({"set": [1]}));
    s.assert_live("v1", json!({"set": [1, 3, 4]}));
    s.assert_managed(&[
        (
            "updater",
            "v1",
            with(vec![path!["set"]], set_items(&[3, 4])),
        ),
        ("applier", "v1", set_items(&[1])),
    ]);
}

#[test]
fn sets_merging_ignore_duplicate() {
    // "sets/merging/ignore_duplicate"
    let mut s = duplicates();
    s.update("updater", "v1", json!({"set": [1, 1, 3, 4]}));
    s.apply("applier", "v1", json!({"set": [5]}));
    s.assert_live("v1", json!({"set": [1, 1, 3, 4, 5]}));
    s.assert_managed(&[
        (
            "updater",
            "v1",
            with(vec![path!["set"]], set_items(&[1, 3, 4])),
        ),
        ("applier", "v1", set_items(&[5])),
    ]);
}

fn duplicated_a() -> serde_json::Value {
    json!({"list": [
        {"name": "a", "value1": 1},
        {"name": "a", "value1": 2},
        {"name": "b", "value1": 3}
    ]})
}

#[test]
fn list_ownership_duplicated_items() {
    // "list/ownership/duplicated_items": `name: a` is owned once.
    let mut s = duplicates();
    s.update("updater", "v1", duplicated_a());
    s.assert_managed(&[(
        "updater",
        "v1",
        with(vec![path!["list"], path!["list", name("a")]], b_item()),
    )]);
}

/// updater-two changes the duplicated `a` (`change_duplicated_items`,
/// `change_fields_duplicated_items`) or adds a second `a`
/// (`add_duplicated_items_different_field`): it owns `a` as a whole.
fn second_updater_owns_a(first: serde_json::Value, second: serde_json::Value) {
    let mut s = duplicates();
    s.update("updater-one", "v1", first);
    s.update("updater-two", "v1", second);
    s.assert_managed(&[
        ("updater-one", "v1", with(vec![path!["list"]], b_item())),
        ("updater-two", "v1", vec![path!["list", name("a")]]),
    ]);
}

#[test]
fn list_ownership_change_duplicated_items() {
    second_updater_owns_a(
        duplicated_a(),
        json!({"list": [
            {"name": "a", "value1": 1},
            {"name": "a", "value1": 3},
            {"name": "b", "value1": 3}
        ]}),
    );
}

#[test]
fn list_ownership_change_fields_duplicated_items() {
    second_updater_owns_a(
        duplicated_a(),
        json!({"list": [
            {"name": "a", "value1": 1},
            {"name": "a", "value1": 2, "value2": 3},
            {"name": "b", "value1": 3}
        ]}),
    );
}

#[test]
fn list_ownership_add_duplicated_items_different_field() {
    second_updater_owns_a(
        json!({"list": [{"name": "a", "value1": 1}, {"name": "b", "value1": 3}]}),
        json!({"list": [
            {"name": "a", "value1": 1},
            {"name": "a", "value2": 3},
            {"name": "b", "value1": 3}
        ]}),
    );
}

#[test]
fn list_ownership_add_unrelated_to_list_with_duplicates() {
    let mut s = duplicates();
    s.update(
        "updater-one",
        "v1",
        json!({"list": [{"name": "a", "value1": 1}, {"name": "a", "value1": 2}]}),
    );
    s.update("updater-two", "v1", duplicated_a());
    s.assert_managed(&[
        (
            "updater-one",
            "v1",
            vec![path!["list"], path!["list", name("a")]],
        ),
        ("updater-two", "v1", b_item()),
    ]);
}

#[test]
fn list_merge_unrelated_with_duplicated_items() {
    let mut s = duplicates();
    s.update("updater", "v1", duplicated_a());
    s.force_apply("applier", "v1", json!({"unrelated": 5}));
    let mut object = duplicated_a();
    object["unrelated"] = json!(5);
    s.assert_live("v1", object);
    s.assert_managed(&[
        (
            "updater",
            "v1",
            with(vec![path!["list"], path!["list", name("a")]], b_item()),
        ),
        ("applier", "v1", vec![path!["unrelated"]]),
    ]);
}

/// An applier applies `a` over the duplicated `a`: a conflict with the
/// updater on the item as a whole; forced, the applier's `a` replaces both.
fn applier_takes_duplicated_a(first_value: i64) {
    let mut s = duplicates();
    s.update("updater", "v1", duplicated_a());
    s.apply_conflicts(
        "applier",
        "v1",
        json!({"list": [{"name": "a", "value1": first_value}]}),
        &[("updater", path!["list", name("a")])],
    );
    s.force_apply(
        "applier",
        "v1",
        json!({"list": [{"name": "a", "value1": 3}]}),
    );
    s.assert_live(
        "v1",
        json!({"list": [{"name": "a", "value1": 3}, {"name": "b", "value1": 3}]}),
    );
    s.assert_managed(&[
        ("updater", "v1", with(vec![path!["list"]], b_item())),
        (
            "applier",
            "v1",
            vec![
                path!["list", name("a")],
                path!["list", name("a"), "name"],
                path!["list", name("a"), "value1"],
            ],
        ),
    ]);
}

#[test]
fn list_merge_change_duplicated_item() {
    applier_takes_duplicated_a(3);
}

#[test]
fn list_merge_unchanged_duplicated_item() {
    applier_takes_duplicated_a(2);
}

#[test]
fn list_merge_change_non_duplicated_item() {
    let mut s = duplicates();
    s.update("updater", "v1", duplicated_a());
    s.force_apply(
        "applier",
        "v1",
        json!({"list": [{"name": "b", "value1": 4}]}),
    );
    s.assert_live(
        "v1",
        json!({"list": [
            {"name": "a", "value1": 1},
            {"name": "a", "value1": 2},
            {"name": "b", "value1": 4}
        ]}),
    );
    s.assert_managed(&[
        (
            "updater",
            "v1",
            vec![
                path!["list"],
                path!["list", name("a")],
                path!["list", name("b")],
                path!["list", name("b"), "name"],
            ],
        ),
        ("applier", "v1", b_item()),
    ]);
}

#[test]
fn list_merge_apply_update_duplicates_apply_without() {
    let mut s = duplicates();
    s.apply(
        "applier",
        "v1",
        json!({"list": [{"name": "a", "value1": 1}, {"name": "b", "value1": 3}]}),
    );
    s.update("updater", "v1", duplicated_a());
    s.apply(
        "applier",
        "v1",
        json!({"list": [{"name": "b", "value1": 3}]}),
    );
    s.assert_live("v1", duplicated_a());
    s.assert_managed(&[
        ("applier", "v1", b_item()),
        ("updater", "v1", vec![path!["list", name("a")]]),
    ]);
}
