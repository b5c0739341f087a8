//! The checks of a CustomResourceDefinition's CEL rules when it is
//! written, as kube-apiserver's apiextensions validation makes them: every
//! rule and message expression compiles and type-checks against its
//! node's schema, transition rules sit where an old value can be found,
//! `reason`, `fieldPath` and `optionalOldSelf` are well formed, and the
//! estimated cost of each rule, and of all of them together, is within
//! budget.

use std::fmt;

use kapi_runtime::validation::{FieldErrors, FieldPath};
use serde_json::Value;

use super::{
    Costs, ESTIMATED_RULE_LIMIT, ESTIMATED_SCHEMA_LIMIT, NodeRules, PathSegment, RuleError,
    parse_field_path,
};

/// A rule estimated to cost less than this share of the schema's budget is
/// not named among those that make a total over budget.
const NOTABLE_COST: u64 = ESTIMATED_SCHEMA_LIMIT / 100;
use crate::custom::cel::types::{MAX_REQUEST_BYTES, Ty, min_serialized};

/// Checks the rules of every schema of the definition `crd` (its JSON).
pub fn validate(crd: &Value, errs: &mut FieldErrors) {
    let versions = crd["spec"]["versions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let schemas: Vec<Option<&Value>> = versions
        .iter()
        .map(|v| v.get("schema").and_then(|s| s.get("openAPIV3Schema")))
        .collect();
    // A schema shared by every version is the definition's own, as the
    // internal version upstream validates names it.
    let shared = !schemas.is_empty() && schemas.windows(2).all(|w| w[0] == w[1]);
    if shared {
        if let Some(schema) = schemas[0] {
            validate_schema(
                schema,
                FieldPath::new("spec.validation.openAPIV3Schema"),
                errs,
            );
        }
        return;
    }
    for (i, schema) in schemas.iter().enumerate() {
        if let Some(schema) = schema {
            let path = FieldPath::new("spec.versions")
                .index(i)
                .child("schema")
                .child("openAPIV3Schema");
            validate_schema(schema, path, errs);
        }
    }
}

fn validate_schema(schema: &Value, path: FieldPath, errs: &mut FieldErrors) {
    let mut walk = Walk {
        total: 0,
        costliest: Vec::new(),
        errs,
    };
    walk.node(schema, &path, true, Some(1), None);
    if walk.total > ESTIMATED_SCHEMA_LIMIT {
        let total = walk.total;
        for (at, _) in walk.costliest {
            errs.forbidden(
                at,
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            );
        }
        errs.forbidden(
            path,
            &cost_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total,
                ESTIMATED_SCHEMA_LIMIT,
            ),
        );
    }
}

struct Walk<'a> {
    /// The estimated cost of every rule, times how many values each runs on.
    total: u64,
    /// The four costliest expressions (of at least [`NOTABLE_COST`]), most
    /// costly first.
    costliest: Vec<(FieldPath, u64)>,
    errs: &'a mut FieldErrors,
}

impl Walk<'_> {
    /// Checks the rules of `node` at `path` and below. `cardinality` is how
    /// many values of the node one object can hold, as the limits of the
    /// lists and maps above it tell (`None` when one of them has no limit);
    /// `uncorrelatable` names
    /// the list above the node whose items an update cannot pair with the
    /// stored ones.
    fn node(
        &mut self,
        node: &Value,
        path: &FieldPath,
        root: bool,
        cardinality: Option<u64>,
        uncorrelatable: Option<&FieldPath>,
    ) {
        if let Some(rules) = node
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
        {
            let (_, results) = NodeRules::compile(node, root);
            let ty = if root {
                Ty::of_root(node)
            } else {
                Ty::of_schema(node)
            };
            // Under a list or map without a limit: as many values as the
            // largest request holds, each with a comma.
            let cardinality = cardinality
                .unwrap_or_else(|| MAX_REQUEST_BYTES / (min_serialized(node).unwrap_or(0) + 1));
            for (i, (rule, result)) in rules.iter().zip(results).enumerate() {
                let at = path.child("x-kubernetes-validations").index(i);
                self.rule(rule, result, &at, &ty, cardinality, uncorrelatable);
            }
        }
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                let at = path.child("properties").key(name);
                self.node(property, &at, false, cardinality, uncorrelatable);
            }
        }
        let limit = |key: &str| {
            let max = node.get(key).and_then(Value::as_i64)?.max(0) as u64;
            cardinality.map(|c| c.saturating_mul(max))
        };
        if let Some(items) = node.get("items").filter(|i| i.is_object()) {
            let at = path.child("items");
            let map_list =
                node.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
            let below = if map_list {
                uncorrelatable
            } else {
                uncorrelatable.or(Some(path))
            };
            self.node(items, &at, false, limit("maxItems"), below);
        }
        if let Some(values) = node.get("additionalProperties").filter(|a| a.is_object()) {
            let at = path.child("additionalProperties");
            self.node(values, &at, false, limit("maxProperties"), uncorrelatable);
        }
    }

    /// Adds an expression's estimated cost (times the values it runs on)
    /// to the schema's total, refusing it when it alone is over budget.
    fn observe(&mut self, at: FieldPath, cost: u64, what: &str) {
        if cost > ESTIMATED_RULE_LIMIT {
            self.errs.forbidden(
                at.clone(),
                &cost_message(
                    &format!("estimated {what} cost"),
                    cost,
                    ESTIMATED_RULE_LIMIT,
                ),
            );
        }
        self.total = self.total.saturating_add(cost);
        if cost >= NOTABLE_COST {
            let place = self.costliest.partition_point(|(_, c)| *c >= cost);
            self.costliest.insert(place, (at, cost));
            self.costliest.truncate(4);
        }
    }

    fn rule(
        &mut self,
        rule: &Value,
        result: Result<Costs, RuleError>,
        at: &FieldPath,
        ty: &Ty,
        cardinality: u64,
        uncorrelatable: Option<&FieldPath>,
    ) {
        let shown = GoRule(rule);
        match result {
            Err(RuleError::Empty) => self
                .errs
                .required(at.child("rule"), "rule is not specified"),
            Err(RuleError::Rule(detail)) => self.errs.invalid(at.child("rule"), shown, &detail),
            Err(RuleError::MessageExpression(detail)) => {
                self.errs
                    .invalid(at.child("messageExpression"), shown, &detail)
            }
            Ok(costs) => {
                self.observe(
                    at.child("rule"),
                    costs.rule.saturating_mul(cardinality),
                    "rule",
                );
                // A message is estimated once, whatever the cardinality.
                if let Some(cost) = costs.message {
                    self.observe(at.child("messageExpression"), cost, "messageExpression");
                }
                let text = rule.get("rule").and_then(Value::as_str).unwrap_or("");
                let uses_old_self = costs.uses_old_self;
                if uses_old_self && let Some(list) = uncorrelatable {
                    self.errs.invalid(
                        at.child("rule"),
                        text,
                        &format!(
                            "oldSelf cannot be used on the uncorrelatable portion of the schema within {}",
                            list.as_str()
                        ),
                    );
                }
                if rule.get("optionalOldSelf").and_then(Value::as_bool) == Some(true)
                    && !uses_old_self
                {
                    self.errs.invalid(
                        at.child("optionalOldSelf"),
                        true,
                        "may not be set if oldSelf is not used in rule",
                    );
                }
            }
        }
        if let Some(reason) = rule.get("reason").and_then(Value::as_str)
            && !REASONS.contains(&reason)
        {
            self.errs.not_supported(at.child("reason"), reason, REASONS);
        }
        if let Some(field_path) = rule.get("fieldPath").and_then(Value::as_str) {
            match parse_field_path(field_path) {
                None => self.errs.invalid(
                    at.child("fieldPath"),
                    field_path,
                    "fieldPath must be a valid path",
                ),
                Some(segments) if !reaches(ty, &segments) => self.errs.invalid(
                    at.child("fieldPath"),
                    field_path,
                    "fieldPath must be a valid path",
                ),
                Some(_) => {}
            }
        }
    }
}

const REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// Whether `segments` name a field the schema of type `ty` declares.
fn reaches(ty: &Ty, segments: &[PathSegment]) -> bool {
    let Some((first, rest)) = segments.split_first() else {
        return true;
    };
    match (ty, first) {
        (Ty::Object { fields, .. }, PathSegment::Field(name) | PathSegment::Key(name)) => {
            super::types::escape(name)
                .and_then(|escaped| fields.get(&escaped))
                .is_some_and(|field| reaches(field, rest))
        }
        (Ty::Map { value, .. }, PathSegment::Field(_) | PathSegment::Key(_)) => {
            reaches(value, rest)
        }
        (Ty::List { elem, .. }, PathSegment::Index(_)) => reaches(elem, rest),
        (Ty::Dyn, _) => true,
        _ => false,
    }
}

/// Upstream's words for a cost over its limit.
fn cost_message(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// A rule as Go prints the internal `ValidationRule` struct (`%#v`), the
/// value upstream's errors show. Go prints the address of a set pointer
/// field; a fixed one stands in for it.
struct GoRule<'a>(&'a Value);

impl fmt::Debug for GoRule<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = |key: &str| self.0.get(key).and_then(Value::as_str).unwrap_or("");
        let pointer = |key: &str, ty: &str| {
            if self.0.get(key).is_some_and(|v| !v.is_null()) {
                format!("({ty})(0xc000a1b2c0)")
            } else {
                format!("({ty})(nil)")
            }
        };
        write!(
            f,
            "apiextensions.ValidationRule{{Rule:{:?}, Message:{:?}, MessageExpression:{:?}, Reason:{}, FieldPath:{:?}, OptionalOldSelf:{}}}",
            text("rule"),
            text("message"),
            text("messageExpression"),
            pointer("reason", "*apiextensions.FieldValueErrorReason"),
            text("fieldPath"),
            pointer("optionalOldSelf", "*bool"),
        )
    }
}
