//! Go's JSON rules for the kinds, from the runtime (the derive reads them too).

pub(crate) use kapi_runtime::go_json::{null_as_default, omitempty};
