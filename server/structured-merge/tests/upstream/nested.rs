//! merge/nested_test.go, `TestUpdateNestedType`: lists of lists, lists of
//! maps, maps of lists, maps of maps, a recursive map and a struct.

use kapi_structured_merge::path::PathElement;
use serde_json::json;

use crate::fixture::{Parser, State, key, val};

/// `nestedTypeParser`. Upstream's maps of `elementRelationship:
/// associative` are granular maps.
pub fn nested_type() -> Parser {
    Parser::same(
        json!({
            "type": {
                "type": "object",
                "properties": {
                    "listOfLists": {"$ref": "#/definitions/listOfLists"},
                    "listOfMaps": {"$ref": "#/definitions/listOfMaps"},
                    "mapOfLists": {"$ref": "#/definitions/mapOfLists"},
                    "mapOfMaps": {"$ref": "#/definitions/mapOfMaps"},
                    "mapOfMapsRecursive": {"$ref": "#/definitions/mapOfMapsRecursive"},
                    "struct": {"$ref": "#/definitions/struct"}
                }
            },
            "struct": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "value": {"type": "number"}
                }
            },
            "listOfLists": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "value": {"$ref": "#/definitions/list"}
                    }
                },
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"]
            },
            "list": {
                "type": "array",
                "items": {"type": "string"},
                "x-kubernetes-list-type": "set"
            },
            "listOfMaps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "value": {"$ref": "#/definitions/map"}
                    }
                },
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"]
            },
            "map": {
                "type": "object",
                "additionalProperties": {"type": "string"}
            },
            "mapOfLists": {
                "type": "object",
                "additionalProperties": {"$ref": "#/definitions/list"}
            },
            "mapOfMaps": {
                "type": "object",
                "additionalProperties": {"$ref": "#/definitions/map"}
            },
            "mapOfMapsRecursive": {
                "type": "object",
                "additionalProperties": {"$ref": "#/definitions/mapOfMapsRecursive"}
            }
        }),
        "type",
    )
}

fn name(n: &str) -> PathElement {
    key(json!({ "name": n }))
}

#[test]
fn list_of_lists_change_value() {
    // "listOfLists_change_value"
    let mut s = State::new(nested_type());
    s.apply(
        "default",
        "v1",
        json!({"listOfLists": [{"name": "a", "value": ["b", "c"]}]}),
    );
    s.apply(
        "default",
        "v1",
        json!({"listOfLists": [{"name": "a", "value": ["a", "c"]}]}),
    );
    s.assert_live(
        "v1",
        json!({"listOfLists": [{"name": "a", "value": ["a", "c"]}]}),
    );
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["listOfLists", name("a")],
            path!["listOfLists", name("a"), "name"],
            path!["listOfLists", name("a"), "value", val("a")],
            path!["listOfLists", name("a"), "value", val("c")],
        ],
    )]);
}

#[test]
fn list_of_lists_change_key_and_value() {
    // "listOfLists_change_key_and_value"
    let mut s = State::new(nested_type());
    s.apply(
        "default",
        "v1",
        json!({"listOfLists": [{"name": "a", "value": ["b", "c"]}]}),
    );
    s.apply(
        "default",
        "v1",
        json!({"listOfLists": [{"name": "b", "value": ["a", "c"]}]}),
    );
    s.assert_live(
        "v1",
        json!({"listOfLists": [{"name": "b", "value": ["a", "c"]}]}),
    );
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["listOfLists", name("b")],
            path!["listOfLists", name("b"), "name"],
            path!["listOfLists", name("b"), "value", val("a")],
            path!["listOfLists", name("b"), "value", val("c")],
        ],
    )]);
}

#[test]
fn list_of_maps_change_value() {
    // "listOfMaps_change_value"
    let mut s = State::new(nested_type());
    s.apply(
        "default",
        "v1",
        json!({"listOfMaps": [{"name": "a", "value": {"b": "x", "c": "y"}}]}),
    );
    s.apply(
        "default",
        "v1",
        json!({"listOfMaps": [{"name": "a", "value": {"a": "x", "c": "z"}}]}),
    );
    s.assert_live(
        "v1",
        json!({"listOfMaps": [{"name": "a", "value": {"a": "x", "c": "z"}}]}),
    );
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["listOfMaps", name("a")],
            path!["listOfMaps", name("a"), "name"],
            path!["listOfMaps", name("a"), "value", "a"],
            path!["listOfMaps", name("a"), "value", "c"],
        ],
    )]);
}

#[test]
fn list_of_maps_change_key_and_value() {
    // "listOfMaps_change_key_and_value"
    let mut s = State::new(nested_type());
    s.apply(
        "default",
        "v1",
        json!({"listOfMaps": [{"name": "a", "value": {"b": "x", "c": "y"}}]}),
    );
    s.apply(
        "default",
        "v1",
        json!({"listOfMaps": [{"name": "b", "value": {"a": "x", "c": "z"}}]}),
    );
    s.assert_live(
        "v1",
        json!({"listOfMaps": [{"name": "b", "value": {"a": "x", "c": "z"}}]}),
    );
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["listOfMaps", name("b")],
            path!["listOfMaps", name("b"), "name"],
            path!["listOfMaps", name("b"), "value", "a"],
            path!["listOfMaps", name("b"), "value", "c"],
        ],
    )]);
}

#[test]
fn map_of_lists_change_value() {
    // "mapOfLists_change_value"
    let mut s = State::new(nested_type());
    s.apply("default", "v1", json!({"mapOfLists": {"a": ["b", "c"]}}));
    s.apply("default", "v1", json!({"mapOfLists": {"a": ["a", "c"]}}));
    s.assert_live("v1", json!({"mapOfLists": {"a": ["a", "c"]}}));
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["mapOfLists", "a"],
            path!["mapOfLists", "a", val("a")],
            path!["mapOfLists", "a", val("c")],
        ],
    )]);
}

#[test]
fn map_of_lists_change_key_and_value() {
    // "mapOfLists_change_key_and_value"
    let mut s = State::new(nested_type());
    s.apply("default", "v1", json!({"mapOfLists": {"a": ["b", "c"]}}));
    s.apply("default", "v1", json!({"mapOfLists": {"b": ["a", "c"]}}));
    s.assert_live("v1", json!({"mapOfLists": {"b": ["a", "c"]}}));
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["mapOfLists", "b"],
            path!["mapOfLists", "b", val("a")],
            path!["mapOfLists", "b", val("c")],
        ],
    )]);
}

#[test]
fn map_of_maps_change_value() {
    // "mapOfMaps_change_value"
    let mut s = State::new(nested_type());
    s.apply(
        "default",
        "v1",
        json!({"mapOfMaps": {"a": {"b": "x", "c": "y"}}}),
    );
    s.apply(
        "default",
        "v1",
        json!({"mapOfMaps": {"a": {"a": "x", "c": "z"}}}),
    );
    s.assert_live("v1", json!({"mapOfMaps": {"a": {"a": "x", "c": "z"}}}));
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["mapOfMaps", "a"],
            path!["mapOfMaps", "a", "a"],
            path!["mapOfMaps", "a", "c"],
        ],
    )]);
}

#[test]
fn map_of_maps_change_key_and_value() {
    // "mapOfMaps_change_key_and_value"
    let mut s = State::new(nested_type());
    s.apply(
        "default",
        "v1",
        json!({"mapOfMaps": {"a": {"b": "x", "c": "y"}}}),
    );
    s.apply(
        "default",
        "v1",
        json!({"mapOfMaps": {"b": {"a": "x", "c": "z"}}}),
    );
    s.assert_live("v1", json!({"mapOfMaps": {"b": {"a": "x", "c": "z"}}}));
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["mapOfMaps", "b"],
            path!["mapOfMaps", "b", "a"],
            path!["mapOfMaps", "b", "c"],
        ],
    )]);
}

#[test]
fn map_of_maps_recursive_change_middle_key() {
    // "mapOfMapsRecursive_change_middle_key"
    let mut s = State::new(nested_type());
    s.apply(
        "default",
        "v1",
        json!({"mapOfMapsRecursive": {"a": {"b": {"c": null}}}}),
    );
    s.apply(
        "default",
        "v1",
        json!({"mapOfMapsRecursive": {"a": {"d": {"c": null}}}}),
    );
    s.assert_live(
        "v1",
        json!({"mapOfMapsRecursive": {"a": {"d": {"c": null}}}}),
    );
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["mapOfMapsRecursive", "a"],
            path!["mapOfMapsRecursive", "a", "d"],
            path!["mapOfMapsRecursive", "a", "d", "c"],
        ],
    )]);
}

#[test]
fn struct_apply_remove_all() {
    let mut s = State::new(nested_type());
    s.apply(
        "default",
        "v1",
        json!({"struct": {"name": "a", "value": 1}}),
    );
    s.apply("default", "v1", json!(null));
    s.assert_live("v1", json!(null));
    s.assert_managed(&[]);
}

#[test]
fn struct_apply_remove_dangling() {
    let mut s = State::new(nested_type());
    s.apply("default", "v1", json!({"struct": {"name": "a"}}));
    s.apply("default", "v1", json!({"struct": null}));
    s.assert_live("v1", json!({"struct": null}));
    s.assert_managed(&[("default", "v1", vec![path!["struct"]])]);
}

/// An applier gives up `struct.name` (by `config`) after a controller
/// added `struct.value`: the controller's field stays.
fn struct_apply_update_then(config: serde_json::Value) {
    let mut s = State::new(nested_type());
    s.apply("default", "v1", json!({"struct": {"name": "a"}}));
    s.update(
        "controller",
        "v1",
        json!({"struct": {"name": "a", "value": 1}}),
    );
    s.apply("default", "v1", config);
    s.assert_live("v1", json!({"struct": {"value": 1}}));
}

#[test]
fn struct_apply_update_remove_all() {
    struct_apply_update_then(json!(null));
}

#[test]
fn struct_apply_update_dict_dangling() {
    struct_apply_update_then(json!({"struct": {}}));
}

#[test]
fn struct_apply_update_dict_null() {
    struct_apply_update_then(json!({"struct": null}));
}

#[test]
fn struct_apply_update_took_over() {
    let mut s = State::new(nested_type());
    s.apply("default", "v1", json!({"struct": {"name": "a"}}));
    s.update(
        "controller",
        "v1",
        json!({"struct": {"name": "b", "value": 1}}),
    );
    s.apply("default", "v1", json!({"struct": null}));
    s.assert_live("v1", json!({"struct": {"name": "b", "value": 1}}));
}
