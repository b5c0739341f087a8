//! serde attributes the derive does not use are skipped, whatever their shape.
//!
//! Regression: `bound(...)` on the struct failed with "expected `,`" and
//! `rename(serialize = .., deserialize = ..)` with "expected `=`".

use kapi_codegen::ApiType;
use kapi_runtime::ApiType as _;
use kapi_runtime::validation::{FieldErrors, FieldPath};
use serde::{Deserialize, Serialize};

#[derive(Default, Serialize, Deserialize, PartialEq, ApiType)]
#[serde(rename_all = "camelCase", deny_unknown_fields, bound(serialize = "", deserialize = ""))]
pub struct Spec {
    #[serde(default = "default_mode", skip_serializing_if = "Option::is_none", alias = "kind")]
    #[api(one_of("A", "B"))]
    pub run_mode: Option<String>,
    #[serde(rename(serialize = "nodeIP", deserialize = "nodeIP"))]
    #[api(required)]
    pub node_ip: String,
}

fn default_mode() -> Option<String> {
    Some("A".into())
}

fn main() {
    let spec = Spec { run_mode: Some("C".into()), node_ip: String::new() };
    let mut errs = FieldErrors::default();
    spec.validate(&FieldPath::new("spec"), &mut errs);
    assert_eq!(
        errs.summary(),
        "[spec.runMode: Unsupported value: \"C\": supported values: \"A\", \"B\", spec.nodeIP: Required value]"
    );
}
