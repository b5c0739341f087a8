//! merge/multiple_appliers_test.go, the cases whose versions convert:
//! `TestMultipleAppliersFieldUnsetting` and
//! `TestMultipleAppliersFieldRenameConversions` (fields renamed per
//! version, every combination of three versions),
//! `TestMultipleAppliersRealConversion` (keys repeated per version),
//! `TestMultipleAppliersReliantFieldsConversions` and
//! `TestVersionDoesntMatchTypename` (a conversion that needs a field).

use std::collections::HashMap;
use std::rc::Rc;

use kapi_structured_merge::updater::{ManagedFields, Updater, VersionedSet};
use serde_json::{Value, json};

use crate::fixture::converters::{ReliantFields, Renaming, Repeating};
use crate::fixture::{Parser, State, set};
use crate::nested::nested_type;

/// `structMultiversionParser`: a struct whose fields carry the version
/// in their names.
fn struct_multiversion() -> Rc<Parser> {
    let mut definitions = serde_json::Map::new();
    for v in ["v1", "v2", "v3"] {
        // Upstream names v1's types `struct` and `complex`.
        let suffix = if v == "v1" {
            String::new()
        } else {
            format!("_{v}")
        };
        definitions.insert(
            v.to_owned(),
            json!({
                "type": "object",
                "properties": {
                    "struct": {"$ref": format!("#/definitions/struct{suffix}")},
                    "version": {"type": "string"}
                }
            }),
        );
        definitions.insert(
            format!("struct{suffix}"),
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    format!("scalarField_{v}"): {"type": "string"},
                    format!("complexField_{v}"): {"$ref": format!("#/definitions/complex{suffix}")}
                }
            }),
        );
        definitions.insert(
            format!("complex{suffix}"),
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        );
    }
    Rc::new(Parser::by_version(Value::Object(definitions)))
}

fn renaming_state() -> State {
    let parser = struct_multiversion();
    let converter = Rc::new(Renaming {
        parser: parser.clone(),
    });
    State::with_converter(parser, converter)
}

const VERSIONS: [&str; 3] = ["v1", "v2", "v3"];

/// Runs `case` for every (v1, v2, v3) in VERSIONS³, as upstream does.
fn for_each_version_triple(case: fn(&str, &str, &str)) {
    for v1 in VERSIONS {
        for v2 in VERSIONS {
            for v3 in VERSIONS {
                case(v1, v2, v3);
            }
        }
    }
}

fn scalar(v: &str) -> String {
    format!("scalarField_{v}")
}

fn complex(v: &str) -> String {
    format!("complexField_{v}")
}

#[test]
fn unset_scalar_sole_owner() {
    for_each_version_triple(|v1, v2, v3| {
        let mut s = renaming_state();
        s.apply(
            "apply-one",
            v1,
            json!({"struct": {"name": "a", scalar(v1): "a"}}),
        );
        s.apply("apply-one", v2, json!({"struct": {"name": "a"}}));
        s.assert_live(v3, json!({"struct": {"name": "a"}}));
        s.assert_managed(&[("apply-one", v2, vec![path!["struct", "name"]])]);
    });
}

#[test]
fn unset_scalar_shared_with_applier() {
    for_each_version_triple(|v1, v2, v3| {
        let mut s = renaming_state();
        s.apply(
            "apply-one",
            v1,
            json!({"struct": {"name": "a", scalar(v1): "a"}}),
        );
        s.apply("apply-two", v2, json!({"struct": {scalar(v2): "a"}}));
        s.apply("apply-one", v3, json!({"struct": {"name": "a"}}));
        s.assert_live(v3, json!({"struct": {"name": "a", scalar(v3): "a"}}));
        s.assert_managed(&[
            ("apply-one", v3, vec![path!["struct", "name"]]),
            ("apply-two", v2, vec![path!["struct", scalar(v2).as_str()]]),
        ]);
    });
}

#[test]
fn unset_scalar_shared_with_updater() {
    for_each_version_triple(|v1, v2, v3| {
        let mut s = renaming_state();
        s.update(
            "updater",
            v1,
            json!({"struct": {"name": "a", scalar(v1): "a"}}),
        );
        s.apply(
            "applier",
            v2,
            json!({"struct": {"name": "a", scalar(v2): "a"}}),
        );
        s.apply("applier", v3, json!({"struct": {"name": "a"}}));
        s.assert_live(v3, json!({"struct": {"name": "a", scalar(v3): "a"}}));
        s.assert_managed(&[
            (
                "updater",
                v1,
                vec![
                    path!["struct"],
                    path!["struct", "name"],
                    path!["struct", scalar(v1).as_str()],
                ],
            ),
            ("applier", v3, vec![path!["struct", "name"]]),
        ]);
    });
}

/// Upstream has this case in `TestMultipleAppliersFieldUnsetting` and in
/// `TestMultipleAppliersFieldRenameConversions`, with the same steps.
fn updater_claims_field(v1: &str, v2: &str, v3: &str) {
    let mut s = renaming_state();
    s.apply(
        "applier",
        v1,
        json!({"struct": {"name": "a", scalar(v1): "a"}}),
    );
    s.update(
        "updater",
        v2,
        json!({"struct": {"name": "a", scalar(v2): "b"}}),
    );
    s.assert_live(v3, json!({"struct": {"name": "a", scalar(v3): "b"}}));
    s.assert_managed(&[
        ("updater", v2, vec![path!["struct", scalar(v2).as_str()]]),
        ("applier", v1, vec![path!["struct", "name"]]),
    ]);
}

#[test]
fn field_unsetting_updater_claims_field() {
    for_each_version_triple(updater_claims_field);
}

#[test]
fn field_rename_conversions_updater_claims_field() {
    for_each_version_triple(updater_claims_field);
}

#[test]
fn unset_complex_sole_owner() {
    for_each_version_triple(|v1, v2, v3| {
        let mut s = renaming_state();
        s.apply(
            "apply-one",
            v1,
            json!({"struct": {"name": "a", complex(v1): {"name": "b"}}}),
        );
        s.apply("apply-one", v2, json!({"struct": {"name": "a"}}));
        s.assert_live(v3, json!({"struct": {"name": "a"}}));
        s.assert_managed(&[("apply-one", v2, vec![path!["struct", "name"]])]);
    });
}

#[test]
fn unset_complex_shared_with_applier() {
    for_each_version_triple(|v1, v2, v3| {
        let mut s = renaming_state();
        s.apply(
            "apply-one",
            v1,
            json!({"struct": {"name": "a", complex(v1): {"name": "b"}}}),
        );
        s.apply(
            "apply-two",
            v2,
            json!({"struct": {complex(v2): {"name": "b"}}}),
        );
        s.apply("apply-one", v3, json!({"struct": {"name": "a"}}));
        s.assert_live(
            v3,
            json!({"struct": {"name": "a", complex(v3): {"name": "b"}}}),
        );
        s.assert_managed(&[
            ("apply-one", v3, vec![path!["struct", "name"]]),
            (
                "apply-two",
                v2,
                vec![path!["struct", complex(v2).as_str(), "name"]],
            ),
        ]);
    });
}

// TestMultipleAppliersRealConversion: `repeatingConverter` writes the keys
// of the recursive map as their letter repeated once per version number.

fn repeating_state() -> State {
    let parser = Rc::new(nested_type());
    let converter = Rc::new(Repeating {
        parser: parser.clone(),
    });
    State::with_converter(parser, converter)
}

fn recursive(v: Value) -> Value {
    json!({ "mapOfMapsRecursive": v })
}

const M: &str = "mapOfMapsRecursive";

#[test]
fn multiple_appliers_recursive_map_real_conversion() {
    let mut s = repeating_state();
    s.apply(
        "apply-one",
        "v1",
        recursive(json!({"a": {"b": null}, "c": {"d": null}})),
    );
    s.apply(
        "apply-two",
        "v2",
        recursive(json!({"aa": null, "cc": {"dd": null}})),
    );
    s.update(
        "controller",
        "v3",
        recursive(json!({
            "aaa": {"bbb": {"ccc": {"ddd": null}}},
            "ccc": {"ddd": {"eee": {"fff": null}}}
        })),
    );
    s.apply("apply-one", "v4", recursive(Value::Null));
    s.assert_live(
        "v4",
        recursive(json!({"aaaa": null, "cccc": {"dddd": {"eeee": {"ffff": null}}}})),
    );
    s.assert_managed(&[
        ("apply-one", "v4", vec![path![M]]),
        (
            "apply-two",
            "v2",
            vec![path![M, "aa"], path![M, "cc"], path![M, "cc", "dd"]],
        ),
        (
            "controller",
            "v3",
            vec![
                path![M, "ccc", "ddd", "eee"],
                path![M, "ccc", "ddd", "eee", "fff"],
            ],
        ),
    ]);
}

/// An applier can delete map items it created after a controller changed
/// them.
#[test]
fn appliers_remove_from_controller_real_conversion() {
    let mut s = repeating_state();
    s.apply("apply", "v3", recursive(json!({"aaa": {"bbb": null}})));
    s.update(
        "controller",
        "v1",
        recursive(json!({"a": {"b": {"c": null}}})),
    );
    s.apply(
        "apply",
        "v2",
        recursive(json!({"aa": {"bb": null}, "cc": {"dd": null}})),
    );
    s.apply("apply", "v3", recursive(json!({"aaa": null, "ccc": null})));
    s.assert_live("v3", recursive(json!({"aaa": null, "ccc": null})));
    s.assert_managed(&[("apply", "v3", vec![path![M, "aaa"], path![M, "ccc"]])]);
}

/// Maps an updater created stay when an applier that shared them stops
/// applying them.
#[test]
fn applier_updater_shared_ownership_real_conversion() {
    let mut s = repeating_state();
    s.update("updater", "v1", recursive(json!({"a": {"b": {"c": null}}})));
    s.apply(
        "apply",
        "v2",
        recursive(json!({"aa": {"bb": null}, "cc": {"dd": null}})),
    );
    s.apply("apply", "v3", recursive(json!({"aaa": null, "ccc": null})));
    s.assert_live(
        "v3",
        recursive(json!({"aaa": {"bbb": {"ccc": null}}, "ccc": null})),
    );
    s.assert_managed(&[
        (
            "updater",
            "v1",
            vec![
                path![M],
                path![M, "a"],
                path![M, "a", "b"],
                path![M, "a", "b", "c"],
            ],
        ),
        ("apply", "v3", vec![path![M, "aaa"], path![M, "ccc"]]),
    ]);
}

// TestMultipleAppliersReliantFieldsConversions and
// TestVersionDoesntMatchTypename: v1 reads `field_foo_rely_on_bar`, which
// only exists when v2's `required_field_bar` does.

fn reliant_fields() -> Rc<Parser> {
    Rc::new(Parser::by_version(json!({
        "v1": {
            "type": "object",
            "properties": {
                "field_foo_rely_on_bar": {"type": "string"},
                "common_field": {"type": "string"}
            }
        },
        "v2": {
            "type": "object",
            "properties": {
                "required_field_bar": {"type": "string"},
                "common_field": {"type": "string"}
            }
        }
    })))
}

#[test]
fn multiple_versions_with_reliant_fields() {
    let parser = reliant_fields();
    let converter = Rc::new(ReliantFields {
        parser: parser.clone(),
    });
    let mut s = State::with_converter(parser, converter);
    s.apply("v2_applier", "v2", json!({"required_field_bar": "a"}));
    s.apply("v1_applier", "v1", json!({"common_field": "b"}));
    s.apply("v2_applier", "v2", json!({"required_field_bar": "b"}));
    s.assert_live(
        "v2",
        json!({"required_field_bar": "b", "common_field": "b"}),
    );
    s.assert_managed(&[
        ("v2_applier", "v2", vec![path!["required_field_bar"]]),
        ("v1_applier", "v1", vec![path!["common_field"]]),
    ]);
}

/// The same steps through the `Updater` directly, converting the live
/// object between applies as a caller does (upstream's
/// `TestVersionDoesntMatchTypename`).
#[test]
fn version_doesnt_match_typename() {
    let parser = reliant_fields();
    let converter = ReliantFields {
        parser: parser.clone(),
    };
    let ignored = HashMap::new();
    let updater = Updater {
        converter: &converter,
        ignored: &ignored,
    };
    use kapi_structured_merge::updater::Converter;
    let mut live = parser.typed("v2", json!({}));
    let mut managers = ManagedFields::new();
    let steps = [
        ("v2", "v2_applier", json!({"required_field_bar": "a"})),
        ("v1", "v1_applier", json!({"common_field": "b"})),
        ("v2", "v2_applier", json!({"required_field_bar": "b"})),
    ];
    for (version, manager, config) in steps {
        live = converter.convert(&live, version).expect("convert live");
        let config = parser.typed(version, config);
        let (new, m) = updater
            .apply(&live, &config, version, managers, manager, false)
            .expect("apply");
        managers = m;
        live = new.unwrap_or(live);
    }
    assert_eq!(
        live.value,
        json!({"required_field_bar": "b", "common_field": "b"})
    );
    let expected: ManagedFields = [
        (
            "v2_applier".to_owned(),
            VersionedSet {
                set: set(&[path!["required_field_bar"]]),
                api_version: "v2".into(),
                applied: true,
            },
        ),
        (
            "v1_applier".to_owned(),
            VersionedSet {
                set: set(&[path!["common_field"]]),
                api_version: "v1".into(),
                applied: true,
            },
        ),
    ]
    .into_iter()
    .collect();
    // Upstream's ManagedFields.Equals compares the applied flags too.
    assert_eq!(managers, expected);
}
