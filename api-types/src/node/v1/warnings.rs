//! `Warning` headers about node labels that have a newer name, as
//! kube-apiserver 1.32 sends them for RuntimeClasses (their scheduling node
//! selector) and, through this module's helpers, for the storage kinds that
//! select nodes (StorageClass topologies, CSIStorageCapacity node topology).

use kapi_runtime::meta::LabelSelector;
use kapi_runtime::validation::FieldPath;

use super::RuntimeClass;

/// Node labels that have a newer name, with what to say about each (upstream's
/// `pkg/api/node` table, which the pod warnings read too).
const DEPRECATED_NODE_LABELS: &[(&str, &str)] = &[
    (
        "beta.kubernetes.io/arch",
        "deprecated since v1.14; use \"kubernetes.io/arch\" instead",
    ),
    (
        "beta.kubernetes.io/os",
        "deprecated since v1.14; use \"kubernetes.io/os\" instead",
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        "deprecated since v1.17; use \"topology.kubernetes.io/region\" instead",
    ),
    (
        "failure-domain.beta.kubernetes.io/zone",
        "deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead",
    ),
    (
        "beta.kubernetes.io/instance-type",
        "deprecated since v1.17; use \"node.kubernetes.io/instance-type\" instead",
    ),
];

/// What to say about node label `key` when it has a newer name.
pub(crate) fn deprecated_node_label(key: &str) -> Option<&'static str> {
    DEPRECATED_NODE_LABELS
        .iter()
        .find(|(label, _)| *label == key)
        .map(|(_, message)| *message)
}

/// The warnings of a label selector that picks nodes, at `path`: an
/// expression names its key in the text, a `matchLabels` entry is a plain
/// child of the path (upstream writes `matchLabels.<key>`, not `[<key>]`).
pub(crate) fn node_selector_warnings(
    selector: Option<&LabelSelector>,
    path: &FieldPath,
) -> Vec<String> {
    let Some(selector) = selector else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    for (i, expression) in selector.match_expressions.iter().flatten().enumerate() {
        let key = &expression.key;
        if let Some(message) = deprecated_node_label(key) {
            let field = path.child("matchExpressions").index(i).child("key");
            warnings.push(format!("{field}: {key} is {message}"));
        }
    }
    for key in selector.match_labels.iter().flatten().map(|(k, _)| k) {
        if let Some(message) = deprecated_node_label(key) {
            let field = path.child("matchLabels").child(key);
            warnings.push(format!("{field}: {message}"));
        }
    }
    warnings
}

/// The `RuntimeClass` hook, on create and on every update: one line per
/// deprecated label of `scheduling.nodeSelector`, naming the selector but not
/// the key (as upstream words it).
pub(crate) fn runtimeclass_warnings(rc: &RuntimeClass, _old: Option<&RuntimeClass>) -> Vec<String> {
    let selector = rc
        .scheduling
        .as_ref()
        .and_then(|s| s.node_selector.as_ref());
    selector
        .into_iter()
        .flatten()
        .filter_map(|(key, _)| deprecated_node_label(key))
        .map(|message| format!("scheduling.nodeSelector: {message}"))
        .collect()
}
