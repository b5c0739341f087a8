//! Patches round the edges, answered as kube-apiserver 1.32 answers them
//! (compared by curl): malformed bodies, a changed name, kind or apiVersion,
//! a stale resourceVersion, a failed JSON patch test, a missing object, a body
//! over the size limit; none of them writes anything.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::common::harness;

const CM: &str = "/api/v1/namespaces/default/configmaps/edge";

#[tokio::test]
async fn patch_edges_answer_as_upstream_and_write_nothing() {
    let h = harness().await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "edge"}, "data": {"a": "b"}});
    let (code, created) = h
        .call("POST", "/api/v1/namespaces/default/configmaps", cm)
        .await;
    assert_eq!(code, 201);
    let merge = "application/merge-patch+json";
    let json_patch = "application/json-patch+json";
    let strategic = "application/strategic-merge-patch+json";
    let cases: &[(&str, &str, &str, u16, &str)] = &[
        (
            CM,
            merge,
            r#"{"metadata":{"name":"other"}}"#,
            400,
            "the name of the object (other) does not match the name on the URL (edge)",
        ),
        (
            CM,
            merge,
            r#"{"metadata":{"resourceVersion":"1"}}"#,
            409,
            "Operation cannot be fulfilled on configmaps \"edge\": the object has been modified; please apply your changes to the latest version and try again",
        ),
        (
            CM,
            json_patch,
            r#"[{"op":"test","path":"/data/a","value":"zzz"}]"#,
            422,
            "the server rejected our request due to an error in our request",
        ),
        (
            CM,
            json_patch,
            r#"{"op":"add"}"#,
            400,
            "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
        ),
        (
            CM,
            merge,
            "[1,2]",
            400,
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        (
            CM,
            strategic,
            "[1,2]",
            400,
            "json: cannot unmarshal array into Go value of type map[string]interface {}",
        ),
        (
            "/api/v1/namespaces/default/configmaps/missing",
            merge,
            r#"{"data":{"x":"y"}}"#,
            404,
            "configmaps \"missing\" not found",
        ),
        (
            CM,
            merge,
            r#"{"metadata":{"namespace":"other"}}"#,
            400,
            "the namespace of the provided object does not match the namespace sent on the request",
        ),
    ];
    for (uri, content_type, body, code, message) in cases {
        let (got, v, _) = h.send_warned("PATCH", uri, content_type, body).await;
        assert_eq!(got.as_u16(), *code, "{body}: {v}");
        assert_eq!(v["message"], *message, "{body}");
    }
    // A patched object that is no ConfigMap any more: a 422 on `patch`
    // naming the object.
    for body in [r#"{"apiVersion":"v2"}"#, r#"{"data":"notamap"}"#] {
        let (code, v, _) = h.send_warned("PATCH", CM, merge, body).await;
        assert_eq!(code, 422, "{body}: {v}");
        assert_eq!(v["reason"], "Invalid");
        assert_eq!(v["details"]["causes"][0]["field"], "patch");
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .starts_with(" \"\" is invalid: patch: Invalid value: \"{\\\"apiVersion\\\":"),
            "{v}"
        );
    }
    // Over the 3 MiB limit.
    let big = format!(
        r#"{{"data":{{"big":"{}"}}}}"#,
        "x".repeat(3 * 1024 * 1024 + 1)
    );
    let (code, v, _) = h.send_warned("PATCH", CM, merge, &big).await;
    assert_eq!(code, 413, "{v}");
    let (_, now) = h.call("GET", CM, Value::Null).await;
    assert_eq!(now, created, "nothing was written");
}
