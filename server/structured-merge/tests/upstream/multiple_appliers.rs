//! merge/multiple_appliers_test.go, the cases in one schema per test whose
//! versions only relabel: `TestMultipleAppliersSet`,
//! `TestMultipleAppliersNestedType`, `TestMultipleAppliersDeducedType` and
//! `TestMultipleApplierAtomicMaps`. The cases that convert between versions
//! are in `multiple_appliers_versions`.

use kapi_structured_merge::path::PathElement;
use serde_json::json;

use crate::fixture::{Parser, State, key, val};
use crate::key::associative_list;
use crate::nested::nested_type;

fn name(n: &str) -> PathElement {
    key(json!({ "name": n }))
}

// TestMultipleAppliersSet

#[test]
fn remove_one() {
    let mut s = State::new(associative_list());
    s.apply(
        "apply-one",
        "v1",
        json!({"list": [{"name": "a"}, {"name": "b"}]}),
    );
    s.apply("apply-two", "v2", json!({"list": [{"name": "c"}]}));
    s.apply("apply-one", "v3", json!({"list": [{"name": "a"}]}));
    s.assert_live("v1", json!({"list": [{"name": "a"}, {"name": "c"}]}));
    s.assert_managed(&[
        (
            "apply-one",
            "v3",
            vec![path!["list", name("a")], path!["list", name("a"), "name"]],
        ),
        (
            "apply-two",
            "v2",
            vec![path!["list", name("c")], path!["list", name("c"), "name"]],
        ),
    ]);
}

#[test]
fn same_value_no_conflict() {
    let mut s = State::new(associative_list());
    s.apply(
        "apply-one",
        "v1",
        json!({"list": [{"name": "a", "value": 0}]}),
    );
    s.apply(
        "apply-two",
        "v2",
        json!({"list": [{"name": "a", "value": 0}]}),
    );
    s.assert_live("v1", json!({"list": [{"name": "a", "value": 0}]}));
    let owned = || {
        vec![
            path!["list", name("a")],
            path!["list", name("a"), "name"],
            path!["list", name("a"), "value"],
        ]
    };
    s.assert_managed(&[("apply-one", "v1", owned()), ("apply-two", "v2", owned())]);
}

#[test]
fn change_value_yes_conflict() {
    let mut s = State::new(associative_list());
    s.apply(
        "apply-one",
        "v1",
        json!({"list": [{"name": "a", "value": 0}]}),
    );
    s.apply_conflicts(
        "apply-two",
        "v2",
        json!({"list": [{"name": "a", "value": 1}]}),
        &[("apply-one", path!["list", name("a"), "value"])],
    );
    s.assert_live("v1", json!({"list": [{"name": "a", "value": 0}]}));
    s.assert_managed(&[(
        "apply-one",
        "v1",
        vec![
            path!["list", name("a")],
            path!["list", name("a"), "name"],
            path!["list", name("a"), "value"],
        ],
    )]);
}

#[test]
fn remove_one_keep_one() {
    let mut s = State::new(associative_list());
    s.apply(
        "apply-one",
        "v1",
        json!({"list": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}),
    );
    s.apply(
        "apply-two",
        "v2",
        json!({"list": [{"name": "c"}, {"name": "d"}]}),
    );
    s.apply("apply-one", "v3", json!({"list": [{"name": "a"}]}));
    s.assert_live(
        "v1",
        json!({"list": [{"name": "a"}, {"name": "c"}, {"name": "d"}]}),
    );
    s.assert_managed(&[
        (
            "apply-one",
            "v3",
            vec![path!["list", name("a")], path!["list", name("a"), "name"]],
        ),
        (
            "apply-two",
            "v2",
            vec![
                path!["list", name("c")],
                path!["list", name("d")],
                path!["list", name("c"), "name"],
                path!["list", name("d"), "name"],
            ],
        ),
    ]);
}

// TestMultipleAppliersNestedType

/// apply-one applies a and b (b with value c), apply-two applies b with
/// value d, then apply-one keeps only a: b stays with apply-two's d.
#[test]
fn remove_one_keep_one_with_two_sub_items() {
    let mut s = State::new(nested_type());
    s.apply(
        "apply-one",
        "v1",
        json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c"]}]}),
    );
    s.apply(
        "apply-two",
        "v2",
        json!({"listOfLists": [{"name": "b", "value": ["d"]}]}),
    );
    s.apply("apply-one", "v3", json!({"listOfLists": [{"name": "a"}]}));
    s.assert_live(
        "v1",
        json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["d"]}]}),
    );
    s.assert_managed(&[
        (
            "apply-one",
            "v3",
            vec![
                path!["listOfLists", name("a")],
                path!["listOfLists", name("a"), "name"],
            ],
        ),
        (
            "apply-two",
            "v2",
            vec![
                path!["listOfLists", name("b")],
                path!["listOfLists", name("b"), "name"],
                path!["listOfLists", name("b"), "value", val("d")],
            ],
        ),
    ]);
}

#[test]
fn remove_one_keep_one_with_dangling_subitem() {
    let mut s = State::new(nested_type());
    s.apply(
        "apply-one",
        "v1",
        json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c"]}]}),
    );
    s.apply(
        "apply-two",
        "v2",
        json!({"listOfLists": [{"name": "b", "value": ["d"]}]}),
    );
    s.update(
        "controller",
        "v2",
        json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c", "d", "e"]}]}),
    );
    s.apply("apply-one", "v3", json!({"listOfLists": [{"name": "a"}]}));
    s.assert_live(
        "v1",
        json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["d", "e"]}]}),
    );
    s.assert_managed(&[
        (
            "apply-one",
            "v3",
            vec![
                path!["listOfLists", name("a")],
                path!["listOfLists", name("a"), "name"],
            ],
        ),
        (
            "apply-two",
            "v2",
            vec![
                path!["listOfLists", name("b")],
                path!["listOfLists", name("b"), "name"],
                path!["listOfLists", name("b"), "value", val("d")],
            ],
        ),
        (
            "controller",
            "v2",
            vec![path!["listOfLists", name("b"), "value", val("e")]],
        ),
    ]);
}

/// Upstream has this case twice, as `remove_one_with_dangling_subitem_keep_one`
/// and `remove_one_with_managed_subitem_keep_one`, with the same steps.
fn remove_one_with_subitem_keep_one() {
    let mut s = State::new(nested_type());
    s.apply(
        "apply-one",
        "v1",
        json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c"]}]}),
    );
    s.apply(
        "apply-two",
        "v2",
        json!({"listOfLists": [{"name": "a", "value": ["b"]}]}),
    );
    s.update(
        "controller",
        "v2",
        json!({"listOfLists": [
            {"name": "a", "value": ["b"]},
            {"name": "b", "value": ["c", "d"]}
        ]}),
    );
    s.apply("apply-one", "v3", json!({"listOfLists": [{"name": "a"}]}));
    s.assert_live(
        "v1",
        json!({"listOfLists": [{"name": "a", "value": ["b"]}]}),
    );
    s.assert_managed(&[
        (
            "apply-one",
            "v3",
            vec![
                path!["listOfLists", name("a")],
                path!["listOfLists", name("a"), "name"],
            ],
        ),
        (
            "apply-two",
            "v2",
            vec![
                path!["listOfLists", name("a")],
                path!["listOfLists", name("a"), "name"],
                path!["listOfLists", name("a"), "value", val("b")],
            ],
        ),
    ]);
}

#[test]
fn remove_one_with_dangling_subitem_keep_one() {
    remove_one_with_subitem_keep_one();
}

#[test]
fn remove_one_with_managed_subitem_keep_one() {
    remove_one_with_subitem_keep_one();
}

#[test]
fn remove_one_keep_one_with_sub_item() {
    let mut s = State::new(nested_type());
    s.apply(
        "apply-one",
        "v1",
        json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c"]}]}),
    );
    s.apply(
        "apply-two",
        "v2",
        json!({"listOfLists": [{"name": "b", "value": ["d"]}]}),
    );
    s.apply("apply-one", "v3", json!({"listOfLists": [{"name": "a"}]}));
    s.assert_live(
        "v1",
        json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["d"]}]}),
    );
    s.assert_managed(&[
        (
            "apply-one",
            "v3",
            vec![
                path!["listOfLists", name("a")],
                path!["listOfLists", name("a"), "name"],
            ],
        ),
        (
            "apply-two",
            "v2",
            vec![
                path!["listOfLists", name("b")],
                path!["listOfLists", name("b"), "name"],
                path!["listOfLists", name("b"), "value", val("d")],
            ],
        ),
    ]);
}

/// Two appliers and two controllers on a recursive map; the first applier
/// gives up everything but the (null) map itself. Upstream runs it on the
/// recursive map of `nestedTypeParser` and, without the `mapOfMapsRecursive`
/// level, on a deduced schema (`multiple_appliers_recursive_map_deduced`).
fn recursive_map_case(s: &mut State, wrap: fn(serde_json::Value) -> serde_json::Value) {
    s.apply(
        "apply-one",
        "v1",
        wrap(json!({"a": {"b": null}, "c": {"d": null}})),
    );
    s.apply(
        "apply-two",
        "v2",
        wrap(json!({"a": null, "c": {"d": null}})),
    );
    s.update(
        "controller-one",
        "v3",
        wrap(json!({"a": {"b": {"c": null}}, "c": {"d": {"e": null}}})),
    );
    s.update(
        "controller-two",
        "v2",
        wrap(json!({"a": {"b": {"c": {"d": null}}}, "c": {"d": {"e": {"f": null}}}})),
    );
    s.update(
        "controller-one",
        "v3",
        wrap(json!({
            "a": {"b": {"c": {"d": {"e": null}}}},
            "c": {"d": {"e": {"f": {"g": null}}}}
        })),
    );
}

#[test]
fn multiple_appliers_recursive_map() {
    let mut s = State::new(nested_type());
    let wrap = |v| json!({ "mapOfMapsRecursive": v });
    recursive_map_case(&mut s, wrap);
    s.apply("apply-one", "v4", json!({"mapOfMapsRecursive": null}));
    s.assert_live(
        "v1",
        wrap(json!({"a": null, "c": {"d": {"e": {"f": {"g": null}}}}})),
    );
    let m = "mapOfMapsRecursive";
    s.assert_managed(&[
        ("apply-one", "v4", vec![path![m]]),
        (
            "apply-two",
            "v2",
            vec![path![m, "a"], path![m, "c"], path![m, "c", "d"]],
        ),
        (
            "controller-one",
            "v3",
            vec![path![m, "c", "d", "e"], path![m, "c", "d", "e", "f", "g"]],
        ),
        ("controller-two", "v2", vec![path![m, "c", "d", "e", "f"]]),
    ]);
}

// TestMultipleAppliersDeducedType

#[test]
fn multiple_appliers_recursive_map_deduced() {
    let mut s = State::new(Parser::deduced());
    recursive_map_case(&mut s, |v| v);
    s.apply("apply-one", "v4", json!(null));
    s.assert_live(
        "v1",
        json!({"a": null, "c": {"d": {"e": {"f": {"g": null}}}}}),
    );
    s.assert_managed(&[
        (
            "apply-two",
            "v2",
            vec![path!["a"], path!["c"], path!["c", "d"]],
        ),
        (
            "controller-one",
            "v3",
            vec![path!["c", "d", "e"], path!["c", "d", "e", "f", "g"]],
        ),
        ("controller-two", "v2", vec![path!["c", "d", "e", "f"]]),
    ]);
}

// TestMultipleApplierAtomicMaps

/// `atomicMapParser`.
fn atomic_map() -> Parser {
    Parser::by_version(json!({
        "v1": {
            "type": "object",
            "properties": {"atomicMap": {"$ref": "#/definitions/atomicMap"}}
        },
        "atomicMap": {
            "type": "object",
            "properties": {
                "field1": {"type": "string"},
                "field2": {"type": "string"}
            },
            "x-kubernetes-map-type": "atomic"
        }
    }))
}

#[test]
fn force() {
    let mut s = State::new(atomic_map());
    s.apply("apply-one", "v1", json!({"atomicMap": {"field1": "a"}}));
    s.apply_conflicts(
        "apply-two",
        "v1",
        json!({"atomicMap": {"field2": "b"}}),
        &[("apply-one", path!["atomicMap"])],
    );
    s.force_apply("apply-two", "v1", json!({"atomicMap": {"field2": "b"}}));
    s.assert_live("v1", json!({"atomicMap": {"field2": "b"}}));
    s.assert_managed(&[("apply-two", "v1", vec![path!["atomicMap"]])]);
}
