//! merge/field_level_overrides_test.go, `TestFieldLevelOverrides`: a field
//! that refers to a map type may override the map's relationship
//! (`x-kubernetes-map-type` beside the `$ref`). Upstream's list override at
//! a reference (`test_override_associative_list_with_atomic`) has no
//! OpenAPI spelling that schemaconv reads, so it is not re-expressed; its
//! inline list (`separableInlineList`) is a plain set.

use serde_json::json;

use crate::fixture::{Parser, State, val};

fn overrides() -> State {
    State::new(Parser::same(
        json!({
            "type": {
                "type": "object",
                "properties": {
                    "separableInlineList": {
                        "type": "array",
                        "items": {"type": "number"},
                        "x-kubernetes-list-type": "set"
                    },
                    "separableMapReference": {
                        "$ref": "#/definitions/atomicMap",
                        "x-kubernetes-map-type": "granular"
                    },
                    "atomicMapReference": {
                        "$ref": "#/definitions/unspecifiedMap",
                        "x-kubernetes-map-type": "atomic"
                    }
                }
            },
            "unspecifiedMap": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "value": {"type": "number"}
                }
            },
            "atomicMap": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "value": {"type": "number"}
                },
                "x-kubernetes-map-type": "atomic"
            }
        }),
        "type",
    ))
}

#[test]
fn test_override_atomic_map_with_separable() {
    let mut s = overrides();
    s.apply(
        "apply_one",
        "v1",
        json!({"separableMapReference": {"name": "a"}}),
    );
    s.apply(
        "apply_two",
        "v1",
        json!({"separableMapReference": {"value": 2}}),
    );
    s.assert_live(
        "v1",
        json!({"separableMapReference": {"name": "a", "value": 2}}),
    );
    s.assert_managed(&[
        (
            "apply_one",
            "v1",
            vec![path!["separableMapReference", "name"]],
        ),
        (
            "apply_two",
            "v1",
            vec![path!["separableMapReference", "value"]],
        ),
    ]);
}

#[test]
fn test_override_unspecified_map_with_atomic() {
    let mut s = overrides();
    s.apply(
        "apply_one",
        "v1",
        json!({"atomicMapReference": {"name": "a"}}),
    );
    s.apply_conflicts(
        "apply_two",
        "v1",
        json!({"atomicMapReference": {"value": 2}}),
        &[("apply_one", path!["atomicMapReference"])],
    );
    s.apply(
        "apply_one",
        "v1",
        json!({"atomicMapReference": {"name": "b", "value": 2}}),
    );
    s.assert_live(
        "v1",
        json!({"atomicMapReference": {"name": "b", "value": 2}}),
    );
    s.assert_managed(&[("apply_one", "v1", vec![path!["atomicMapReference"]])]);
}

#[test]
fn test_override_inline_atomic_list_with_associative() {
    let mut s = overrides();
    s.apply("apply_one", "v1", json!({"separableInlineList": [1]}));
    s.apply("apply_two", "v1", json!({"separableInlineList": [2]}));
    s.assert_live("v1", json!({"separableInlineList": [1, 2]}));
    s.assert_managed(&[
        (
            "apply_one",
            "v1",
            vec![path!["separableInlineList", val(1)]],
        ),
        (
            "apply_two",
            "v1",
            vec![path!["separableInlineList", val(2)]],
        ),
    ]);
}
