//! Kubernetes label selectors: the text form accepted by `labels.Parse` in
//! k8s.io/apimachinery/pkg/labels (the `labelSelector` list/watch parameter), and the
//! structured meta/v1 `LabelSelector` (`metav1.LabelSelectorAsSelector`).
//!
//! Grammar, error texts and matching follow upstream, so clients see what kube-apiserver
//! would tell them:
//!
//! ```text
//! <selector>    ::= <requirement> | <requirement> "," <selector>
//! <requirement> ::= [!] KEY [ ("in" | "notin") "(" VALUE {"," VALUE} ")"
//!                           | ("=" | "==" | "!=" | ">" | "<") VALUE ]
//! ```

mod parse;
#[cfg(test)]
mod tests;
mod validate;

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use self::parse::Parser;
use self::validate::{aggregate, field_error, invalid, json_list, key_errors, value_errors};

/// A parsed label selector: the AND of its requirements, sorted by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
    /// Upstream `labels.Nothing()`, what a `null` structured selector means.
    nothing: bool,
}

impl LabelSelector {
    /// Parses the text form; an empty or blank text selects everything.
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        let mut parser = Parser::new(text);
        Ok(Self::sorted(parser.parse_requirements()?))
    }

    /// The selector that matches every object.
    pub fn everything() -> LabelSelector {
        LabelSelector::default()
    }

    /// The selector that matches no object (upstream `labels.Nothing()`).
    pub fn nothing() -> LabelSelector {
        LabelSelector {
            requirements: Vec::new(),
            nothing: true,
        }
    }

    /// True when the selector does not restrict anything (upstream `Empty()`).
    pub fn is_everything(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }

    /// The labels a matching object must hold, each with one of the values
    /// given: the `=`, `==` and `in` requirements (what an index can look up).
    pub fn required_values(&self) -> impl Iterator<Item = (&str, &[String])> {
        let required = |r: &&Requirement| {
            matches!(
                r.operator,
                Operator::Equals | Operator::DoubleEquals | Operator::In
            )
        };
        let requirements = if self.nothing {
            &[][..]
        } else {
            &self.requirements[..]
        };
        requirements
            .iter()
            .filter(required)
            .map(|r| (r.key.as_str(), r.values.as_slice()))
    }

    /// True when every requirement holds for `labels` (`None`: the object has no labels).
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        self.matches_by(|key| labels?.get(key).map(String::as_str))
    }

    /// True when every requirement holds for the labels `label` looks up.
    pub fn matches_by<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(label(&r.key)))
    }

    /// From a structured meta/v1 `LabelSelector` given as JSON
    /// (`{matchLabels, matchExpressions}`), for deployments etc.
    ///
    /// As upstream `LabelSelectorAsSelector`: `null` selects nothing, `{}` selects
    /// everything, and requirement errors are those of `labels.NewRequirement`.
    pub fn from_json(selector: &Value) -> Result<LabelSelector, String> {
        match selector {
            Value::Null => return Ok(Self::nothing()),
            Value::Object(_) => {}
            _ => return Err("a label selector must be a JSON object".to_string()),
        }
        let mut requirements = Vec::new();
        let labels = member(selector, "matchLabels", Value::as_object, "an object")?;
        for (key, value) in labels.into_iter().flatten() {
            let value = value
                .as_str()
                .ok_or_else(|| format!("matchLabels.{key} must be a string"))?;
            let requirement = Requirement::new(key, Operator::Equals, vec![value.to_string()])?;
            requirements.push(requirement);
        }
        let expressions = member(selector, "matchExpressions", Value::as_array, "an array")?;
        for expression in expressions.into_iter().flatten() {
            requirements.push(expression_requirement(expression)?);
        }
        Ok(Self::sorted(requirements))
    }

    /// [`LabelSelector::from_json`] of a typed meta/v1 `LabelSelector`
    /// (`None` selects nothing).
    pub fn from_meta(
        selector: Option<&kapi_runtime::meta::LabelSelector>,
    ) -> Result<LabelSelector, String> {
        let Some(selector) = selector else {
            return Ok(Self::nothing());
        };
        let mut requirements = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            let requirement = Requirement::new(key, Operator::Equals, vec![value.clone()])?;
            requirements.push(requirement);
        }
        for expression in selector.match_expressions.iter().flatten() {
            let operator = match expression.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => return Err(format!("{other:?} is not a valid label selector operator")),
            };
            let values = expression.values.clone().unwrap_or_default();
            requirements.push(Requirement::new(&expression.key, operator, values)?);
        }
        Ok(Self::sorted(requirements))
    }

    fn sorted(mut requirements: Vec<Requirement>) -> LabelSelector {
        // Upstream sorts by key so that the text form is deterministic.
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        LabelSelector {
            requirements,
            nothing: false,
        }
    }
}

/// The canonical text form, as upstream `String()`: requirements joined by ",".
impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, requirement) in self.requirements.iter().enumerate() {
            let separator = if i == 0 { "" } else { "," };
            write!(f, "{separator}{requirement}")?;
        }
        Ok(())
    }
}

/// Upstream `selection.Operator`, as far as label selectors use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Exists,
    DoesNotExist,
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
}

impl Operator {
    /// A binary operator as written in the text form (`in`/`notin` only in this position).
    fn from_token(token: &str) -> Result<Operator, String> {
        Ok(match token {
            "in" => Operator::In,
            "notin" => Operator::NotIn,
            "=" => Operator::Equals,
            "==" => Operator::DoubleEquals,
            "!=" => Operator::NotEquals,
            ">" => Operator::GreaterThan,
            "<" => Operator::LessThan,
            _ => {
                return Err(format!(
                    "found '{token}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        })
    }

    /// How upstream `String()` prints the operator between key and values.
    fn text(self) -> &'static str {
        match self {
            Operator::Exists | Operator::DoesNotExist => "",
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in ",
            Operator::NotIn => " notin ",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    operator: Operator,
    values: Vec<String>,
}

impl Requirement {
    /// Upstream `labels.NewRequirement`: checks the key, the number of values for the
    /// operator and every value, and reports all problems at once.
    fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Requirement, String> {
        let mut errors: Vec<String> = field_error("key", key, &key_errors(key))
            .into_iter()
            .collect();
        errors.extend(arity_errors(operator, &values));
        errors.extend(values.iter().enumerate().filter_map(|(i, value)| {
            field_error(&format!("values[{i}][{key}]"), value, &value_errors(value))
        }));
        if !errors.is_empty() {
            return Err(aggregate(errors));
        }
        let key = key.to_string();
        Ok(Requirement {
            key,
            operator,
            values,
        })
    }

    /// Whether the requirement holds for its label's `value`.
    fn matches(&self, value: Option<&str>) -> bool {
        let listed = |v: &str| self.values.iter().any(|listed| listed == v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => value.is_some_and(listed),
            // A missing label satisfies `!=` and `notin`, as upstream.
            Operator::NotIn | Operator::NotEquals => !value.is_some_and(listed),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => self.compare(value),
        }
    }

    /// `>` and `<`: both sides must be base-10 64-bit integers, otherwise no match.
    fn compare(&self, value: Option<&str>) -> bool {
        let (Some(Ok(actual)), [bound]) = (value.map(|v| v.parse::<i64>()), &self.values[..])
        else {
            return false;
        };
        let Ok(bound) = bound.parse::<i64>() else {
            return false;
        };
        match self.operator {
            Operator::GreaterThan => actual > bound,
            _ => actual < bound,
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let not = if self.operator == Operator::DoesNotExist {
            "!"
        } else {
            ""
        };
        write!(f, "{not}{}{}", self.key, self.operator.text())?;
        if matches!(self.operator, Operator::Exists | Operator::DoesNotExist) {
            return Ok(());
        }
        // Values print sorted without changing the stored order (upstream `safeSort`).
        let mut values: Vec<&str> = self.values.iter().map(String::as_str).collect();
        values.sort_unstable();
        match self.operator {
            Operator::In | Operator::NotIn => write!(f, "({})", values.join(",")),
            _ => f.write_str(&values.join(",")),
        }
    }
}

/// The value-count rules of upstream `NewRequirement`, with its messages.
fn arity_errors(operator: Operator, values: &[String]) -> Vec<String> {
    let (count_ok, detail) = match operator {
        Operator::In | Operator::NotIn => (
            !values.is_empty(),
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        Operator::Equals | Operator::DoubleEquals | Operator::NotEquals => (
            values.len() == 1,
            "exact-match compatibility requires one single value",
        ),
        Operator::Exists | Operator::DoesNotExist => (
            values.is_empty(),
            "values set must be empty for exists and does not exist",
        ),
        Operator::GreaterThan | Operator::LessThan => (
            values.len() == 1,
            "for 'Gt', 'Lt' operators, exactly one value is required",
        ),
    };
    let mut errors = Vec::new();
    if !count_ok {
        errors.push(invalid("values", &json_list(values), detail));
    }
    let numeric = matches!(operator, Operator::GreaterThan | Operator::LessThan);
    for (i, value) in values.iter().enumerate() {
        if numeric && value.parse::<i64>().is_err() {
            let detail = "for 'Gt', 'Lt' operators, the value must be an integer";
            errors.push(invalid(
                &format!("values[{i}]"),
                &format!("{value:?}"),
                detail,
            ));
        }
    }
    errors
}

/// One `matchExpressions` entry: `{key, operator, values}`.
fn expression_requirement(expression: &Value) -> Result<Requirement, String> {
    if !expression.is_object() {
        return Err("matchExpressions entries must be JSON objects".to_string());
    }
    let text = |name| member(expression, name, Value::as_str, "a string");
    let operator = match text("operator")?.unwrap_or_default() {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        other => return Err(format!("{other:?} is not a valid label selector operator")),
    };
    let values = member(expression, "values", Value::as_array, "an array")?;
    let values = values.into_iter().flatten().map(|value| {
        let value = value.as_str().ok_or("values must be strings");
        value.map(str::to_string)
    });
    let values = values.collect::<Result<Vec<_>, _>>()?;
    Requirement::new(text("key")?.unwrap_or_default(), operator, values)
}

/// `object[name]` cast by `cast`; missing and `null` both mean absent, as in Go's decoding.
fn member<'v, T>(
    object: &'v Value,
    name: &str,
    cast: impl Fn(&'v Value) -> Option<T>,
    kind: &str,
) -> Result<Option<T>, String> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => cast(value)
            .map(Some)
            .ok_or_else(|| format!("{name} must be {kind}")),
    }
}
