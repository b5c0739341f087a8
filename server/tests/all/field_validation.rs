//! `fieldValidation=Strict|Warn|Ignore` on bodies and patches: unknown and
//! repeated fields (inside `metadata` and maps too) are refused with every
//! path listed in the order of the body, warned about, or ignored, as
//! kube-apiserver 1.32 answers (compared by curl).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::harness;

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// Repeats in metadata and at the top, unknown fields in between.
const BODY: &str = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup2","bogus":1},"data":{"a":"1"},"spec":{"foo":1},"data":{"b":"2"}}"#;

#[tokio::test]
async fn strict_lists_every_problem_in_body_order() {
    let h = harness().await;
    let uri = format!("{CONFIGMAPS}?fieldValidation=Strict");
    let (code, v, _) = h.send_warned("POST", &uri, "application/json", BODY).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(v["reason"], "BadRequest");
    assert_eq!(
        v["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: \
         duplicate field \"metadata.name\", unknown field \"metadata.bogus\", unknown field \"spec\", \
         duplicate field \"data\""
    );
    assert_eq!(h.count(CONFIGMAPS).await, 0, "nothing was written");
    let labels = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l","labels":{"a":"1","a":"2"}}}"#;
    let (code, v, _) = h
        .send_warned("POST", &uri, "application/json", labels)
        .await;
    assert_eq!(code, 400, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .ends_with("strict decoding error: duplicate field \"metadata.labels.a\""),
        "{v}"
    );
}

#[tokio::test]
async fn warn_and_ignore_keep_the_last_value() {
    let h = harness().await;
    let (code, v, warnings) = h
        .send_warned("POST", CONFIGMAPS, "application/json", BODY)
        .await;
    assert_eq!(code, 201, "Warn is the default: {v}");
    assert_eq!(v["metadata"]["name"], "dup2", "the last value counts");
    assert_eq!(v["data"], serde_json::json!({"b": "2"}));
    assert_eq!(
        warnings,
        [
            r#"299 - "duplicate field \"metadata.name\"""#,
            r#"299 - "unknown field \"metadata.bogus\"""#,
            r#"299 - "unknown field \"spec\"""#,
            r#"299 - "duplicate field \"data\"""#,
        ]
    );
    let ignored = BODY.replace("dup2", "dup3");
    let uri = format!("{CONFIGMAPS}?fieldValidation=Ignore");
    let (code, _, warnings) = h
        .send_warned("POST", &uri, "application/json", &ignored)
        .await;
    assert_eq!(code, 201);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[tokio::test]
async fn strict_patches_name_the_patched_object() {
    let h = harness().await;
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"},"data":{"a":"b"}}"#;
    let (code, _, _) = h
        .send_warned("POST", CONFIGMAPS, "application/json", cm)
        .await;
    assert_eq!(code, 201);
    let uri = format!("{CONFIGMAPS}/p?fieldValidation=Strict");
    for content_type in [
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ] {
        let patch = r#"{"spec":{"foo":1},"metadata":{"bogus":2}}"#;
        let (code, v, _) = h.send_warned("PATCH", &uri, content_type, patch).await;
        assert_eq!(code, 422, "{content_type}: {v}");
        assert_eq!(v["reason"], "Invalid");
        assert_eq!(v["details"]["causes"][0]["field"], "patch");
        let message = v["message"].as_str().unwrap();
        assert!(
            message.starts_with(" \"\" is invalid: patch: Invalid value: \""),
            "{message}"
        );
        assert!(
            message.ends_with(
                "strict decoding error: unknown field \"metadata.bogus\", unknown field \"spec\""
            ),
            "{message}"
        );
    }
    let (_, v, _) = h
        .send_warned("GET", &format!("{CONFIGMAPS}/p"), "application/json", "")
        .await;
    assert!(
        v["metadata"].get("bogus").is_none() && v.get("spec").is_none(),
        "{v}"
    );
    let (code, _, warnings) = h
        .send_warned(
            "PATCH",
            &format!("{CONFIGMAPS}/p"),
            "application/merge-patch+json",
            r#"{"spec":{"foo":1}}"#,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(warnings, [r#"299 - "unknown field \"spec\"""#]);
}

/// A YAML body's repeated keys are reported by line, before the unknown
/// fields, as Go's YAML decoder reports them; the last value counts.
#[tokio::test]
async fn yaml_repeats_are_reported_by_line() {
    let h = harness().await;
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  name: z\n  labels: {a: \"1\", a: \"2\"}\ndata: {a: \"1\"}\nbogus: 1\n";
    let uri = format!("{CONFIGMAPS}?fieldValidation=Strict");
    let (code, v, _) = h.send_warned("POST", &uri, "application/yaml", body).await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: \
         yaml: unmarshal errors:\n  line 5: key \"name\" already set in map\n  \
         line 6: key \"a\" already set in map, unknown field \"bogus\""
    );
    let (code, v, warnings) = h
        .send_warned("POST", CONFIGMAPS, "application/yaml", body)
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["metadata"]["name"], "z");
    assert_eq!(v["metadata"]["labels"]["a"], "2");
    assert_eq!(
        warnings,
        [
            r#"299 - "line 5: key \"name\" already set in map""#,
            r#"299 - "line 6: key \"a\" already set in map""#,
            r#"299 - "unknown field \"bogus\"""#,
        ]
    );
}
