//! Server-side apply's engine, re-expressed from Kubernetes'
//! structured-merge-diff (sigs.k8s.io/structured-merge-diff/v4, as
//! kube-apiserver 1.32 uses it):
//!
//! - [`set::Set`]: sets of field paths and their FieldsV1 JSON form, the
//!   `fieldsV1` of `metadata.managedFields`;
//! - [`schema::Schema`]: how each node of a kind merges, built from its
//!   OpenAPI definitions or a custom resource's structural schema;
//! - [`typed::Typed`]: field sets, comparison, merge and removal of values;
//! - [`updater::Updater`]: who owns which field after an update or an
//!   apply, and the conflicts an apply meets.
//!
//! It knows JSON values and schemas only; the managedFields entries of
//! objects and the request path live in the server.

pub mod path;
pub mod schema;
pub mod set;
pub mod typed;
pub mod updater;
pub mod value;
