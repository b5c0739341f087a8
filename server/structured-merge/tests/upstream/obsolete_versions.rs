//! merge/obsolete_versions_test.go: managers of a version no longer served
//! are dropped (`specificVersionConverter`).

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::json;

use crate::fixture::converters::SpecificVersions;
use crate::fixture::{Parser, State};
use crate::set::set_fields;

fn state(parser: Parser, accepted: &[&str]) -> (State, Rc<SpecificVersions>) {
    let parser = Rc::new(parser);
    let converter = Rc::new(SpecificVersions {
        parser: parser.clone(),
        accepted: RefCell::new(Vec::new()),
    });
    converter.accept(accepted);
    (State::with_converter(parser, converter.clone()), converter)
}

/// `TestObsoleteVersions`.
#[test]
fn obsolete_versions() {
    let (mut s, converter) = state(Parser::deduced(), &["v1", "v2"]);
    s.update("v1", "v1", json!({"v1": 0}));
    s.update("v2", "v2", json!({"v1": 0, "v2": 0}));
    // v1 goes, v3 comes.
    converter.accept(&["v2", "v3"]);
    s.update("v3", "v3", json!({"v1": 0, "v2": 0, "v3": 0}));
    s.assert_managed(&[
        ("v2", "v2", vec![path!["v2"]]),
        ("v3", "v3", vec![path!["v3"]]),
    ]);
}

/// `TestApplyObsoleteVersion`: an applier whose last apply is in a version
/// gone prunes nothing.
#[test]
fn apply_obsolete_version() {
    let (mut s, converter) = state(set_fields(), &["v1"]);
    s.apply("apply", "v1", json!({"list": ["a", "b", "c", "d"]}));
    converter.accept(&["v2"]);
    s.apply("apply", "v2", json!({"list": ["a"]}));
    s.assert_live("v2", json!({"list": ["a", "b", "c", "d"]}));
}
