//! merge/key_test.go, `TestUpdateAssociativeLists`: a list of type map
//! keyed by `name`.

use serde_json::json;

use crate::fixture::{Parser, State, key};

/// `associativeListParser`.
pub fn associative_list() -> Parser {
    Parser::same(
        json!({
            "type": {
                "type": "object",
                "properties": {"list": {"$ref": "#/definitions/associativeList"}}
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
                    "value": {"type": "number"}
                }
            }
        }),
        "type",
    )
}

#[test]
fn removing_obsolete_applied_structs() {
    let mut s = State::new(associative_list());
    s.apply(
        "default",
        "v1",
        json!({"list": [{"name": "a", "value": 1}]}),
    );
    s.apply(
        "default",
        "v1",
        json!({"list": [{"name": "b", "value": 2}]}),
    );
    s.assert_live("v1", json!({"list": [{"name": "b", "value": 2}]}));
    let b = || key(json!({"name": "b"}));
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["list", b()],
            path!["list", b(), "name"],
            path!["list", b(), "value"],
        ],
    )]);
}
