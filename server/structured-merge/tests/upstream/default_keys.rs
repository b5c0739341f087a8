//! merge/default_keys_test.go: lists of type map whose key fields have
//! schema defaults (`TestDefaultKeysFlat`, `TestDefaultKeysFlatErrors`,
//! `TestDefaultKeysNested`).

use kapi_structured_merge::path::PathElement;
use serde_json::json;

use crate::fixture::{OpError, Parser, State, key};

/// `portListParser`: `protocol` defaults to TCP.
fn port_list() -> Parser {
    Parser::by_version(json!({
        "v1": {
            "type": "object",
            "properties": {
                "containerPorts": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "port": {"type": "number"},
                            "protocol": {"type": "string", "default": "TCP"},
                            "name": {"type": "string"}
                        }
                    },
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"]
                }
            }
        }
    }))
}

fn port(port: i64, protocol: &str) -> PathElement {
    key(json!({"port": port, "protocol": protocol}))
}

const CP: &str = "containerPorts";

#[test]
fn apply_missing_defaulted_key_a() {
    // "apply_missing_defaulted_key_A"
    let mut s = State::new(port_list());
    s.apply("default", "v1", json!({"containerPorts": [{"port": 80}]}));
    s.assert_live("v1", json!({"containerPorts": [{"port": 80}]}));
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path![CP, port(80, "TCP")],
            path![CP, port(80, "TCP"), "port"],
        ],
    )]);
}

#[test]
fn apply_missing_defaulted_key_b() {
    // "apply_missing_defaulted_key_B"
    let mut s = State::new(port_list());
    let ports = json!({"containerPorts": [{"port": 80}, {"port": 80, "protocol": "UDP"}]});
    s.apply("default", "v1", ports.clone());
    s.assert_live("v1", ports);
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path![CP, port(80, "TCP")],
            path![CP, port(80, "TCP"), "port"],
            path![CP, port(80, "UDP")],
            path![CP, port(80, "UDP"), "port"],
            path![CP, port(80, "UDP"), "protocol"],
        ],
    )]);
}

#[test]
fn apply_missing_defaulted_key_with_conflict() {
    let mut s = State::new(port_list());
    s.apply(
        "apply-one",
        "v1",
        json!({"containerPorts": [{"port": 80, "protocol": "TCP", "name": "foo"}]}),
    );
    s.apply_conflicts(
        "apply-two",
        "v1",
        json!({"containerPorts": [{"port": 80, "name": "bar"}]}),
        &[("apply-one", path![CP, port(80, "TCP"), "name"])],
    );
    s.assert_live(
        "v1",
        json!({"containerPorts": [{"port": 80, "protocol": "TCP", "name": "foo"}]}),
    );
    s.assert_managed(&[(
        "apply-one",
        "v1",
        vec![
            path![CP, port(80, "TCP")],
            path![CP, port(80, "TCP"), "port"],
            path![CP, port(80, "TCP"), "protocol"],
            path![CP, port(80, "TCP"), "name"],
        ],
    )]);
}

/// An item without `port` (no default) is keyed by its protocol alone.
/// Upstream's v6.3 behaviour ("support optional map keys"); v4.4.2 refused
/// such an item, and listed this case among `TestDefaultKeysFlatErrors`.
#[test]
fn apply_missing_undefaulted_defaulted_key() {
    let mut s = State::new(port_list());
    let ports = json!({"containerPorts": [{"protocol": "TCP", "name": "A"}]});
    s.apply("default", "v1", ports.clone());
    s.assert_live("v1", ports);
    let tcp = || key(json!({"protocol": "TCP"}));
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path![CP, tcp()],
            path![CP, tcp(), "name"],
            path![CP, tcp(), "protocol"],
        ],
    )]);
}

/// Two items whose keys are the same once defaulted: the configuration is
/// refused.
fn refused(ports: serde_json::Value) {
    let mut s = State::new(port_list());
    match s.try_apply("default", "v1", ports, false) {
        Err(OpError::Invalid(errors)) => {
            assert!(
                errors.iter().any(|e| e.contains("duplicate entries")),
                "{errors:?}"
            );
        }
        other => panic!("expected the configuration refused, got {other:?}"),
    }
}

#[test]
fn apply_missing_defaulted_key_ambiguous_a() {
    // "apply_missing_defaulted_key_ambiguous_A"
    refused(json!({"containerPorts": [{"port": 80}, {"port": 80}]}));
}

#[test]
fn apply_missing_defaulted_key_ambiguous_b() {
    // "apply_missing_defaulted_key_ambiguous_B"
    refused(json!({"containerPorts": [{"port": 80}, {"port": 80, "protocol": "TCP"}]}));
}

/// `bookParser`: chapter defaults to 1, section to "A", page to 2.0, line
/// to 3.
fn book() -> Parser {
    Parser::by_version(json!({
        "v1": {
            "type": "object",
            "properties": {
                "book": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "chapter": {"type": "number", "default": 1},
                            "section": {"type": "string", "default": "A"},
                            "sentences": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "page": {"type": "number", "default": 2.0},
                                        "line": {"type": "number", "default": 3},
                                        "text": {"type": "string"}
                                    }
                                },
                                "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["page", "line"]
                            }
                        }
                    },
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["chapter", "section"]
                }
            }
        }
    }))
}

fn chapter() -> PathElement {
    key(json!({"chapter": 1, "section": "A"}))
}

fn sentence() -> PathElement {
    key(json!({"page": 2, "line": 3}))
}

#[test]
fn apply_missing_every_key_nested() {
    let mut s = State::new(book());
    let object = json!({"book": [{"sentences": [{"text": "blah"}]}]});
    s.apply("default", "v1", object.clone());
    s.assert_live("v1", object);
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["book", chapter()],
            path!["book", chapter(), "sentences", sentence()],
            path!["book", chapter(), "sentences", sentence(), "text"],
        ],
    )]);
}

/// The page applied as the integer 2 is the item keyed by the default 2.0.
#[test]
fn apply_integer_key_with_float_default() {
    let mut s = State::new(book());
    s.apply(
        "default",
        "v1",
        json!({"book": [{"sentences": [{"text": "blah"}]}]}),
    );
    let object = json!({"book": [{"sentences": [{"text": "blah", "page": 2}]}]});
    s.apply("default", "v1", object.clone());
    s.assert_live("v1", object);
    s.assert_managed(&[(
        "default",
        "v1",
        vec![
            path!["book", chapter()],
            path!["book", chapter(), "sentences", sentence()],
            path!["book", chapter(), "sentences", sentence(), "text"],
            path!["book", chapter(), "sentences", sentence(), "page"],
        ],
    )]);
}
