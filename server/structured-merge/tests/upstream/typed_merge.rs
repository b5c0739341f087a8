//! typed/merge_test.go, `TestMerge`: a configuration merged into a live
//! value, triplet by triplet (live, configuration, result). Lists keep the
//! live order and place the configuration's items as upstream places them;
//! the live side may repeat set values and list keys.

use kapi_structured_merge::value::equals;
use serde_json::{Value, json};

use crate::fixture::Parser;

/// `__untyped_atomic_`: any value, replaced as a whole.
fn untyped_atomic() -> Value {
    json!({"x-kubernetes-map-type": "atomic"})
}

fn check(parser: &Parser, triplets: &[(&str, &str, &str)]) {
    for (i, (lhs, rhs, out)) in triplets.iter().enumerate() {
        let read = |text: &str| -> Value { serde_json::from_str(text).expect("JSON") };
        let lhs = parser.typed("v1", read(lhs));
        let rhs = parser.typed("v1", read(rhs));
        let want = read(out);
        assert!(
            rhs.validate().is_empty(),
            "triplet {i}: {:?}",
            rhs.validate()
        );
        let got = lhs
            .merge(&rhs)
            .unwrap_or_else(|e| panic!("triplet {i}: {e}"));
        assert!(
            equals(&got.value, &want),
            "triplet {i}: {} into {}\n got: {}\nwant: {want}",
            rhs.value,
            lhs.value,
            got.value
        );
    }
}

/// Upstream lists its first triplet twice; it is here once.
#[test]
fn simple_pair() {
    let parser = Parser::same(
        json!({"stringPair": {
            "type": "object",
            "properties": {"key": {"type": "string"}, "value": untyped_atomic()}
        }}),
        "stringPair",
    );
    check(
        &parser,
        &[
            (
                r#"{"key":"foo","value":{}}"#,
                r#"{"key":"foo","value":1}"#,
                r#"{"key":"foo","value":1}"#,
            ),
            (
                r#"{"key":"foo","value":1}"#,
                r#"{"key":"foo","value":{}}"#,
                r#"{"key":"foo","value":{}}"#,
            ),
            (
                r#"{"key":"foo","value":null}"#,
                r#"{"key":"foo","value":{}}"#,
                r#"{"key":"foo","value":{}}"#,
            ),
            (
                r#"{"key":"foo"}"#,
                r#"{"value":true}"#,
                r#"{"key":"foo","value":true}"#,
            ),
        ],
    );
}

/// The triplets of `null/empty map`, `null/empty struct` and `null/empty
/// list`: an empty or null configuration replaces the live value.
fn null_or_empty(inner: Value, empty: &str) {
    let parser = Parser::same(
        json!({"root": {"type": "object", "properties": {"inner": inner}}}),
        "root",
    );
    let with = |v: &str| format!(r#"{{"inner":{v}}}"#);
    let (e, n) = (with(empty), with("null"));
    check(
        &parser,
        &[
            ("{}", &e, &e),
            ("{}", &n, &n),
            (&n, &e, &e),
            (&e, &n, &n),
            (&e, &e, &e),
        ],
    );
}

#[test]
fn null_empty_map() {
    null_or_empty(
        json!({"type": "object", "additionalProperties": untyped_atomic()}),
        "{}",
    );
}

#[test]
fn null_empty_struct() {
    null_or_empty(
        json!({"type": "object", "properties": {"value": untyped_atomic()}}),
        "{}",
    );
}

#[test]
fn null_empty_list() {
    null_or_empty(
        json!({"type": "array", "items": untyped_atomic(), "x-kubernetes-list-type": "atomic"}),
        "[]",
    );
}

#[test]
fn struct_grab_bag() {
    let set_of =
        |t: &str| json!({"type": "array", "items": {"type": t}, "x-kubernetes-list-type": "set"});
    let parser = Parser::same(
        json!({"myStruct": {
            "type": "object",
            "properties": {
                "numeric": {"type": "number"},
                "string": {"type": "string"},
                "bool": {"type": "boolean"},
                "setStr": set_of("string"),
                "setBool": set_of("boolean"),
                "setNumeric": set_of("number")
            }
        }}),
        "myStruct",
    );
    check(
        &parser,
        &[
            (
                r#"{"numeric":1}"#,
                r#"{"numeric":3.14159}"#,
                r#"{"numeric":3.14159}"#,
            ),
            (
                r#"{"numeric":3.14159}"#,
                r#"{"numeric":1}"#,
                r#"{"numeric":1}"#,
            ),
            (
                r#"{"string":"aoeu"}"#,
                r#"{"bool":true}"#,
                r#"{"string":"aoeu","bool":true}"#,
            ),
            (
                r#"{"setStr":["a","b","c"]}"#,
                r#"{"setStr":["a","b"]}"#,
                r#"{"setStr":["a","b","c"]}"#,
            ),
            (
                r#"{"setStr":["a","b"]}"#,
                r#"{"setStr":["a","b","c"]}"#,
                r#"{"setStr":["a","b","c"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c"]}"#,
                r#"{"setStr":[]}"#,
                r#"{"setStr":["a","b","c"]}"#,
            ),
            (
                r#"{"setStr":[]}"#,
                r#"{"setStr":["a","b","c"]}"#,
                r#"{"setStr":["a","b","c"]}"#,
            ),
            (
                r#"{"setStr":["a","b"]}"#,
                r#"{"setStr":["b","a"]}"#,
                r#"{"setStr":["b","a"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c"]}"#,
                r#"{"setStr":["d","e","f"]}"#,
                r#"{"setStr":["a","b","c","d","e","f"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c"]}"#,
                r#"{"setStr":["c","d","e","f"]}"#,
                r#"{"setStr":["a","b","c","d","e","f"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c","g","f"]}"#,
                r#"{"setStr":["c","d","e","f"]}"#,
                r#"{"setStr":["a","b","c","g","d","e","f"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c"]}"#,
                r#"{"setStr":["d","e","f","x","y","z"]}"#,
                r#"{"setStr":["a","b","c","d","e","f","x","y","z"]}"#,
            ),
            (
                r#"{"setStr":["c","d","e","f"]}"#,
                r#"{"setStr":["a","c","e"]}"#,
                r#"{"setStr":["a","c","d","e","f"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c","x","y","z"]}"#,
                r#"{"setStr":["d","e","f"]}"#,
                r#"{"setStr":["a","b","c","x","y","z","d","e","f"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c","x","y","z"]}"#,
                r#"{"setStr":["d","e","f","x","y","z"]}"#,
                r#"{"setStr":["a","b","c","d","e","f","x","y","z"]}"#,
            ),
            (
                r#"{"setStr":["c","a","g","f"]}"#,
                r#"{"setStr":["c","f","a","g"]}"#,
                r#"{"setStr":["c","f","a","g"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c","d"]}"#,
                r#"{"setStr":["d","e","f","a"]}"#,
                r#"{"setStr":["b","c","d","e","f","a"]}"#,
            ),
            (
                r#"{"setStr":["c","d","e","f","g","h","i","j"]}"#,
                r#"{"setStr":["2","h","3","e","4","k","l"]}"#,
                r#"{"setStr":["c","d","f","g","2","h","i","j","3","e","4","k","l"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c","d","e","f","g","h","i","j"]}"#,
                r#"{"setStr":["1","b","2","h","3","e","4","k","l"]}"#,
                r#"{"setStr":["a","1","b","c","d","f","g","2","h","i","j","3","e","4","k","l"]}"#,
            ),
            // Duplicates on the live side.
            (
                r#"{"setStr":["a","b","b"]}"#,
                r#"{"setStr":["c"]}"#,
                r#"{"setStr":["a","b","b","c"]}"#,
            ),
            (
                r#"{"setStr":["a","b","b"]}"#,
                r#"{"setStr":["b"]}"#,
                r#"{"setStr":["a","b"]}"#,
            ),
            (
                r#"{"setStr":["a","b","b"]}"#,
                r#"{"setStr":["a"]}"#,
                r#"{"setStr":["a","b","b"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c","d","e","c"]}"#,
                r#"{"setStr":["1","b","2","e","d"]}"#,
                r#"{"setStr":["a","1","b","c","2","e","c","d"]}"#,
            ),
            (
                r#"{"setStr":["a","b","c","d","e","c"]}"#,
                r#"{"setStr":["1","b","2","c","e","d"]}"#,
                r#"{"setStr":["a","1","b","2","c","e","d"]}"#,
            ),
            (
                r#"{"setStr":["a","a","b","b"]}"#,
                r#"{"setStr":["b","c","d"]}"#,
                r#"{"setStr":["a","a","b","c","d"]}"#,
            ),
            (
                r#"{"setStr":["a","a","b","b"]}"#,
                r#"{"setStr":[]}"#,
                r#"{"setStr":["a","a","b","b"]}"#,
            ),
            (
                r#"{"setBool":[true]}"#,
                r#"{"setBool":[false]}"#,
                r#"{"setBool":[true, false]}"#,
            ),
            (
                r#"{"setNumeric":[1,2,3.14159]}"#,
                r#"{"setNumeric":[1,2,3]}"#,
                r#"{"setNumeric":[1,2,3.14159,3]}"#,
            ),
            (
                r#"{"setStr":["c","a","g","f","c","a"]}"#,
                r#"{"setStr":["c","f","a","g"]}"#,
                r#"{"setStr":["c","f","a","g"]}"#,
            ),
            (
                r#"{"setNumeric":[1,2,3.14159,1,2]}"#,
                r#"{"setNumeric":[1,2,3]}"#,
                r#"{"setNumeric":[1,2,3.14159,3]}"#,
            ),
            (
                r#"{"setBool":[true,false,true]}"#,
                r#"{"setBool":[false]}"#,
                r#"{"setBool":[true,false,true]}"#,
            ),
            (
                r#"{"setBool":[true,false,true]}"#,
                r#"{"setBool":[true]}"#,
                r#"{"setBool":[true, false]}"#,
            ),
        ],
    );
}

#[test]
fn associative_list() {
    let parser = Parser::same(
        json!({
            "myRoot": {
                "type": "object",
                "properties": {
                    "list": {"$ref": "#/definitions/myList"},
                    "atomicList": {"$ref": "#/definitions/mySequence"}
                }
            },
            "myList": {
                "type": "array",
                "items": {"$ref": "#/definitions/myElement"},
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["key", "id"]
            },
            "mySequence": {
                "type": "array",
                "items": {"type": "string"},
                "x-kubernetes-list-type": "atomic"
            },
            "myElement": {
                "type": "object",
                "properties": {
                    "key": {"type": "string"},
                    "id": {"type": "number"},
                    "value": {"$ref": "#/definitions/myValue"},
                    "bv": {"type": "boolean"},
                    "nv": {"type": "number"}
                }
            },
            "myValue": {"type": "object", "additionalProperties": {"type": "string"}}
        }),
        "myRoot",
    );
    check(
        &parser,
        &[
            (
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
                r#"{"list":[{"key":"a","id":2,"value":{"a":"a"}}]}"#,
                r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}},{"key":"a","id":2,"value":{"a":"a"}}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":1}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"a","id":2}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":1},{"key":"a","id":2}]}"#,
            ),
            (
                r#"{"list":[{"key":"b","id":2}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
                r#"{"list":[{"key":"c","id":3},{"key":"b","id":2}]}"#,
                r#"{"list":[{"key":"a","id":1},{"key":"c","id":3},{"key":"b","id":2}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
                r#"{"list":[{"key":"c","id":3},{"key":"a","id":1}]}"#,
                r#"{"list":[{"key":"b","id":2},{"key":"c","id":3},{"key":"a","id":1}]}"#,
            ),
            (
                r#"{"atomicList":["a","a","a"]}"#,
                r#"{"atomicList":null}"#,
                r#"{"atomicList":null}"#,
            ),
            (
                r#"{"atomicList":["a","b","c"]}"#,
                r#"{"atomicList":[]}"#,
                r#"{"atomicList":[]}"#,
            ),
            (
                r#"{"atomicList":["a","a","a"]}"#,
                r#"{"atomicList":["a","a"]}"#,
                r#"{"atomicList":["a","a"]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1,"bv":true},{"key":"b","id":2},{"key":"a","id":1,"bv":false,"nv":2}]}"#,
                r#"{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}"#,
                r#"{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
                r#"{"list":[]}"#,
                r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
            ),
            (
                r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
                "{}",
                r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
            ),
        ],
    );
}
