//! Properties of the engine over random pairs of objects of one schema: a
//! struct of scalars, a granular map, a set, a list of type map keyed by
//! name, and a nested struct with an atomic list, an atomic map and a
//! struct. Lists are generated without repeated keys or values, so every
//! object is valid.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use kapi_structured_merge::schema::Schema;
use kapi_structured_merge::set::Set;
use kapi_structured_merge::typed::{KindSchema, Typed};
use kapi_structured_merge::updater::{ConvertError, Converter, ManagedFields, Updater};
use kapi_structured_merge::value::equals;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn kind() -> Arc<KindSchema> {
    let definitions = json!({
        "root": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "replicas": {"type": "integer"},
                "enabled": {"type": "boolean"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set"
                },
                "ports": {
                    "type": "array",
                    "items": {"$ref": "#/definitions/port"},
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"]
                },
                "spec": {"$ref": "#/definitions/spec"}
            }
        },
        "port": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "port": {"type": "integer"},
                "protocol": {"type": "string"}
            }
        },
        "spec": {
            "type": "object",
            "properties": {
                "image": {"type": "string"},
                "args": {"type": "array", "items": {"type": "string"}},
                "limits": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "x-kubernetes-map-type": "atomic"
                },
                "inner": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}, "y": {"type": "string"}}
                }
            }
        }
    });
    let Value::Object(definitions) = definitions else {
        unreachable!()
    };
    let (schema, root) = Schema::from_definitions(&definitions, "root");
    Arc::new(KindSchema {
        version: "v1".into(),
        schema,
        root,
    })
}

/// One version only: nothing is ever converted.
struct OneVersion;

impl Converter for OneVersion {
    fn convert(&self, _: &Typed, version: &str) -> Result<Typed, ConvertError> {
        Err(ConvertError::Failed(format!("no version {version}")))
    }
}

/// A few short words, so that two objects share keys and values often.
fn word() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c", "d"]).prop_map(String::from)
}

fn string_map() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(word(), word(), 0..3)
        .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k, Value::String(v))).collect()))
}

/// Distinct words, in any order.
fn tags() -> impl Strategy<Value = Value> {
    prop::collection::btree_set(word(), 0..4)
        .prop_map(|s: BTreeSet<String>| s.into_iter().map(Value::String).collect::<Vec<_>>())
        .prop_shuffle()
        .prop_map(Value::Array)
}

/// Ports with distinct names, in any order.
fn ports() -> impl Strategy<Value = Value> {
    let fields = (
        prop::option::of(0i64..3),
        prop::option::of(prop::sample::select(vec!["TCP", "UDP"])),
    );
    prop::collection::btree_map(word(), fields, 0..4)
        .prop_map(|m: BTreeMap<String, (Option<i64>, Option<&str>)>| {
            m.into_iter()
                .map(|(name, (port, protocol))| {
                    let mut item = Map::new();
                    item.insert("name".into(), json!(name));
                    if let Some(port) = port {
                        item.insert("port".into(), json!(port));
                    }
                    if let Some(protocol) = protocol {
                        item.insert("protocol".into(), json!(protocol));
                    }
                    Value::Object(item)
                })
                .collect::<Vec<_>>()
        })
        .prop_shuffle()
        .prop_map(Value::Array)
}

/// A map of the fields that are Some.
fn fields(entries: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
            .collect(),
    )
}

fn spec() -> impl Strategy<Value = Value> {
    let inner = (prop::option::of(0i64..3), prop::option::of(word()))
        .prop_map(|(x, y)| fields(vec![("x", x.map(Value::from)), ("y", y.map(Value::from))]));
    (
        prop::option::of(word()),
        prop::option::of(prop::collection::vec(word(), 0..3)),
        prop::option::of(string_map()),
        prop::option::of(inner),
    )
        .prop_map(|(image, args, limits, inner)| {
            fields(vec![
                ("image", image.map(Value::from)),
                ("args", args.map(Value::from)),
                ("limits", limits),
                ("inner", inner),
            ])
        })
}

fn object() -> impl Strategy<Value = Value> {
    (
        prop::option::of(word()),
        prop::option::of(0i64..3),
        prop::option::of(any::<bool>()),
        prop::option::of(string_map()),
        prop::option::of(tags()),
        prop::option::of(ports()),
        prop::option::of(spec()),
    )
        .prop_map(|(name, replicas, enabled, labels, tags, ports, spec)| {
            fields(vec![
                ("name", name.map(Value::from)),
                ("replicas", replicas.map(Value::from)),
                ("enabled", enabled.map(Value::from)),
                ("labels", labels),
                ("tags", tags),
                ("ports", ports),
                ("spec", spec),
            ])
        })
}

/// Whether every path of `small` is in `big`.
fn contains(big: &Set, small: &Set) -> bool {
    small.difference(big).is_empty()
}

fn updater<'a>(ignored: &'a HashMap<String, Set>) -> Updater<'a> {
    Updater {
        converter: &OneVersion,
        ignored,
    }
}

/// `object` written by `manager`'s update from nothing.
fn created_by(manager: &str, object: &Typed) -> ManagedFields {
    let ignored = HashMap::new();
    let empty = Typed::new(Value::Null, object.kind.clone());
    updater(&ignored)
        .update(&empty, object, "v1", ManagedFields::new(), manager)
        .unwrap_or_else(|e| panic!("update: {e:?}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The generators make valid objects, and an object compared with
    /// itself has no difference.
    #[test]
    fn compare_with_itself_is_empty(a in object()) {
        let a = Typed::new(a, kind());
        prop_assert_eq!(a.validate(), Vec::<String>::new());
        prop_assert!(a.compare(&a).is_same());
    }

    /// Merging an object into itself changes nothing.
    #[test]
    fn merge_with_itself_is_itself(a in object()) {
        let a = Typed::new(a, kind());
        let merged = a.merge(&a).map_err(TestCaseError::fail)?;
        prop_assert!(equals(&merged.value, &a.value), "{} became {}", a.value, merged.value);
    }

    /// Every field of the configuration is in the merge. Compared with
    /// struct fields as members: a configuration's empty struct is its
    /// own field, which the merge fills from the live object.
    #[test]
    fn merge_holds_the_configuration(a in object(), b in object()) {
        let (a, b) = (Typed::new(a, kind()), Typed::new(b, kind()));
        let merged = a.merge(&b).map_err(TestCaseError::fail)?;
        let merged_set = merged.named_fields_as_members(&merged.to_field_set());
        let config_set = merged.named_fields_as_members(&b.to_field_set());
        prop_assert!(
            contains(&merged_set, &config_set),
            "{} into {} gave {}; missing {:?}",
            b.value, a.value, merged.value,
            config_set.difference(&merged_set).paths()
        );
    }

    /// Applying the same configuration twice: the second apply changes
    /// nothing, meets no conflict, and the applier owns exactly the
    /// configuration's fields.
    #[test]
    fn reapplying_changes_nothing(a in object(), b in object()) {
        let (a, b) = (Typed::new(a, kind()), Typed::new(b, kind()));
        let ignored = HashMap::new();
        let updater = updater(&ignored);
        let managers = created_by("controller", &a);
        let (first, managers) = updater
            .apply(&a, &b, "v1", managers, "applier", true)
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let live = first.unwrap_or_else(|| a.clone());
        let (second, managers) = updater
            .apply(&live, &b, "v1", managers, "applier", false)
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        prop_assert!(
            second.is_none(),
            "{} applied again to {} gave {:?}",
            b.value, live.value, second.map(|s| s.value)
        );
        let owned = managers.get("applier").map(|m| m.set.clone()).unwrap_or_default();
        prop_assert_eq!(owned, b.to_field_set());
    }

    /// A sole applier that applies `b` and then `c` leaves exactly `c`'s
    /// fields: what it stopped applying is removed.
    #[test]
    fn sole_applier_leaves_its_last_configuration(b in object(), c in object()) {
        let (b, c) = (Typed::new(b, kind()), Typed::new(c, kind()));
        let ignored = HashMap::new();
        let updater = updater(&ignored);
        let mut live = Typed::new(Value::Null, b.kind.clone());
        let mut managers = ManagedFields::new();
        for config in [&b, &c] {
            let (new, m) = updater
                .apply(&live, config, "v1", managers, "applier", false)
                .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
            managers = m;
            live = new.unwrap_or(live);
        }
        prop_assert_eq!(
            live.to_field_set(), c.to_field_set(),
            "{} then {} left {}", b.value, c.value, live.value
        );
    }

    /// A field set's FieldsV1 text reads back as the same set.
    #[test]
    fn fields_v1_round_trips(a in object(), b in object()) {
        let (a, b) = (Typed::new(a, kind()), Typed::new(b, kind()));
        let comparison = a.compare(&b);
        for set in [a.to_field_set(), comparison.added, comparison.modified, comparison.removed] {
            let text = set.to_fields_v1();
            prop_assert_eq!(Set::from_fields_v1(&text), Ok(set), "{}", text);
        }
    }

    /// After an update, the updater owns exactly what it added or
    /// modified, and the applier that owned the old object keeps only what
    /// the update neither changed nor removed.
    #[test]
    fn updater_owns_what_it_changed(a in object(), b in object()) {
        let (a, b) = (Typed::new(a, kind()), Typed::new(b, kind()));
        let ignored = HashMap::new();
        let updater = updater(&ignored);
        let empty = Typed::new(Value::Null, a.kind.clone());
        let (_, managers) = updater
            .apply(&empty, &a, "v1", ManagedFields::new(), "applier", false)
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let managers = updater
            .update(&a, &b, "v1", managers, "updater")
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let comparison = a.compare(&b);
        let changed = comparison.added.union(&comparison.modified);
        let owned = |m: &str| managers.get(m).map(|m| m.set.clone()).unwrap_or_default();
        prop_assert_eq!(owned("updater"), changed.clone());
        let kept = a.to_field_set().difference(&changed).difference(&comparison.removed);
        prop_assert_eq!(owned("applier"), kept);
    }
}
