//! Small pieces the `#[api(defaults = ...)]` hooks of every group share: Go's
//! defaulting functions test a string for emptiness, not for presence, so an
//! explicit `""` is defaulted like an absent field.

use std::collections::BTreeMap;

use kapi_runtime::Quantity;

/// Sets an empty text field to `default` and returns its value.
pub(crate) fn default_text<'a>(field: &'a mut Option<String>, default: &str) -> &'a str {
    if field.as_deref().unwrap_or_default().is_empty() {
        *field = Some(default.to_owned());
    }
    field.as_deref().unwrap_or_default()
}

/// Whether a text field is unset or empty, as Go sees a string value.
pub(crate) fn is_unset(field: &Option<String>) -> bool {
    field.as_deref().unwrap_or_default().is_empty()
}

/// `SetDefaults_ResourceList`: each amount of a resource list rounded up to a
/// thousandth (the canonical text follows from the quantity's own defaults).
pub(crate) fn round_resource_list(list: &mut Option<BTreeMap<String, Quantity>>) {
    for quantity in list.iter_mut().flat_map(|l| l.values_mut()) {
        if let Some(rounded) = kapi_runtime::quantity::round_up_to_milli(&quantity.0) {
            quantity.0 = rounded;
        }
    }
}
