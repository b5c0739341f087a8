//! merge/conflict_test.go: how conflicting paths read (`TestNewFromSets`,
//! `TestConflictsFromManagers`): a manager's set in its iteration order,
//! members before subtrees, each path printed as conflict messages print
//! it.

use kapi_structured_merge::path::path_string;
use serde_json::json;

use crate::fixture::{key, set};

fn printed(paths: &[kapi_structured_merge::path::Path]) -> Vec<String> {
    set(paths).paths().iter().map(|p| path_string(p)).collect()
}

#[test]
fn new_from_sets() {
    let list_item = || key(json!({"key": "a", "id": 2}));
    let bob = printed(&[path!["key"], path!["list", list_item(), "id"]]);
    let alice = printed(&[path!["value"], path!["list", list_item(), "key"]]);
    assert_eq!(alice, [".value", r#".list[id=2,key="a"].key"#]);
    assert_eq!(bob, [".key", r#".list[id=2,key="a"].id"#]);
}

#[test]
fn conflicts_from_managers() {
    let a = || key(json!({"name": "a"}));
    let bob = printed(&[
        path!["obj", "template", "obj", "list", a(), "id"],
        path!["obj", "template", "obj", "list", a(), "key"],
    ]);
    assert_eq!(
        bob,
        [
            r#".obj.template.obj.list[name="a"].id"#,
            r#".obj.template.obj.list[name="a"].key"#
        ]
    );
}

/// `TestToSet`: the conflicts of two managers as one set.
#[test]
fn to_set() {
    let list_item = || key(json!({"key": "a", "id": 2}));
    let bob = set(&[path!["key"], path!["list", list_item(), "id"]]);
    let alice = set(&[path!["value"], path!["list", list_item(), "key"]]);
    let expected = set(&[
        path!["key"],
        path!["value"],
        path!["list", list_item(), "id"],
        path!["list", list_item(), "key"],
    ]);
    assert_eq!(bob.union(&alice), expected);
}
