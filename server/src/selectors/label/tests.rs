//! Parser, matching and error-message cases, many taken from upstream's tests.
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
fn typed_selector_reads_as_its_json() {
    let json = json!({
        "matchLabels": {"app": "web", "tier": ""},
        "matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod", "dev"]},
            {"key": "app", "operator": "Exists"},
        ],
    });
    let typed: kapi_runtime::meta::LabelSelector =
        serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        LabelSelector::from_meta(Some(&typed)),
        LabelSelector::from_json(&json)
    );
    assert_eq!(LabelSelector::from_meta(None), Ok(LabelSelector::nothing()));
    let bad: kapi_runtime::meta::LabelSelector =
        serde_json::from_value(json!({"matchExpressions": [{"key": "a", "operator": "Near"}]}))
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        LabelSelector::from_meta(Some(&bad)),
        LabelSelector::from_json(&json!({"matchExpressions": [{"key": "a", "operator": "Near"}]}))
    );
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
