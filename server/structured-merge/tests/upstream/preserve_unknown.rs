//! merge/preserve_unknown_test.go, `TestPreserveUnknownFields`: a struct
//! whose other keys are strings.

use serde_json::json;

use crate::fixture::{Parser, State};

#[test]
fn preserve_unknown_fields() {
    let parser = Parser::same(
        json!({
            "type": {
                "type": "object",
                "properties": {"num": {"type": "number"}},
                "additionalProperties": {"type": "string"}
            }
        }),
        "type",
    );
    let mut s = State::new(parser);
    s.apply("default", "v1", json!({"num": 5, "unknown": "value"}));
    s.apply("default", "v1", json!({"num": 6, "unknown": "new"}));
    s.assert_live("v1", json!({"num": 6, "unknown": "new"}));
    s.assert_managed(&[("default", "v1", vec![path!["num"], path!["unknown"]])]);
}
