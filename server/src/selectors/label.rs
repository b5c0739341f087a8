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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::iter::Peekable;

use serde_json::Value;

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
        let mut parser = Parser {
            tokens: Lexer { text, pos: 0 }.peekable(),
        };
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

    /// True when every requirement holds for `labels` (`None`: the object has no labels).
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
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

    fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        let value = labels.and_then(|labels| labels.get(&self.key));
        let listed = |v: &String| self.values.contains(v);
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
    fn compare(&self, value: Option<&String>) -> bool {
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

// ---- lexer and parser (upstream `Lexer` and `Parser`) ------------------------------

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(byte: u8) -> bool {
    matches!(byte, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// A token is a symbol (`!`, `!=`, `=`, `==`, `>`, `<`, `(`, `)`, `,`) or an
/// identifier; `in` and `notin` are identifiers except in operator position, so
/// `in in (in)` is a valid selector, as upstream.
fn is_identifier(token: &str) -> bool {
    token.bytes().next().is_some_and(|byte| !is_special(byte))
}

fn starts_requirement(token: &str) -> bool {
    token == "!" || is_identifier(token)
}

/// Yields tokens as slices of the text. It works on bytes like upstream; every
/// delimiter is ASCII, so the slices fall on character boundaries.
struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Lexer<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        let mut pos = self.pos;
        while bytes.get(pos).copied().is_some_and(is_whitespace) {
            pos += 1;
        }
        self.pos = pos;
        let start = pos;
        match *bytes.get(pos)? {
            // Upstream's reader reports the end of input as NUL, so a NUL ends the selector...
            0 => return None,
            b if is_special(b) => {
                // The only two-character symbols are `!=` and `==`.
                let pair = matches!(bytes.get(pos..pos + 2), Some(b"!=" | b"=="));
                pos += if pair { 2 } else { 1 };
            }
            _ => {
                let in_identifier = |&b: &u8| b != 0 && !is_special(b) && !is_whitespace(b);
                while bytes.get(pos).is_some_and(in_identifier) {
                    pos += 1;
                }
            }
        }
        // ...and a NUL right after a token is consumed with it.
        self.pos = pos + usize::from(bytes.get(pos) == Some(&0));
        self.text.get(start..pos)
    }
}

/// Recursive descent over the tokens; `""` stands for the end of input.
struct Parser<'a> {
    tokens: Peekable<Lexer<'a>>,
}

impl<'a> Parser<'a> {
    fn peek(&mut self) -> &'a str {
        self.tokens.peek().copied().unwrap_or("")
    }

    fn next(&mut self) -> &'a str {
        self.tokens.next().unwrap_or("")
    }

    fn parse_requirements(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            match self.peek() {
                "" => return Ok(requirements),
                token if !starts_requirement(token) => {
                    return Err(format!(
                        "found '{token}', expected: !, identifier, or 'end of string'"
                    ));
                }
                _ => {}
            }
            let requirement = self.parse_requirement();
            requirements
                .push(requirement.map_err(|e| format!("unable to parse requirement: {e}"))?);
            match self.next() {
                "" => return Ok(requirements),
                "," if starts_requirement(self.peek()) => {}
                "," => {
                    return Err(format!(
                        "found '{}', expected: identifier after ','",
                        self.peek()
                    ));
                }
                token => return Err(format!("found '{token}', expected: ',' or 'end of string'")),
            }
        }
    }

    /// `[!] KEY [operator values]`. After `!KEY` nothing may follow, so the caller
    /// rejects `!a=b` at the `=`, as upstream.
    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let negated = self.peek() == "!";
        if negated {
            self.next();
        }
        let key = self.next();
        if !is_identifier(key) {
            return Err(format!("found '{key}', expected: identifier"));
        }
        // Upstream checks the key here against a nil field path, hence "<nil>".
        if let Some(error) = field_error("<nil>", key, &key_errors(key)) {
            return Err(error);
        }
        let operator = match self.peek() {
            _ if negated => Operator::DoesNotExist,
            "" | "," => Operator::Exists,
            _ => Operator::from_token(self.next())?,
        };
        let values = match operator {
            Operator::Exists | Operator::DoesNotExist => BTreeSet::new(),
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(key, operator, values.into_iter().collect())
    }

    /// `( VALUES )` as a set; `()` is the set holding only the empty value.
    fn parse_values(&mut self) -> Result<BTreeSet<String>, String> {
        let token = self.next();
        if token != "(" {
            return Err(format!("found '{token}' expected: '('"));
        }
        match self.peek() {
            ")" => {
                self.next();
                Ok(BTreeSet::from([String::new()]))
            }
            token if token == "," || is_identifier(token) => self.parse_value_list(),
            token => Err(format!("found '{token}', expected: ',', ')' or identifier")),
        }
    }

    /// Comma-separated values through the closing `)`. A value left out next to a
    /// comma is the empty value (`(a,)`, `(,a)`, `(a,,b)`), as upstream.
    fn parse_value_list(&mut self) -> Result<BTreeSet<String>, String> {
        let mut values = BTreeSet::new();
        loop {
            match self.next() {
                "," => {
                    let after = self.peek();
                    if values.is_empty() || after == ")" || after == "," {
                        values.insert(String::new());
                    }
                    if after == ")" {
                        break;
                    }
                }
                value if is_identifier(value) => {
                    values.insert(value.to_string());
                    match self.peek() {
                        "," => {}
                        ")" => break,
                        token => return Err(format!("found '{token}', expected: ',' or ')'")),
                    }
                }
                token => return Err(format!("found '{token}', expected: ',', or identifier")),
            }
        }
        self.next(); // the ')' seen above
        Ok(values)
    }

    /// The value after `=`, `==`, `!=`, `>` or `<`; it may be empty (`a=`, `a=,b`).
    fn parse_exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        match self.peek() {
            "" | "," => Ok(BTreeSet::from([String::new()])),
            value if is_identifier(value) => {
                self.next();
                Ok(BTreeSet::from([value.to_string()]))
            }
            token => Err(format!("found '{token}', expected: identifier")),
        }
    }
}

// ---- validation (upstream api/validate/content) -------------------------------------

const NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const NAME_EXAMPLES: [&str; 3] = ["MyName", "my.name", "123-abc"];
const VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const SUBDOMAIN_FMT: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// Upstream `IsLabelKey` (a "qualified name"): `[DNS_SUBDOMAIN "/"] NAME`, NAME at most 63 bytes.
fn key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let name = match key.split('/').collect::<Vec<_>>()[..] {
        [name] => name,
        ["", name] => {
            errors.push("prefix part must be non-empty".to_string());
            name
        }
        [prefix, name] => {
            errors.extend(
                subdomain_errors(prefix)
                    .into_iter()
                    .map(|e| format!("prefix part {e}")),
            );
            name
        }
        _ => {
            let regex = regex_error(
                &format!("a valid label key {NAME_MSG}"),
                NAME_FMT,
                &NAME_EXAMPLES,
            );
            let with = "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
            return vec![format!("{regex} {with}")];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 bytes".to_string());
    }
    if !is_name(name) {
        errors.push(format!(
            "name part {}",
            regex_error(NAME_MSG, NAME_FMT, &NAME_EXAMPLES)
        ));
    }
    errors
}

/// Upstream `IsLabelValue`: empty, or a name of at most 63 bytes.
fn value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 bytes".to_string());
    }
    if !value.is_empty() && !is_name(value) {
        errors.push(regex_error(
            VALUE_MSG,
            VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// Upstream `IsDNS1123Subdomain`: dot-separated lowercase DNS labels, at most 253 bytes.
fn subdomain_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 bytes".to_string());
    }
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let inner = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    let is_label =
        |l: &str| edge(l.chars().next()) && edge(l.chars().last()) && l.chars().all(inner);
    if !value.split('.').all(is_label) {
        errors.push(regex_error(SUBDOMAIN_MSG, SUBDOMAIN_FMT, &["example.com"]));
    }
    errors
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
fn is_name(value: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    edge(value.chars().next()) && edge(value.chars().last()) && value.chars().all(inner)
}

/// Upstream `RegexError`, including its double spaces (`'MyName',  or 'my.name', ...`).
fn regex_error(msg: &str, regex: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{regex}')",
        examples.join(" or ")
    )
}

/// A `field.Invalid` error for a string value, if there are problems with it.
fn field_error(path: &str, value: &str, problems: &[String]) -> Option<String> {
    let detail = problems.join("; ");
    (!problems.is_empty()).then(|| invalid(path, &format!("{value:?}"), &detail))
}

/// `field.Invalid(...).Error()`: `<path>: Invalid value: <value>: <detail>`.
fn invalid(path: &str, rendered_value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {rendered_value}: {detail}")
}

/// `ErrorList.ToAggregate().Error()`: duplicates dropped, several errors in brackets.
fn aggregate(mut errors: Vec<String>) -> String {
    let mut seen = BTreeSet::new();
    errors.retain(|e| seen.insert(e.clone()));
    match &errors[..] {
        [single] => single.clone(),
        _ => format!("[{}]", errors.join(", ")),
    }
}

/// A value list as Go's `json.Marshal` prints it in errors (`null` when there are none).
fn json_list(values: &[String]) -> String {
    if values.is_empty() {
        return "null".to_string();
    }
    Value::from(values.to_vec()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NAME_REGEX_ERROR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const VALUE_REGEX_ERROR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn parse(text: &str) -> LabelSelector {
        LabelSelector::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
    }

    fn parse_err(text: &str) -> String {
        match LabelSelector::parse(text) {
            Ok(selector) => panic!("{text:?} should fail, parsed as {selector}"),
            Err(e) => e,
        }
    }

    fn matches(selector: &str, pairs: &[(&str, &str)]) -> bool {
        parse(selector).matches(Some(&labels(pairs)))
    }

    #[test]
    fn empty_and_blank_select_everything() {
        for text in ["", " ", "\t\r\n "] {
            let selector = parse(text);
            assert!(selector.is_everything(), "{text:?}");
            assert!(selector.matches(None));
            assert!(selector.matches(Some(&labels(&[("x", "y")]))));
            assert_eq!(selector.to_string(), "");
            assert_eq!(selector, LabelSelector::everything());
        }
        assert!(!parse("a").is_everything());
    }

    #[test]
    fn upstream_good_strings_round_trip_without_spaces() {
        // k8s.io/apimachinery/pkg/labels TestSelectorParse.
        for text in [
            "x=a,y=b,z=c",
            "x!=a,y=b",
            "x=",
            "x= ",
            "x=,z= ",
            "x= ,z= ",
            "!x",
            "x>1",
            "x>1,z<5",
        ] {
            assert_eq!(parse(text).to_string(), text.replace(' ', ""), "{text:?}");
        }
    }

    #[test]
    fn display_is_canonical() {
        let cases = [
            (
                "x in (abc,def),y notin (jkl),z",
                "x in (abc,def),y notin (jkl),z",
            ),
            (
                "z notin ( def , abc ),y!=jkl,!x",
                "!x,y!=jkl,z notin (abc,def)",
            ),
            ("x==abc", "x==abc"),
            ("x  notin\t\t(abc,def)", "x notin (abc,def)"),
            ("x in (abc,abc)", "x in (abc)"),
            ("x in (a,,a,,a,,a,,)", "x in (,a)"),
            ("x notin ( )", "x notin ()"),
            ("x=a,a=x", "a=x,x=a"),
            ("b,a", "a,b"),
            ("x<7 , y>0", "x<7,y>0"),
        ];
        for (text, canonical) in cases {
            assert_eq!(parse(text).to_string(), canonical, "{text:?}");
            assert_eq!(parse(canonical).to_string(), canonical);
        }
    }

    #[test]
    fn same_key_keeps_written_order() {
        assert_eq!(parse("z!=a,z").to_string(), "z!=a,z");
        assert_eq!(parse("z,z!=a").to_string(), "z,z!=a");
    }

    #[test]
    fn whitespace_is_tolerated_around_tokens() {
        assert_eq!(parse("\rx").to_string(), "x");
        assert_eq!(parse("foo  in\t (abc)").to_string(), "foo in (abc)");
        assert_eq!(parse("x notin\n (abc)").to_string(), "x notin (abc)");
        assert_eq!(
            parse(" a = b , c != d , e == f ").to_string(),
            "a=b,c!=d,e==f"
        );
        assert_eq!(parse("a ").to_string(), "a");
        assert_eq!(parse("! a").to_string(), "!a");
    }

    #[test]
    fn set_values_follow_upstream_empty_value_rules() {
        let values = |text: &str| parse(text).requirements[0].values.clone();
        assert_eq!(values("x in ()"), [""]);
        assert_eq!(values("x in (abc,)"), ["", "abc"]);
        assert_eq!(values("x in (,abc)"), ["", "abc"]);
        assert_eq!(values("x notin (, a)"), ["", "a"]);
        assert_eq!(values("x in (a,,)"), ["", "a"]);
        assert_eq!(values("x notin (abc,,def)"), ["", "abc", "def"]);
        assert_eq!(values("x in (,)"), [""]);
        assert_eq!(values("x in (b,a,b)"), ["a", "b"]);
    }

    #[test]
    fn in_and_notin_are_identifiers_outside_operator_position() {
        assert_eq!(
            parse("a in (x,y,notin, z,in)").to_string(),
            "a in (in,notin,x,y,z)"
        );
        assert_eq!(parse("in in (in)").to_string(), "in in (in)");
        assert_eq!(parse("notin=in").to_string(), "notin=in");
        assert_eq!(parse("in,notin").to_string(), "in,notin");
        assert!(matches("notin=in", &[("notin", "in")]));
    }

    #[test]
    fn qualified_keys_and_dotted_values() {
        let text = "this-is-a-dns.domain.com/key-with-dash";
        assert_eq!(parse(text).to_string(), text);
        let text = "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)";
        assert_eq!(
            parse(text).to_string(),
            "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"
        );
        assert_eq!(
            parse("app.kubernetes.io/name=my_App-1.0").to_string(),
            "app.kubernetes.io/name=my_App-1.0"
        );
        let longest = format!("{}={}", "k".repeat(63), "v".repeat(63));
        assert_eq!(parse(&longest).to_string(), longest);
    }

    #[test]
    fn equality_operators_match() {
        assert!(matches("x=y", &[("x", "y")]));
        assert!(matches("x==y", &[("x", "y")]));
        assert!(matches("x=y,z=w", &[("x", "y"), ("z", "w")]));
        assert!(!matches("x=z", &[]));
        assert!(!matches("x=y", &[("x", "z")]));
        assert!(!matches("x=y,z=w", &[("x", "w"), ("z", "w")]));
        assert!(matches("x=", &[("x", "")]));
        assert!(!matches("x=", &[]));
        assert!(matches("x!=y,z!=w", &[("x", "z"), ("z", "a")]));
        assert!(!matches("x!=y,z!=w", &[("x", "z"), ("z", "w")]));
    }

    #[test]
    fn negative_operators_match_missing_labels() {
        assert!(matches("a!=b", &[]));
        assert!(matches("a notin (b)", &[("other", "b")]));
        assert!(parse("a!=b").matches(None));
        assert!(parse("a notin (b,c)").matches(None));
        assert!(parse("!a").matches(None));
        assert!(!matches("a notin (b,c)", &[("a", "c")]));
        assert!(matches("a notin (b,c)", &[("a", "d")]));
        // `notin ()` excludes only the empty value.
        assert!(matches("a notin ()", &[]));
        assert!(!matches("a notin ()", &[("a", "")]));
        assert!(matches("a notin ()", &[("a", "x")]));
    }

    #[test]
    fn set_and_existence_operators_match() {
        assert!(matches("x in (a,b)", &[("x", "b")]));
        assert!(!matches("x in (a,b)", &[("x", "c")]));
        assert!(!matches("x in (a,b)", &[]));
        assert!(!parse("x in (a)").matches(None));
        assert!(matches("x in ()", &[("x", "")]));
        assert!(!matches("x in ()", &[("y", "baz")]));
        assert!(matches("x", &[("x", "z")]));
        assert!(!matches("x", &[("y", "z")]));
        assert!(!parse("x").matches(None));
        assert!(matches("!x", &[("y", "z")]));
        assert!(!matches("!x", &[("x", "z")]));
        assert!(matches("x notin (),y", &[("y", "")]));
        assert!(!matches("!x,y", &[("x", ""), ("y", "")]));
    }

    #[test]
    fn numeric_operators_match_integers_only() {
        assert!(matches("x>1", &[("x", "2")]));
        assert!(!matches("x>1", &[("x", "1")]));
        assert!(!matches("x>1", &[("x", "0")]));
        assert!(matches("x<1", &[("x", "0")]));
        assert!(matches("x<1", &[("x", "-5")]));
        assert!(!matches("x<1", &[("x", "2")]));
        assert!(!matches("x>1", &[("x", "v2")]));
        assert!(!matches("x>1", &[("x", "")]));
        assert!(!matches("x>1", &[]));
        assert!(!parse("x<1").matches(None));
        assert!(matches("x>01", &[("x", "+2")]));
        assert!(matches("x>1", &[("x", "9223372036854775807")]));
        assert!(!matches("x<1", &[("x", "-9223372036854775809")]));
    }

    #[test]
    fn syntax_errors_match_upstream_messages() {
        let cases = [
            (
                "a in x",
                "unable to parse requirement: found 'x' expected: '('",
            ),
            ("a=b=c", "found '=', expected: ',' or 'end of string'"),
            ("x==a==b", "found '==', expected: ',' or 'end of string'"),
            ("!x=a", "found '=', expected: ',' or 'end of string'"),
            ("!x in (a)", "found 'in', expected: ',' or 'end of string'"),
            ("x,,y", "found ',', expected: identifier after ','"),
            ("x,", "found '', expected: identifier after ','"),
            ("a in (xyz),", "found '', expected: identifier after ','"),
            (
                ",x,y",
                "found ',', expected: !, identifier, or 'end of string'",
            ),
            (
                "(",
                "found '(', expected: !, identifier, or 'end of string'",
            ),
            (
                "=a",
                "found '=', expected: !, identifier, or 'end of string'",
            ),
            (
                "a in (xyz)b notin ()",
                "found 'b', expected: ',' or 'end of string'",
            ),
            (
                "!",
                "unable to parse requirement: found '', expected: identifier",
            ),
            (
                "!!a",
                "unable to parse requirement: found '!', expected: identifier",
            ),
            (
                "x nott in (y)",
                "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "a (",
                "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "a !",
                "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt",
            ),
            (
                "a in (xyz abc)",
                "unable to parse requirement: found 'abc', expected: ',' or ')'",
            ),
            (
                "a notin(",
                "unable to parse requirement: found '', expected: ',', ')' or identifier",
            ),
            (
                "a in (=)",
                "unable to parse requirement: found '=', expected: ',', ')' or identifier",
            ),
            (
                "a in (x,=)",
                "unable to parse requirement: found '=', expected: ',', or identifier",
            ),
            (
                "a in (x,",
                "unable to parse requirement: found '', expected: ',', or identifier",
            ),
            (
                "a in (x",
                "unable to parse requirement: found '', expected: ',' or ')'",
            ),
            (
                "a=(",
                "unable to parse requirement: found '(', expected: identifier",
            ),
            (
                "a=!b",
                "unable to parse requirement: found '!', expected: identifier",
            ),
        ];
        for (text, error) in cases {
            assert_eq!(parse_err(text), error, "{text:?}");
        }
    }

    #[test]
    fn bad_keys_are_rejected_with_a_nil_path() {
        let error = |key: &str, detail: &str| {
            format!("unable to parse requirement: <nil>: Invalid value: \"{key}\": {detail}")
        };
        assert_eq!(
            parse_err("-a"),
            error("-a", &format!("name part {NAME_REGEX_ERROR}"))
        );
        assert_eq!(
            parse_err("a-=b"),
            error("a-", &format!("name part {NAME_REGEX_ERROR}"))
        );
        assert_eq!(
            parse_err("!_a"),
            error("_a", &format!("name part {NAME_REGEX_ERROR}"))
        );
        let long = "a".repeat(64);
        assert_eq!(
            parse_err(&long),
            error(&long, "name part must be no more than 63 bytes")
        );
        assert_eq!(
            parse_err("a/"),
            error(
                "a/",
                &format!("name part must be non-empty; name part {NAME_REGEX_ERROR}")
            )
        );
        assert_eq!(
            parse_err("/a"),
            error("/a", "prefix part must be non-empty")
        );
        let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        assert_eq!(
            parse_err("Example.com/a"),
            error("Example.com/a", &format!("prefix part {subdomain}"))
        );
        assert_eq!(
            parse_err("a..b/c"),
            error("a..b/c", &format!("prefix part {subdomain}"))
        );
        let long_prefix = format!("{}/a", "a".repeat(254));
        assert_eq!(
            parse_err(&long_prefix),
            error(&long_prefix, "prefix part must be no more than 253 bytes")
        );
        let three = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
        assert_eq!(parse_err("a/b/c"), error("a/b/c", three));
        assert_eq!(
            parse_err("ü=x"),
            error("ü", &format!("name part {NAME_REGEX_ERROR}"))
        );
    }

    #[test]
    fn bad_values_are_rejected_with_their_path() {
        let long = "v".repeat(64);
        assert_eq!(
            parse_err(&format!("a={long}")),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"{long}\": must be no more than 63 bytes"
            )
        );
        assert_eq!(
            parse_err("x=a||y=b"),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": {VALUE_REGEX_ERROR}"
            )
        );
        assert_eq!(
            parse_err("x in (ok,-bad)"),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"-bad\": {VALUE_REGEX_ERROR}"
            )
        );
        let long_bad = format!("-{long}");
        assert_eq!(
            parse_err(&format!("a!={long_bad}")),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"{long_bad}\": must be no more than 63 bytes; {VALUE_REGEX_ERROR}"
            )
        );
    }

    #[test]
    fn numeric_operators_need_integer_values() {
        let not_integer = "for 'Gt', 'Lt' operators, the value must be an integer";
        assert_eq!(
            parse_err("x<a"),
            format!("unable to parse requirement: values[0]: Invalid value: \"a\": {not_integer}")
        );
        assert_eq!(
            parse_err("x>"),
            format!("unable to parse requirement: values[0]: Invalid value: \"\": {not_integer}")
        );
        assert_eq!(
            parse_err("x>-1"),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"-1\": {VALUE_REGEX_ERROR}"
            )
        );
        assert_eq!(
            parse_err("x>-a"),
            format!(
                "unable to parse requirement: [values[0]: Invalid value: \"-a\": {not_integer}, values[0][x]: Invalid value: \"-a\": {VALUE_REGEX_ERROR}]"
            )
        );
        assert_eq!(
            parse_err("x>99999999999999999999"),
            format!(
                "unable to parse requirement: values[0]: Invalid value: \"99999999999999999999\": {not_integer}"
            )
        );
    }

    #[test]
    fn nul_ends_the_selector_like_upstream() {
        assert_eq!(parse("a=b\0,c").to_string(), "a=b,c");
        assert_eq!(parse("a\0").to_string(), "a");
        assert_eq!(
            parse_err("a, \0"),
            "found '', expected: identifier after ','"
        );
    }

    #[test]
    fn structured_selector_from_json() {
        let selector = LabelSelector::from_json(&json!({
            "matchLabels": {"app": "web", "tier": ""},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "dev", "prod"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "zone", "operator": "NotIn", "values": ["b", "a"]},
                {"key": "app", "operator": "Exists", "values": null},
            ],
        }));
        let selector = selector.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            selector.to_string(),
            "app=web,app,!canary,env in (dev,prod,prod),tier=,zone notin (a,b)"
        );
        let object = labels(&[("app", "web"), ("tier", ""), ("env", "dev"), ("zone", "c")]);
        assert!(selector.matches(Some(&object)));
        let object = labels(&[("app", "web"), ("tier", ""), ("env", "dev"), ("zone", "a")]);
        assert!(!selector.matches(Some(&object)));
        assert!(!selector.matches(None));
    }

    #[test]
    fn structured_null_selects_nothing_and_empty_everything() {
        let nothing = LabelSelector::from_json(&Value::Null);
        let nothing = nothing.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(nothing, LabelSelector::nothing());
        assert!(!nothing.is_everything());
        assert!(!nothing.matches(None));
        assert!(!nothing.matches(Some(&labels(&[("a", "b")]))));
        assert_eq!(nothing.to_string(), "");
        for empty in [
            json!({}),
            json!({"matchLabels": {}, "matchExpressions": []}),
            json!({"matchLabels": null}),
        ] {
            let selector = LabelSelector::from_json(&empty).unwrap_or_else(|e| panic!("{e}"));
            assert!(selector.is_everything(), "{empty}");
            assert!(selector.matches(None));
        }
    }

    #[test]
    fn structured_errors_match_upstream_messages() {
        let error = |value: Value| match LabelSelector::from_json(&value) {
            Ok(selector) => panic!("{value} should fail, got {selector}"),
            Err(e) => e,
        };
        let expression = |e: Value| json!({"matchExpressions": [e]});
        assert_eq!(
            error(expression(
                json!({"key": "a", "operator": "Equals", "values": ["x"]})
            )),
            "\"Equals\" is not a valid label selector operator"
        );
        assert_eq!(
            error(expression(json!({"key": "a"}))),
            "\"\" is not a valid label selector operator"
        );
        let empty_in =
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty";
        assert_eq!(
            error(expression(json!({"key": "a", "operator": "In"}))),
            empty_in
        );
        assert_eq!(
            error(expression(
                json!({"key": "a", "operator": "NotIn", "values": []})
            )),
            empty_in
        );
        assert_eq!(
            error(expression(
                json!({"key": "a", "operator": "Exists", "values": ["x", "y"]})
            )),
            "values: Invalid value: [\"x\",\"y\"]: values set must be empty for exists and does not exist"
        );
        assert_eq!(
            error(expression(json!({"key": "-a", "operator": "In"}))),
            format!("[key: Invalid value: \"-a\": name part {NAME_REGEX_ERROR}, {empty_in}]")
        );
        assert_eq!(
            error(json!({"matchLabels": {"a": "-x"}})),
            format!("values[0][a]: Invalid value: \"-x\": {VALUE_REGEX_ERROR}")
        );
        assert_eq!(
            error(json!({"matchLabels": {"": "x"}})),
            format!(
                "key: Invalid value: \"\": name part must be non-empty; name part {NAME_REGEX_ERROR}"
            )
        );
    }

    #[test]
    fn structured_shape_errors() {
        let error = |value: Value| LabelSelector::from_json(&value).err().unwrap_or_default();
        assert_eq!(
            error(json!("a=b")),
            "a label selector must be a JSON object"
        );
        assert_eq!(
            error(json!({"matchLabels": []})),
            "matchLabels must be an object"
        );
        assert_eq!(
            error(json!({"matchLabels": {"a": 1}})),
            "matchLabels.a must be a string"
        );
        assert_eq!(
            error(json!({"matchExpressions": {}})),
            "matchExpressions must be an array"
        );
        assert_eq!(
            error(json!({"matchExpressions": ["a"]})),
            "matchExpressions entries must be JSON objects"
        );
        assert_eq!(
            error(json!({"matchExpressions": [{"key": 1, "operator": "Exists"}]})),
            "key must be a string"
        );
        assert_eq!(
            error(json!({"matchExpressions": [{"key": "a", "operator": "In", "values": [1]}]})),
            "values must be strings"
        );
    }

    #[test]
    fn parse_and_display_agree_for_every_operator() {
        for text in [
            "a",
            "!a",
            "a=b",
            "a==b",
            "a!=b",
            "a in (b,c)",
            "a notin (b,c)",
            "a>5",
            "a<5",
            "a in ()",
        ] {
            let selector = parse(text);
            assert_eq!(selector.to_string(), text);
            assert_eq!(parse(&selector.to_string()), selector);
        }
    }
}
