//! Every user-facing error of the derives, pinned with its span (`tests/ui/*.stderr`).
//!
//! Regenerate after an intended message change with
//! `TRYBUILD=overwrite cargo test -p kapi-codegen --test ui`, then read the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/resource_*.rs");
    t.compile_fail("tests/ui/api_*.rs");
    t.compile_fail("tests/ui/proto_*.rs");
    t.compile_fail("tests/ui/convert_*.rs");
    t.pass("tests/ui/pass_*.rs");
}
