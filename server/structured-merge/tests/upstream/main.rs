//! structured-merge-diff's own test cases, re-expressed against kapi's
//! engine: each module is one of upstream's test files (`merge/*_test.go`,
//! `typed/merge_test.go`, `typed/symdiff_test.go`,
//! `fieldpath/serialize_test.go`), each test one of its cases, named as
//! upstream names it. Schemas are upstream's, translated from its YAML schema syntax
//! to the OpenAPI definitions kapi reads: `associative` lists with `keys`
//! are `x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`,
//! without keys `set`; `atomic` maps are `x-kubernetes-map-type: atomic`;
//! `separable` maps are the default; a map's `elementType` is its
//! `additionalProperties`.
//!
//! Upstream: sigs.k8s.io/structured-merge-diff, read at v6 (HEAD of the
//! mirror); the cases are the same in v4 except where a test says so.
//! Not re-expressed: `merge/extract_apply_test.go` (ExtractItems, which
//! the engine does not have), `merge/schema_change_test.go` (managed sets
//! reconciled with a changed schema, not yet done), `merge/real_test.go`
//! (upstream's large test-data schemas).

#[macro_use]
mod fixture;

mod conflict;
mod deduced;
mod default_keys;
mod duplicates;
mod field_level_overrides;
mod fields_v1;
mod ignore;
mod key;
mod leaf;
mod multiple_appliers;
mod multiple_appliers_versions;
mod nested;
mod obsolete_versions;
mod preserve_unknown;
mod set;
mod typed_compare;
mod typed_merge;
