//! A custom resource version's structural schema (its `openAPIV3Schema`) as
//! the request path uses it: which fields exist (pruning, and the unknown
//! fields `fieldValidation` reports), their defaults, and the validation of
//! values against it with kube-apiserver's field paths and messages (types,
//! formats, bounds, lengths, patterns, enums, required fields, list sets and
//! maps), and the CEL rules (`x-kubernetes-validations`, compiled here and
//! run by [`crate::custom::cel`]) with the stored object's values for
//! transition rules.

use std::collections::BTreeMap;
use std::fmt;

use kapi_runtime::validation::{FieldErrorKind, FieldErrors, FieldPath};
use serde_json::{Map, Value};

use super::cel::{Mode, NodeRules, RUNTIME_BUDGET};

/// One node of a structural schema.
#[derive(Debug, Default)]
pub struct Structural {
    /// The properties of an object.
    properties: BTreeMap<String, Structural>,
    /// The schema of every value of a map (`additionalProperties`).
    additional: Option<Box<Structural>>,
    /// The schema of a list's items.
    items: Option<Box<Structural>>,
    /// `x-kubernetes-preserve-unknown-fields`: fields the schema does not name
    /// are kept.
    preserve_unknown: bool,
    /// `x-kubernetes-embedded-resource`: an object with its own `apiVersion`,
    /// `kind` and `metadata`.
    embedded: bool,
    /// `nullable`.
    nullable: bool,
    /// `default`.
    default: Option<Value>,
    /// What values are allowed.
    checks: Checks,
    /// The node's compiled CEL rules (rules that do not compile are left
    /// out: the definition's validation refused them when it was written).
    rules: Option<Box<NodeRules>>,
    /// Whether the node or one below it has compiled rules.
    rules_below: bool,
}

/// The value constraints of one schema node.
#[derive(Debug, Default)]
struct Checks {
    /// `type` (`integer,string` for `x-kubernetes-int-or-string`).
    type_: Option<String>,
    format: Option<String>,
    enum_: Option<Vec<Value>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: bool,
    exclusive_maximum: bool,
    multiple_of: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    /// `pattern`, compiled (`None` inside: a pattern that does not compile,
    /// which checks nothing).
    pattern: Option<(String, Option<regex::Regex>)>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    required: Vec<String>,
    /// `x-kubernetes-list-type`.
    list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    list_map_keys: Vec<String>,
    /// Whether the node or one below it has `x-kubernetes-validations`.
    has_rules: bool,
}

impl Structural {
    /// The structural form of an `openAPIV3Schema` (`None`: a version with no
    /// schema keeps every field).
    pub fn of(schema: &Value) -> Structural {
        Structural::node(schema, true)
    }

    fn node(json: &Value, root: bool) -> Structural {
        let Value::Object(schema) = json else {
            return Structural::default();
        };
        let node = |key: &str| {
            schema
                .get(key)
                .filter(|v| v.is_object())
                .map(|v| Structural::node(v, false))
        };
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool).unwrap_or(false);
        let rules = schema
            .get("x-kubernetes-validations")
            .map(|_| Box::new(NodeRules::compile(json, root).0))
            .filter(|r| !r.rules.is_empty());
        let mut structural = Structural {
            properties: schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| {
                    p.iter()
                        .map(|(k, v)| (k.clone(), Structural::node(v, false)))
                        .collect()
                })
                .unwrap_or_default(),
            additional: node("additionalProperties").map(Box::new),
            items: node("items").map(Box::new),
            preserve_unknown: flag("x-kubernetes-preserve-unknown-fields")
                // A schema with no properties and no type constraint at all
                // (an empty schema) keeps what it is given, as upstream.
                || (schema.get("type").is_none()
                    && schema.get("properties").is_none()
                    && schema.get("additionalProperties").is_none()
                    && schema.get("items").is_none()
                    && !flag("x-kubernetes-embedded-resource")),
            embedded: flag("x-kubernetes-embedded-resource"),
            nullable: flag("nullable"),
            default: schema.get("default").cloned(),
            checks: Checks::of(schema),
            rules,
            rules_below: false,
        };
        structural.rules_below = structural.rules.is_some()
            || structural.properties.values().any(|p| p.rules_below)
            || structural
                .additional
                .as_ref()
                .is_some_and(|a| a.rules_below)
            || structural.items.as_ref().is_some_and(|i| i.rules_below);
        structural
    }

    /// Whether CEL rules run on objects of this schema.
    pub fn has_compiled_rules(&self) -> bool {
        self.rules_below
    }

    /// Runs the CEL rules on a whole custom object `object` (with
    /// `apiVersion`, `kind` and `metadata`), and `old`, the stored object
    /// on an update, for transition rules and ratcheting.
    pub fn validate_rules_root(
        &self,
        object: &Value,
        old: Option<&Value>,
        mode: Mode,
        errs: &mut FieldErrors,
    ) {
        let mut budget = RUNTIME_BUDGET;
        self.validate_rules(object, old, mode, &Path::root(), &mut budget, errs);
    }

    /// Runs the rules of this node and below on `value`; `false` once the
    /// budget is spent.
    fn validate_rules(
        &self,
        value: &Value,
        old: Option<&Value>,
        mode: Mode,
        path: &Path,
        budget: &mut u64,
        errs: &mut FieldErrors,
    ) -> bool {
        if !self.rules_below {
            return true;
        }
        if let Some(rules) = &self.rules
            && !rules.validate(value, old, mode, &path.field(), budget, errs)
        {
            return false;
        }
        match value {
            Value::Object(map) => {
                for (key, property) in &self.properties {
                    let Some(v) = map.get(key) else { continue };
                    let o = old.and_then(|o| o.get(key));
                    if !property.validate_rules(v, o, mode, &path.child(key), budget, errs) {
                        return false;
                    }
                }
                if let Some(values) = &self.additional {
                    for (key, v) in map {
                        let o = old.and_then(|o| o.get(key));
                        if !values.validate_rules(v, o, mode, &path.key(key), budget, errs) {
                            return false;
                        }
                    }
                }
            }
            Value::Array(items) => {
                let Some(schema) = &self.items else {
                    return true;
                };
                let keys = &self.checks.list_map_keys;
                let correlates =
                    self.checks.list_type.as_deref() == Some("map") && !keys.is_empty();
                let old_items = old.and_then(Value::as_array);
                for (i, item) in items.iter().enumerate() {
                    // Items of a map list pair with the stored item of the
                    // same keys; other lists' items pair with nothing.
                    let o = old_items.filter(|_| correlates).and_then(|olds| {
                        olds.iter()
                            .find(|o| keys.iter().all(|k| o.get(k) == item.get(k)))
                    });
                    if !schema.validate_rules(item, o, mode, &path.index(i), budget, errs) {
                        return false;
                    }
                }
            }
            _ => {}
        }
        true
    }

    /// Whether the schema has CEL rules anywhere (compiling or not).
    fn has_rules(&self) -> bool {
        self.checks.has_rules
            || self.properties.values().any(Structural::has_rules)
            || self.additional.as_ref().is_some_and(|s| s.has_rules())
            || self.items.as_ref().is_some_and(|s| s.has_rules())
    }

    /// Validates a custom object's content (without `apiVersion`, `kind` and
    /// `metadata`) against the schema: the schema's own checks, then list
    /// sets and maps, then, when the schema has CEL rules, upstream's note
    /// that they were not run after an error that blocks them.
    pub fn validate_root(
        &self,
        object: &Map<String, Value>,
        old: Option<&Map<String, Value>>,
        errs: &mut FieldErrors,
    ) {
        let before = errs.0.len();
        let old = old.map(|o| Value::Object(o.clone()));
        self.validate_map(object, old.as_ref(), &Path::root(), errs);
        let blocking = errs.0[before..].iter().any(blocks);
        if blocking && self.has_rules() {
            errs.invalid_without_value(
                FieldPath::new("<nil>"),
                "\"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            );
        }
    }

    /// Validates `value` at `path`; `old` is the stored object's value there
    /// on an update, where one correlates: a value an update leaves as it
    /// was is not validated again (ratcheting, as 1.32 does by default).
    fn validate(&self, value: &Value, old: Option<&Value>, path: &Path, errs: &mut FieldErrors) {
        if old == Some(value) {
            return;
        }
        let c = &self.checks;
        if value.is_null() {
            if !self.nullable
                && let Some(type_) = &c.type_
            {
                errs.type_invalid(
                    path.field(),
                    "null",
                    &format!("{} in body must be of type {type_}: \"null\"", path.text()),
                );
            }
            return;
        }
        if let Some(type_) = &c.type_
            && !type_.split(',').any(|t| has_type(value, t))
        {
            let actual = type_name(value);
            errs.type_invalid(
                path.field(),
                actual,
                &format!(
                    "{} in body must be of type {type_}: {actual:?}",
                    path.text()
                ),
            );
            return;
        }
        match value {
            Value::String(text) => self.validate_string(text, path, errs),
            Value::Number(n) => self.validate_number(n, path, errs),
            Value::Array(items) => self.validate_list(items, old, path, errs),
            Value::Object(_) | Value::Bool(_) | Value::Null => {}
        }
        if let Some(allowed) = &c.enum_
            && !allowed.contains(value)
        {
            let allowed: Vec<String> = allowed
                .iter()
                .map(|a| match a {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
            errs.not_supported_value(path.field(), Shown(value), &allowed);
        }
        if let Value::Object(map) = value {
            if self.embedded {
                validate_embedded(map, path, errs);
            }
            self.validate_map(map, old, path, errs);
        }
    }

    fn validate_string(&self, text: &str, path: &Path, errs: &mut FieldErrors) {
        let c = &self.checks;
        let length = text.chars().count() as u64;
        if let Some(max) = c.max_length.filter(|max| length > *max) {
            errs.too_long(path.field(), usize::try_from(max).unwrap_or(usize::MAX));
        } else if let Some(min) = c.min_length.filter(|min| length < *min) {
            errs.invalid(
                path.field(),
                text,
                &format!(
                    "{} in body should be at least {min} chars long",
                    path.text()
                ),
            );
        } else if let Some((pattern, Some(regex))) = &c.pattern
            && !regex.is_match(text)
        {
            errs.invalid(
                path.field(),
                text,
                &format!("{} in body should match '{pattern}'", path.text()),
            );
        }
        if let Some(format) = &c.format
            && !format_holds(format, text)
        {
            errs.type_invalid(
                path.field(),
                text,
                &format!("{} in body must be of type {format}: {text:?}", path.text()),
            );
        }
    }

    fn validate_number(&self, n: &serde_json::Number, path: &Path, errs: &mut FieldErrors) {
        let c = &self.checks;
        let Some(x) = n.as_f64() else { return };
        let integer = n.is_i64() || n.is_u64();
        // A bound prints as an integer when the value is one, as upstream.
        let bound = |b: f64| {
            if integer && b.fract() == 0.0 {
                format!("{}", b as i64)
            } else {
                format!("{b}")
            }
        };
        if let Some(m) = c.multiple_of
            && m > 0.0
            && (x / m).fract() != 0.0
        {
            errs.invalid(
                path.field(),
                Shown(&Value::Number(n.clone())),
                &format!(
                    "{} in body should be a multiple of {}",
                    path.text(),
                    bound(m)
                ),
            );
        }
        if let Some(min) = c.minimum {
            let (fails, words) = if c.exclusive_minimum {
                (x <= min, "greater than")
            } else {
                (x < min, "greater than or equal to")
            };
            if fails {
                errs.invalid(
                    path.field(),
                    Shown(&Value::Number(n.clone())),
                    &format!("{} in body should be {words} {}", path.text(), bound(min)),
                );
            }
        }
        if let Some(max) = c.maximum {
            let (fails, words) = if c.exclusive_maximum {
                (x >= max, "less than")
            } else {
                (x > max, "less than or equal to")
            };
            if fails {
                errs.invalid(
                    path.field(),
                    Shown(&Value::Number(n.clone())),
                    &format!("{} in body should be {words} {}", path.text(), bound(max)),
                );
            }
        }
    }

    fn validate_list(
        &self,
        items: &[Value],
        old: Option<&Value>,
        path: &Path,
        errs: &mut FieldErrors,
    ) {
        let c = &self.checks;
        if let Some(schema) = &self.items {
            let old_items = old.and_then(Value::as_array);
            for (i, item) in items.iter().enumerate() {
                let o = old_items.and_then(|olds| self.correlated_item(item, olds));
                schema.validate(item, o, &path.index(i), errs);
            }
        }
        let count = items.len() as u64;
        if let Some(min) = c.min_items.filter(|min| count < *min) {
            errs.invalid(
                path.field(),
                count,
                &format!("{} in body should have at least {min} items", path.text()),
            );
        }
        if let Some(max) = c.max_items.filter(|max| count > *max) {
            errs.too_many(
                path.field(),
                items.len(),
                usize::try_from(max).unwrap_or(usize::MAX),
            );
        }
        match c.list_type.as_deref() {
            Some("set") => {
                for (i, item) in items.iter().enumerate() {
                    let first = items.iter().position(|other| other == item);
                    let reported = items[..i].iter().filter(|o| *o == item).count() == 1;
                    if first != Some(i) && reported {
                        errs.duplicate(path.index(i).field(), Shown(item));
                    }
                }
            }
            Some("map") => {
                let key_of = |item: &Value| -> Option<Vec<(String, Value)>> {
                    let map = item.as_object()?;
                    Some(
                        c.list_map_keys
                            .iter()
                            .filter_map(|k| map.get(k).map(|v| (k.clone(), v.clone())))
                            .collect(),
                    )
                };
                let keys: Vec<Option<Vec<(String, Value)>>> = items.iter().map(key_of).collect();
                for (i, key) in keys.iter().enumerate() {
                    let Some(key) = key else {
                        if !items[i].is_null() {
                            errs.invalid(
                                path.index(i).field(),
                                Shown(&items[i]),
                                "must be an object for an array of list-type map",
                            );
                        }
                        continue;
                    };
                    let seen = keys[..i].iter().filter(|k| k.as_ref() == Some(key)).count();
                    if seen == 1 {
                        errs.duplicate(path.index(i).field(), GoMap(key));
                    }
                }
            }
            _ => {}
        }
    }

    /// The stored item an item of this list pairs with: the one of the
    /// same keys in a map list; the items of sets and atomic lists pair
    /// with nothing (upstream's CorrelatedObject), so their checks are not
    /// ratcheted.
    fn correlated_item<'a>(&self, item: &Value, olds: &'a [Value]) -> Option<&'a Value> {
        let keys = &self.checks.list_map_keys;
        match self.checks.list_type.as_deref() {
            Some("map") if !keys.is_empty() => olds
                .iter()
                .find(|o| keys.iter().all(|k| o.get(k) == item.get(k))),
            _ => None,
        }
    }

    fn validate_map(
        &self,
        map: &Map<String, Value>,
        old: Option<&Value>,
        path: &Path,
        errs: &mut FieldErrors,
    ) {
        let c = &self.checks;
        let count = map.len() as u64;
        if let Some(min) = c.min_properties.filter(|min| count < *min) {
            errs.invalid(
                path.field(),
                count,
                &format!(
                    "{} in body should have at least {min} properties",
                    path.text()
                ),
            );
        }
        if let Some(max) = c.max_properties.filter(|max| count > *max) {
            errs.too_many(
                path.field(),
                map.len(),
                usize::try_from(max).unwrap_or(usize::MAX),
            );
        }
        if let Some(values) = &self.additional {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            for key in keys {
                let o = old.and_then(|o| o.get(key));
                values.validate(&map[key], o, &path.child(key), errs);
            }
        }
        for (key, property) in &self.properties {
            if path.is_root() && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if let Some(value) = map.get(key) {
                property.validate(value, old.and_then(|o| o.get(key)), &path.child(key), errs);
            }
        }
        for key in &c.required {
            if path.is_root() && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if !map.contains_key(key) {
                errs.required(path.child(key).field(), "");
            }
        }
    }

    /// Removes from the top level of a custom object (without `apiVersion`,
    /// `kind` and `metadata`) what the schema does not name, recording each
    /// removed field's path (`spec.bogus`, `extra`) in `unknown`.
    pub fn prune_root(&self, object: &mut Map<String, Value>, unknown: &mut Vec<String>) {
        self.prune_map(object, "", unknown);
    }

    fn prune_map(&self, map: &mut Map<String, Value>, path: &str, unknown: &mut Vec<String>) {
        let join = |key: &str| {
            if path.is_empty() {
                key.to_owned()
            } else {
                format!("{path}.{key}")
            }
        };
        let mut removed = Vec::new();
        for (key, value) in map.iter_mut() {
            if path.is_empty() && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            if self.embedded && matches!(key.as_str(), "apiVersion" | "kind") {
                continue;
            }
            if self.embedded && key == "metadata" {
                // An embedded object's metadata keeps what ObjectMeta has.
                if let Value::Object(meta) = value {
                    let path = join(key);
                    meta.retain(|field, _| {
                        let known = OBJECT_META_FIELDS.contains(&field.as_str());
                        if !known {
                            unknown.push(format!("{path}.{field}"));
                        }
                        known
                    });
                }
                continue;
            }
            if let Some(property) = self.properties.get(key) {
                property.prune(value, &join(key), unknown);
            } else if let Some(values) = &self.additional {
                values.prune(value, &join(key), unknown);
            } else if !self.preserve_unknown {
                removed.push(key.clone());
                unknown.push(join(key));
            }
        }
        for key in removed {
            map.shift_remove(&key);
        }
    }

    fn prune(&self, value: &mut Value, path: &str, unknown: &mut Vec<String>) {
        match value {
            Value::Object(map) => self.prune_map(map, path, unknown),
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for (i, item) in items.iter_mut().enumerate() {
                        schema.prune(item, &format!("{path}[{i}]"), unknown);
                    }
                }
            }
            _ => {}
        }
    }

    /// Fills in the schema's defaults where the object leaves a field out
    /// (or sets it to `null` where the field is not nullable), top down.
    pub fn default_root(&self, object: &mut Map<String, Value>) {
        self.default_map(object);
    }

    fn default_map(&self, map: &mut Map<String, Value>) {
        for (key, property) in &self.properties {
            match map.get_mut(key) {
                None => {
                    if let Some(default) = &property.default {
                        map.insert(key.clone(), default.clone());
                    }
                }
                Some(Value::Null) if !property.nullable => {
                    if let Some(default) = &property.default {
                        map.insert(key.clone(), default.clone());
                    }
                }
                Some(_) => {}
            }
            if let Some(value) = map.get_mut(key) {
                property.default_value(value);
            }
        }
        if let Some(values) = &self.additional {
            for value in map.values_mut() {
                values.default_value(value);
            }
        }
    }

    fn default_value(&self, value: &mut Value) {
        match value {
            Value::Object(map) => self.default_map(map),
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for item in items {
                        schema.default_value(item);
                    }
                }
            }
            _ => {}
        }
    }
}

impl Checks {
    fn of(schema: &Map<String, Value>) -> Checks {
        let number = |key: &str| schema.get(key).and_then(Value::as_f64);
        let count = |key: &str| schema.get(key).and_then(Value::as_u64);
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool).unwrap_or(false);
        let texts = |key: &str| -> Vec<String> {
            schema
                .get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let type_ = if flag("x-kubernetes-int-or-string") {
            Some("integer,string".to_owned())
        } else {
            schema
                .get("type")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        Checks {
            type_,
            format: schema
                .get("format")
                .and_then(Value::as_str)
                .filter(|f| checked_format(f))
                .map(str::to_owned),
            enum_: schema.get("enum").and_then(Value::as_array).cloned(),
            minimum: number("minimum"),
            maximum: number("maximum"),
            exclusive_minimum: flag("exclusiveMinimum"),
            exclusive_maximum: flag("exclusiveMaximum"),
            multiple_of: number("multipleOf"),
            min_length: count("minLength"),
            max_length: count("maxLength"),
            pattern: schema
                .get("pattern")
                .and_then(Value::as_str)
                .map(|p| (p.to_owned(), regex::Regex::new(p).ok())),
            min_items: count("minItems"),
            max_items: count("maxItems"),
            min_properties: count("minProperties"),
            max_properties: count("maxProperties"),
            required: texts("required"),
            list_type: schema
                .get("x-kubernetes-list-type")
                .and_then(Value::as_str)
                .map(str::to_owned),
            list_map_keys: texts("x-kubernetes-list-map-keys"),
            has_rules: schema
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .is_some_and(|rules| !rules.is_empty()),
        }
    }
}

/// The fields of ObjectMeta, all an embedded object's metadata keeps.
const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// The checks of an embedded object (`x-kubernetes-embedded-resource`) at
/// `path`, as upstream makes them: `apiVersion` and `kind` set and well
/// formed, `metadata` an object with valid labels and annotations.
fn validate_embedded(map: &Map<String, Value>, path: &Path, errs: &mut FieldErrors) {
    use kapi_runtime::validation::{
        dns1035_label_errors, label_value_errors, qualified_name_errors,
    };
    for key in ["apiVersion", "kind"] {
        if !map.contains_key(key) {
            errs.required(path.child(key).field(), "must not be empty");
        }
    }
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_unstable();
    for key in keys {
        let value = &map[key];
        let at = path.child(key);
        match key.as_str() {
            "apiVersion" | "kind" => {
                let Some(text) = value.as_str() else {
                    errs.invalid(at.field(), Shown(value), "must be a string");
                    continue;
                };
                if text.is_empty() {
                    errs.invalid(at.field(), text, "must not be empty");
                } else if key == "apiVersion" && text.split('/').count() > 2 {
                    errs.invalid(
                        at.field(),
                        text,
                        &format!("unexpected GroupVersion string: {text}"),
                    );
                } else if key == "kind" {
                    let problems = dns1035_label_errors(&text.to_lowercase());
                    if !problems.is_empty() {
                        errs.invalid(
                            at.field(),
                            text,
                            &format!(
                                "may have mixed case, but should otherwise match: {}",
                                problems.join(",")
                            ),
                        );
                    }
                }
            }
            "metadata" => {
                let Some(meta) = value.as_object() else {
                    errs.invalid(at.field(), Shown(value), "must be an object");
                    continue;
                };
                for (label, v) in meta
                    .get("labels")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    for detail in qualified_name_errors(label) {
                        errs.invalid(at.child("labels").field(), label.as_str(), &detail);
                    }
                    if let Some(v) = v.as_str() {
                        for detail in label_value_errors(v) {
                            errs.invalid(at.child("labels").field(), v, &detail);
                        }
                    }
                }
                for annotation in meta
                    .get("annotations")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flat_map(|a| a.keys())
                {
                    for detail in qualified_name_errors(&annotation.to_lowercase()) {
                        errs.invalid(
                            at.child("annotations").field(),
                            annotation.as_str(),
                            &detail,
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether a schema error keeps the CEL rules from running (a value of the
/// wrong type, missing or too large could make them fail for no reason).
fn blocks(e: &kapi_runtime::validation::FieldError) -> bool {
    matches!(
        e.kind,
        FieldErrorKind::NotSupported
            | FieldErrorKind::Required
            | FieldErrorKind::TooLong
            | FieldErrorKind::TooMany
            | FieldErrorKind::TypeInvalid
    )
}

/// Whether `errs` hold an error that keeps the CEL rules from running.
pub fn blocks_rules(errs: &FieldErrors) -> bool {
    errs.0.iter().any(blocks)
}

/// A field path as validation builds it, and as its messages print it
/// (`spec.size`, `spec.items[0].name`; the root prints as nothing).
#[derive(Clone, Debug)]
struct Path(String);

impl Path {
    fn root() -> Path {
        Path(String::new())
    }

    fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    fn child(&self, key: &str) -> Path {
        if self.0.is_empty() {
            Path(key.to_owned())
        } else {
            Path(format!("{}.{key}", self.0))
        }
    }

    fn index(&self, i: usize) -> Path {
        Path(format!("{}[{i}]", self.0))
    }

    fn key(&self, key: &str) -> Path {
        Path(format!("{}[{key}]", self.0))
    }

    fn text(&self) -> &str {
        &self.0
    }

    fn field(&self) -> FieldPath {
        if self.0.is_empty() {
            FieldPath::new("<nil>")
        } else {
            FieldPath::new(&self.0)
        }
    }
}

/// Whether `value` is of the OpenAPI type `type_` (a whole number is an
/// integer, any number a number).
fn has_type(value: &Value, type_: &str) -> bool {
    match type_ {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

/// The OpenAPI type name of a value, as upstream's messages give it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
    }
}

/// The formats kube-apiserver checks (the others, such as `int32`, are
/// accepted as they are).
fn checked_format(format: &str) -> bool {
    matches!(
        format.replace('-', "").as_str(),
        "uuid"
            | "uuid3"
            | "uuid4"
            | "uuid5"
            | "byte"
            | "date"
            | "datetime"
            | "ipv4"
            | "ipv6"
            | "cidr"
            | "mac"
            | "duration"
            | "hostname"
            | "email"
    )
}

/// Whether `text` is in `format` (one of [`checked_format`]).
fn format_holds(format: &str, text: &str) -> bool {
    use base64::Engine as _;
    match format.replace('-', "").as_str() {
        "uuid" | "uuid3" | "uuid4" | "uuid5" => uuid::Uuid::try_parse(text).is_ok(),
        "byte" => base64::engine::general_purpose::STANDARD
            .decode(text)
            .is_ok(),
        "date" => text.parse::<jiff::civil::Date>().is_ok() && text.len() == 10,
        "datetime" => text.parse::<jiff::Timestamp>().is_ok(),
        "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => text.split_once('/').is_some_and(|(ip, bits)| {
            ip.parse::<std::net::IpAddr>().is_ok() && bits.parse::<u8>().is_ok()
        }),
        "mac" => {
            let parts: Vec<&str> = text.split([':', '-']).collect();
            matches!(parts.len(), 6 | 8 | 20)
                && parts
                    .iter()
                    .all(|p| p.len() == 2 && u8::from_str_radix(p, 16).is_ok())
        }
        "duration" => crate::go_duration::parse(text).is_ok(),
        "hostname" => {
            !text.is_empty()
                && text.len() <= 253
                && text.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                })
        }
        "email" => text.split_once('@').is_some_and(|(user, host)| {
            !user.is_empty() && host.contains('.') && !host.starts_with('.')
        }),
        _ => true,
    }
}

/// A JSON value printed as Go prints a field error's value: strings quoted,
/// numbers and booleans bare.
struct Shown<'a>(&'a Value);

impl fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::String(s) => write!(f, "{s:?}"),
            Value::Number(n) => write!(f, "{n}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Null => f.write_str("\"null\""),
            other => write!(f, "{other}"),
        }
    }
}

/// The keys of a list-map item, printed as Go's `%#v` prints a
/// `map[string]interface{}`.
struct GoMap<'a>(&'a [(String, Value)]);

impl fmt::Debug for GoMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut keys: Vec<&(String, Value)> = self.0.iter().collect();
        keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        f.write_str("map[string]interface {}{")?;
        for (i, (k, v)) in keys.into_iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{k:?}:{v}")?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn widget_schema() -> Structural {
        Structural::of(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer"},
                    "color": {"type": "string", "default": "red"},
                    "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "ports": {"type": "array", "items": {"type": "object", "properties": {
                        "port": {"type": "integer"}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                }},
                "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
            }
        }))
    }

    #[test]
    fn pruning_names_each_removed_field() {
        let mut object = json!({
            "spec": {"size": 1, "bogus": true, "config": {"any": {"thing": 1}},
                     "ports": [{"port": 1, "name": "x"}], "labels": {"a": "b"}},
            "extra": 1
        });
        let mut unknown = Vec::new();
        widget_schema().prune_root(object.as_object_mut().unwrap(), &mut unknown);
        assert_eq!(unknown, ["spec.bogus", "spec.ports[0].name", "extra"]);
        assert_eq!(
            object,
            json!({"spec": {"size": 1, "config": {"any": {"thing": 1}},
                            "ports": [{"port": 1}], "labels": {"a": "b"}}})
        );
    }

    #[test]
    fn defaults_fill_absent_and_null_fields() {
        let schema = widget_schema();
        for given in [json!({"spec": {}}), json!({"spec": {"color": null}})] {
            let mut object = given;
            schema.default_root(object.as_object_mut().unwrap());
            assert_eq!(object, json!({"spec": {"color": "red"}}));
        }
        let mut object = json!({"spec": {"color": "blue"}});
        schema.default_root(object.as_object_mut().unwrap());
        assert_eq!(object, json!({"spec": {"color": "blue"}}));
    }
}

#[cfg(test)]
mod recorded {
    //! The validation messages kube-apiserver 1.32 gave for the same
    //! objects (`tests/fixtures/crd/`, recorded with `capture.py`).

    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/../tests/fixtures/crd/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap()
    }

    /// The widget schema of the recorded CRD, as created in fixture 001.
    fn widget_schema() -> Structural {
        let crd = fixture("001-create-crd-widgets");
        Structural::of(&crd["request"]["body"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    }

    #[test]
    fn schema_errors_are_worded_as_kube_apiserver_words_them() {
        let schema = widget_schema();
        let cases = [
            "026-create-widget-size-0",
            "027-create-widget-size-11",
            "028-create-widget-color-purple",
            "029-create-widget-name-uppercase-too-long",
            "030-create-widget-name-uppercase",
            "032-create-widget-size-wrong-type",
            "036-create-widget-port-wrong-type",
            "037-create-widget-tags-duplicate-set",
            "071-patch-merge-invalid-size",
        ];
        for case in cases {
            let recorded = fixture(case);
            let status = &recorded["response"]["body"];
            let message = status["message"].as_str().unwrap();
            let (_, expected) = message.split_once(" is invalid: ").unwrap();
            let mut body = match recorded["request"]["body"].clone() {
                // A patch: its spec applied to a valid object.
                patch if case.starts_with("071") => {
                    let mut object = json!({"spec": {"size": 3}});
                    json_patch::merge(&mut object, &patch);
                    object
                }
                body => body,
            };
            let content = body.as_object_mut().unwrap();
            for key in ["apiVersion", "kind", "metadata"] {
                content.shift_remove(key);
            }
            schema.default_root(content);
            let mut errs = FieldErrors::default();
            schema.validate_root(content, None, &mut errs);
            assert_eq!(errs.summary(), expected, "{case}");
            let reasons: Vec<&str> = errs.0.iter().map(|e| e.kind.reason()).collect();
            let recorded_reasons: Vec<&str> = status["details"]["causes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["reason"].as_str().unwrap())
                .collect();
            assert_eq!(reasons, recorded_reasons, "{case}");
        }
    }

    #[test]
    fn valid_objects_pass() {
        let schema = widget_schema();
        for case in [
            "025-create-widget-valid-defaulted-color",
            "035-create-widget-port-int",
        ] {
            let mut body = fixture(case)["request"]["body"].clone();
            let content = body.as_object_mut().unwrap();
            for key in ["apiVersion", "kind", "metadata"] {
                content.shift_remove(key);
            }
            schema.default_root(content);
            let mut errs = FieldErrors::default();
            schema.validate_root(content, None, &mut errs);
            assert!(errs.is_empty(), "{case}: {}", errs.summary());
        }
    }

    #[test]
    fn list_maps_report_duplicate_keys_as_go_prints_them() {
        let schema = Structural::of(&json!({
            "type": "object",
            "properties": {"ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {
                    "name": {"type": "string"}, "port": {"type": "integer"}}}
            }}
        }));
        let object = json!({"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]});
        let mut errs = FieldErrors::default();
        schema.validate_root(object.as_object().unwrap(), None, &mut errs);
        assert_eq!(
            errs.summary(),
            r#"ports[1]: Duplicate value: map[string]interface {}{"name":"a"}"#
        );
    }

    #[test]
    fn required_fields_and_nulls() {
        let schema = Structural::of(&json!({
            "type": "object",
            "required": ["spec"],
            "properties": {"spec": {"type": "object", "required": ["size"],
                "properties": {"size": {"type": "integer"}, "note": {"type": "string", "nullable": true}}}}
        }));
        let mut errs = FieldErrors::default();
        schema.validate_root(json!({}).as_object().unwrap(), None, &mut errs);
        assert_eq!(errs.summary(), "spec: Required value");
        let mut errs = FieldErrors::default();
        schema.validate_root(
            json!({"spec": {"size": null, "note": null}})
                .as_object()
                .unwrap(),
            None,
            &mut errs,
        );
        assert_eq!(
            errs.summary(),
            r#"spec.size: Invalid value: "null": spec.size in body must be of type integer: "null""#
        );
    }
}
