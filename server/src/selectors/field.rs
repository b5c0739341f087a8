//! Kubernetes field selectors, as accepted by `fields.ParseSelector` in
//! k8s.io/apimachinery/pkg/fields (the `fieldSelector` list/watch parameter).
//!
//! The text is a comma-separated AND of `field=value`, `field==value` and
//! `field!=value` terms. Upstream does not trim whitespace, and in values a backslash
//! escapes `\`, `,` and `=`; any other escape, and an unescaped `=` or `,` in a value,
//! is an error. Which fields exist is up to each resource; callers check [`FieldSelector::fields`].

use std::fmt;

/// A parsed field selector: the AND of its requirements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    field: String,
    /// `=` and `==` are the same operator; `false` is `!=`.
    equals: bool,
    value: String,
}

impl FieldSelector {
    /// Parses the text form; an empty text selects everything.
    pub fn parse(text: &str) -> Result<FieldSelector, String> {
        let mut terms = split_terms(text);
        // Upstream sorts the raw terms, which fixes the order of errors and of `Display`.
        terms.sort_unstable();
        let mut requirements = Vec::new();
        for term in terms.into_iter().filter(|term| !term.is_empty()) {
            let (field, equals, raw_value) = split_term(term)
                .ok_or_else(|| format!("invalid selector: '{text}'; can't understand '{term}'"))?;
            let value = unescape_value(raw_value)?;
            // Upstream's identity transform drops a term with neither field nor value (`=`).
            if !field.is_empty() || !value.is_empty() {
                let field = field.to_string();
                requirements.push(Requirement {
                    field,
                    equals,
                    value,
                });
            }
        }
        Ok(FieldSelector { requirements })
    }

    /// The selector that matches every object.
    pub fn everything() -> FieldSelector {
        FieldSelector::default()
    }

    /// True when the selector does not restrict anything (upstream `Empty()`).
    pub fn is_everything(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The field names used (so the server can reject unsupported ones).
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.requirements.iter().map(|r| r.field.as_str())
    }

    /// `lookup` returns the object's value of a field as a string (None = absent, which compares as "").
    pub fn matches(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements.iter().all(|requirement| {
            let actual = lookup(&requirement.field).unwrap_or_default();
            (actual == requirement.value) == requirement.equals
        })
    }

    /// The values every `=`/`==` term on `field` requires.
    pub fn equals_terms<'a>(&'a self, field: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.requirements
            .iter()
            .filter(move |r| r.equals && r.field == field)
            .map(|r| r.value.as_str())
    }

    /// If the selector pins `field` with `=`/`==`, its value (used to narrow `metadata.name` lookups).
    ///
    /// Like upstream `RequiresExactMatch`, the first such term wins.
    pub fn exact_value(&self, field: &str) -> Option<&str> {
        let pinned = self
            .requirements
            .iter()
            .find(|r| r.equals && r.field == field);
        pinned.map(|r| r.value.as_str())
    }
}

/// The canonical text form, as upstream `String()`: `==` prints as `=`, values are escaped.
impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, requirement) in self.requirements.iter().enumerate() {
            let separator = if i == 0 { "" } else { "," };
            let operator = if requirement.equals { "=" } else { "!=" };
            let value = escape_value(&requirement.value);
            write!(f, "{separator}{}{operator}{value}", requirement.field)?;
        }
        Ok(())
    }
}

/// Splits at commas that are not escaped; terms keep their backslashes.
fn split_terms(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
}

/// Splits a term at its first operator; the field cannot contain escapes, so the
/// first `!=`, `==` or `=` (tried in that order at each position) is the operator.
fn split_term(term: &str) -> Option<(&str, bool, &str)> {
    term.char_indices().find_map(|(i, _)| {
        let (field, rest) = term.split_at(i);
        [("!=", false), ("==", true), ("=", true)]
            .into_iter()
            .find_map(|(op, equals)| rest.strip_prefix(op).map(|value| (field, equals, value)))
    })
}

/// Upstream `UnescapeValue`, with its error messages.
fn unescape_value(raw: &str) -> Result<String, String> {
    let mut value = String::with_capacity(raw.len());
    let mut escaped = false;
    for c in raw.chars() {
        match c {
            '\\' | ',' | '=' if escaped => value.push(c),
            _ if escaped => {
                return Err(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                ));
            }
            '\\' => {
                escaped = true;
                continue;
            }
            // Go prints the rune with %v, i.e. as its number.
            ',' | '=' => {
                let code = u32::from(c);
                return Err(format!(
                    "invalid field selector: unescaped character in value: {code}"
                ));
            }
            _ => value.push(c),
        }
        escaped = false;
    }
    if escaped {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(value)
}

/// Upstream `EscapeValue`: the inverse of [`unescape_value`].
fn escape_value(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn parse(text: &str) -> FieldSelector {
        FieldSelector::parse(text).unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
    }

    fn parse_err(text: &str) -> String {
        match FieldSelector::parse(text) {
            Ok(selector) => panic!("{text:?} should fail, parsed as {selector}"),
            Err(e) => e,
        }
    }

    fn matches(selector: &str, fields: &[(&str, &str)]) -> bool {
        let fields: BTreeMap<&str, &str> = fields.iter().copied().collect();
        parse(selector).matches(|name| fields.get(name).map(|v| v.to_string()))
    }

    fn single(text: &str) -> (String, bool, String) {
        let selector = parse(text);
        assert_eq!(selector.requirements.len(), 1, "{text:?}");
        let r = &selector.requirements[0];
        (r.field.clone(), r.equals, r.value.clone())
    }

    fn term(field: &str, equals: bool, value: &str) -> (String, bool, String) {
        (field.to_string(), equals, value.to_string())
    }

    #[test]
    fn empty_selects_everything() {
        for text in ["", ",", ",,", "=", "!=", "==", "=,!="] {
            let selector = parse(text);
            assert!(selector.is_everything(), "{text:?}");
            assert_eq!(selector, FieldSelector::everything());
            assert_eq!(selector.to_string(), "");
            assert!(selector.matches(|_| None));
            assert_eq!(selector.fields().count(), 0);
        }
        assert!(!parse("a=b").is_everything());
    }

    #[test]
    fn upstream_good_strings_round_trip() {
        for text in [
            "x=a,y=b,z=c",
            "x!=a,y=b",
            r"x=a||y\=b",
            r"x=a\=\=b",
            r"k=\,\\\=",
            "a=",
            "a!=",
        ] {
            assert_eq!(parse(text).to_string(), text, "{text:?}");
        }
    }

    #[test]
    fn display_sorts_terms_and_prints_double_equals_as_equals() {
        assert_eq!(parse("x=a,a=x").to_string(), "a=x,x=a");
        assert_eq!(parse("a=x,x=a").to_string(), "a=x,x=a");
        assert_eq!(parse("b==1,a!=2").to_string(), "a!=2,b=1");
        assert_eq!(parse("a=b,,c=d,").to_string(), "a=b,c=d");
        assert_eq!(parse("a=1,a=1").to_string(), "a=1,a=1");
        assert_eq!(parse("=x").to_string(), "=x");
    }

    #[test]
    fn terms_split_at_the_first_operator() {
        assert_eq!(single("a=value"), term("a", true, "value"));
        assert_eq!(single("b==value"), term("b", true, "value"));
        assert_eq!(single("c!=value"), term("c", false, "value"));
        assert_eq!(single("a!b=c"), term("a!b", true, "c"));
        assert_eq!(single("a=!b"), term("a", true, "!b"));
        assert_eq!(single("함=수"), term("함", true, "수"));
        assert_eq!(single("=value"), term("", true, "value"));
        assert_eq!(single("!=value"), term("", false, "value"));
        assert_eq!(single("field="), term("field", true, ""));
        assert_eq!(single("field!="), term("field", false, ""));
    }

    #[test]
    fn whitespace_is_kept_as_upstream_does() {
        assert_eq!(single(" a = b "), term(" a ", true, " b "));
        assert_eq!(
            single("status.phase=Running "),
            term("status.phase", true, "Running ")
        );
        // Terms are sorted as raw bytes, and " b=2" sorts before "a=1".
        assert_eq!(parse("a=1, b=2").fields().collect::<Vec<_>>(), [" b", "a"]);
    }

    #[test]
    fn values_unescape_backslash_comma_and_equals() {
        assert_eq!(single(r"k=\,"), term("k", true, ","));
        assert_eq!(single(r"k=\="), term("k", true, "="));
        assert_eq!(single(r"k=\\"), term("k", true, r"\"));
        assert_eq!(single(r"k!=\\\=\\\,\\"), term("k", false, r"\=\,\"));
        assert_eq!(single(r"k==a\,b\=c"), term("k", true, "a,b=c"));
        let selector = parse(r"k=\,,k2=v2");
        assert_eq!(selector.fields().collect::<Vec<_>>(), ["k2", "k"]); // '2' < '='
        assert_eq!(selector.exact_value("k"), Some(","));
        let selector = parse(r"k=\\,k2=v2");
        assert_eq!(selector.exact_value("k"), Some(r"\"));
        assert_eq!(selector.exact_value("k2"), Some("v2"));
        assert_eq!(parse(r"k=\\\,,k2=v2").exact_value("k"), Some(r"\,"));
    }

    #[test]
    fn display_escapes_values() {
        for (value, escaped) in [
            ("", ""),
            ("a", "a"),
            ("=", r"\="),
            (",", r"\,"),
            (r"\", r"\\"),
            (r"\=\,\", r"\\\=\\\,\\"),
        ] {
            assert_eq!(escape_value(value), escaped);
            assert_eq!(unescape_value(escaped).as_deref(), Ok(value));
        }
        assert_eq!(parse(r"a!=x\,y").to_string(), r"a!=x\,y");
    }

    #[test]
    fn errors_match_upstream_messages() {
        let cases = [
            ("x", "invalid selector: 'x'; can't understand 'x'"),
            (
                "x in (a)",
                "invalid selector: 'x in (a)'; can't understand 'x in (a)'",
            ),
            ("x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'"),
            ("a=1,b", "invalid selector: 'a=1,b'; can't understand 'b'"),
            ("a!b", "invalid selector: 'a!b'; can't understand 'a!b'"),
            (
                "x=a||y=b",
                "invalid field selector: unescaped character in value: 61",
            ),
            (
                "x==a==b",
                "invalid field selector: unescaped character in value: 61",
            ),
            (
                "a=b=c",
                "invalid field selector: unescaped character in value: 61",
            ),
            (
                "a!==b",
                "invalid field selector: unescaped character in value: 61",
            ),
            (
                r"k=\a",
                r"invalid field selector: invalid escape sequence: \a",
            ),
            (
                r"k=\!",
                r"invalid field selector: invalid escape sequence: \!",
            ),
            (
                r"k=\",
                r"invalid field selector: invalid escape sequence: \",
            ),
            (
                r"k=\\\",
                r"invalid field selector: invalid escape sequence: \",
            ),
            (
                r"k=\수",
                r"invalid field selector: invalid escape sequence: \수",
            ),
        ];
        for (text, error) in cases {
            assert_eq!(parse_err(text), error, "{text:?}");
        }
    }

    #[test]
    fn errors_follow_sorted_term_order() {
        // Upstream sorts terms before parsing them, so "a" is reported before "z=1=".
        assert_eq!(
            parse_err("z=1=,a"),
            "invalid selector: 'z=1=,a'; can't understand 'a'"
        );
    }

    #[test]
    fn matching_compares_strings_and_absent_is_empty() {
        assert!(matches("x=y", &[("x", "y")]));
        assert!(matches("x==y", &[("x", "y")]));
        assert!(matches("x=y,z=w", &[("x", "y"), ("z", "w")]));
        assert!(matches("x!=y,z!=w", &[("x", "z"), ("z", "a")]));
        assert!(matches("notin=in", &[("notin", "in")]));
        assert!(!matches("x=y", &[("x", "z")]));
        assert!(!matches("x=y,z=w", &[("x", "w"), ("z", "w")]));
        assert!(!matches("x!=y,z!=w", &[("x", "z"), ("z", "w")]));
        assert!(!matches("x=y", &[]));
        assert!(matches("x!=y", &[]));
        assert!(matches("x=", &[]));
        assert!(!matches("x!=", &[]));
        assert!(matches("x!=", &[("x", "set")]));
        let fields = [("foo", "bar"), ("baz", "blah"), ("complex", r"=value\,\")];
        assert!(matches(r"foo=bar,baz=blah,complex=\=value\\\,\\", &fields));
        assert!(!matches("foo=bar,foobar=bar,baz=blah", &fields));
    }

    #[test]
    fn exact_value_only_for_equality() {
        let selector =
            parse("metadata.name=web,metadata.namespace!=kube-system,status.phase==Running");
        assert_eq!(selector.exact_value("metadata.name"), Some("web"));
        assert_eq!(selector.exact_value("status.phase"), Some("Running"));
        assert_eq!(selector.exact_value("metadata.namespace"), None);
        assert_eq!(selector.exact_value("spec.nodeName"), None);
        assert_eq!(parse("a=").exact_value("a"), Some(""));
        assert_eq!(parse("a!=x,a=y").exact_value("a"), Some("y"));
        assert_eq!(parse("a=2,a=1").exact_value("a"), Some("1"));
        assert_eq!(FieldSelector::everything().exact_value("a"), None);
    }

    #[test]
    fn fields_lists_every_term() {
        let selector = parse("metadata.name=a,spec.nodeName!=b,metadata.name=c");
        let fields: Vec<&str> = selector.fields().collect();
        assert_eq!(fields, ["metadata.name", "metadata.name", "spec.nodeName"]);
    }
}
