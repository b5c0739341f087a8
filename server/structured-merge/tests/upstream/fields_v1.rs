//! fieldpath/serialize_test.go: the FieldsV1 text of sets, byte for byte
//! (`TestSerializeV1GoldenData`, `TestDeserializeForValidNonNormalized`,
//! `TestDropUnknown`, `TestSetFromJSONTokenTypeErrors`, `TestSetFromJSON`),
//! and the text of numbers in keys and set members as upstream writes
//! them (jsoniter, compatible with encoding/json: a float64 without a
//! fraction is written as an integer).

use kapi_structured_merge::set::Set;
use serde_json::json;

use crate::fixture::{key, set, val};

fn round_trip(text: &str) -> String {
    Set::from_fields_v1(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .to_fields_v1()
}

#[test]
fn serialize_v1_golden_data() {
    let examples = [
        r#"{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\"name\":\"first\"}":{},"k:{\"name\":\"second\"}":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\"aa\"":{},"v:\"ab\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}"#,
        r#"{"f:aaa":{"k:{\"name\":\"second\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},"f:aab":{"f:aaa":{},"f:aaf":{"k:{\"port\":443,\"protocol\":\"udp\"}":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},"k:{\"name\":\"first\"}":{}},"f:aac":{"f:aaa":{"v:1":{}},"f:aac":{},"v:3":{"k:{\"name\":\"second\"}":{}}},"f:aad":{"f:aac":{"v:1":{}},"f:aaf":{"k:{\"name\":\"first\"}":{"k:{\"name\":\"first\"}":{}}},"i:1":{"i:1":{},"i:3":{"v:true":{}}}},"f:aae":{"f:aae":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:4":{"f:aaf":{}}},"f:aaf":{"i:1":{"f:aac":{}},"i:2":{},"i:3":{}},"k:{\"name\":\"first\"}":{"f:aad":{"f:aaf":{}}},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"f:aaa":{"f:aad":{}}},"k:{\"port\":443,\"protocol\":\"udp\"}":{"f:aac":{},"k:{\"name\":\"first\"}":{"i:3":{}},"k:{\"port\":443,\"protocol\":\"udp\"}":{"i:4":{}}},"v:1":{"f:aac":{"i:4":{}},"f:aaf":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{}},"v:2":{"f:aad":{"f:aaf":{}},"i:1":{}},"v:3":{"f:aaa":{},"k:{\"name\":\"first\"}":{},"i:2":{}},"v:\"aa\"":{"f:aab":{"f:aaf":{}},"f:aae":{},"k:{\"name\":\"first\"}":{"f:aad":{}},"i:2":{}},"v:\"ab\"":{"f:aaf":{"i:4":{}},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:1":{"f:aae":{"i:4":{}}}},"v:true":{"k:{\"name\":\"second\"}":{"f:aaa":{}},"i:2":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},"i:1":{"i:3":{"f:aaf":{}}},"i:2":{"f:aae":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"v:1":{}}},"i:3":{"f:aab":{"v:true":{"v:\"aa\"":{}}},"f:aaf":{},"i:1":{}},"i:4":{"v:\"aa\"":{"f:aab":{"k:{\"name\":\"second\"}":{}}}}}"#,
        r#"{"f:spec":{".":{},"f:apps":{".":{},"k:{\"name\":\" app-💻\"}":{".":{},"f:container":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"name\":\"port 🔑\"}":{".":{},"f:containerPort":{},"f:name":{}}}},"f:name":{}},"k:{\"name\":\" app-🚀\"}":{".":{},"f:container":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"name\":\"port-✅ \"}":{".":{},"f:containerPort":{},"f:name":{}}}},"f:name":{}}}}}"#,
    ];
    for example in examples {
        assert_eq!(round_trip(example), example);
    }
}

/// Keys in any order, spaces inside keys' JSON: the same set, written in
/// order (the first of upstream's two cases).
#[test]
fn deserialize_for_valid_non_normalized() {
    let non_normalized = r#"{
  "f:aad": {},
  "f:aaa": {},
  "f:aab": {},
  "f:aac": {},
  "f:aae": {},
  "f:aaf": {},


  "k:{\"name\":\"first\"}": {},
  "k:{\"name\":\"second\"}": {},
  "k:{\"port\":443,\"protocol\":\"tcp\"}": {},
  "k:{ \"protocol\":\"udp\",\"port\":443}": {},
  "v:1": {},

  "v:2": {},
  "v: 3": {},
  "v:\"aa\"": {},

  "v:\"ab\"": {},
  "v:true": {},
  "i:1": {},
  	"i:2": {},
  "i:3": {}  ,
  "i:4":    {}
}"#;
    let normalized = r#"{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\"name\":\"first\"}":{},"k:{\"name\":\"second\"}":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\"aa\"":{},"v:\"ab\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}"#;
    assert_eq!(round_trip(non_normalized), normalized);
    assert_eq!(
        Set::from_fields_v1(non_normalized).ok(),
        Set::from_fields_v1(normalized).ok()
    );
}

#[test]
fn drop_unknown() {
    assert_eq!(round_trip(r#"{"f:aaa":{},"r:aab":{}}"#), r#"{"f:aaa":{}}"#);
}

/// Upstream added these refusals in 2026 (v6, after the v4 line); serde's
/// reader refuses them all the same.
#[test]
fn set_from_json_token_type_errors() {
    let inputs = [
        "[]",
        "42",
        r#""hi""#,
        "",
        "   ",
        "{1:{}}",
        r#"{"f:a":{},}"#,
        r#"{"f:a" }:{}}"#,
        r#"{"f:a":}"#,
        r#"{"f:a":1}"#,
        r#"{"f:a":[]}"#,
        r#"{"f:a":[}"#,
        r#"{"f:a":{]}"#,
        r#"{"f:a":{},,"f:b":{}}"#,
        r#"{"f:a":{} "f:b":{}}"#,
        r#"{"f:a"::{}}"#,
        "{:1}",
        r#"{"f:a"}"#,
        r#"{"f:a":{,}}"#,
        "}",
        r#"{"":{}}"#,
        r#"{"x":{}}"#,
        r#"{":":{}}"#,
        "{",
        r#"{"f:a":{}"#,
        r#"{"f:a":{},"#,
        r#"{""#,
        r#"{"f"#,
        r#"{"f:"#,
        r#"{"f:a"#,
        r#"{"f:a""#,
        r#"{"f:a":"#,
        r#"{"f:a":{"#,
        r#"{"f:a":{"f:b""#,
        r#"{"f:a":{"f:b":"#,
        r#"{"f:a":{"f:b":{}"#,
        r#"{"f:a":{"f:b":{},"#,
        r#"{"f:a\"#,
        r#"{"f:\u00"#,
        r#"{"f:a":{}, "f"#,
        r#"{"f:a":{}, "f:b"#,
        r#"{"f:a":{}}}"#,
        r#"{"f:a":{}}{}"#,
        r#"{"f:a":{}}"string""#,
        r#"{"f:a":{}}42"#,
        r#"{"f:a":{}}  }"#,
        r#"{"f:a":{}}  {}"#,
        r#"{"f:a":{}}  "x""#,
        "{\"f:a\":{}}\n42",
    ];
    for input in inputs {
        assert!(Set::from_fields_v1(input).is_err(), "{input:?} was read");
    }
}

#[test]
fn set_from_json() {
    let inputs = [
        r#"{"f:a":{}} "#,
        "{\"f:a\":{}}\t",
        "{\"f:a\":{}}\n",
        "{\"f:a\":{}}\r",
        r#"{"f:a":{}}     "#,
        "{\"f:a\":{}} \t\n\r ",
        r#" {"f:a":{}}"#,
        "\t{\"f:a\":{}}",
        "\n{\"f:a\":{}}",
        "\r{\"f:a\":{}}",
        r#"     {"f:a":{}}"#,
        " \t\n\r {\"f:a\":{}}",
        " \t\n\r {\"f:a\":{}} \t\n\r ",
        "  {}  ",
        "{ \"f:a\" : {} }",
        "{\n\t\"f:a\":{}}",
        r#"{"f:a":     {}}"#,
        "null",
        " null ",
    ];
    for input in inputs {
        if let Err(e) = Set::from_fields_v1(input) {
            panic!("{input:?}: {e}");
        }
    }
}

/// Regression: a float64 key or set value without a fraction (a schema
/// default `2.0`, or `2.0` in a request body) is written `2` by upstream
/// (jsoniter's WriteFloat64: `strconv.AppendFloat(f, 'f', -1, 64)`, the
/// exponent form below 1e-6 and from 1e21); kapi wrote `2.0`.
#[test]
fn float_values_written_as_go_writes_them() {
    let page = key(json!({"page": 2.0, "line": 3}));
    assert_eq!(
        set(&[path!["sentences", page]]).to_fields_v1(),
        r#"{"f:sentences":{"k:{\"line\":3,\"page\":2}":{}}}"#
    );
    let values = set(&[
        path!["set", val(2.0)],
        path!["set", val(0.5)],
        path!["set", val(-3.25)],
        path!["set", val(1e21)],
        path!["set", val(1.5e-7)],
        path!["set", val(123456789.0)],
    ]);
    assert_eq!(
        values.to_fields_v1(),
        r#"{"f:set":{"v:-3.25":{},"v:1.5e-07":{},"v:0.5":{},"v:2":{},"v:123456789":{},"v:1e+21":{}}}"#
    );
}
