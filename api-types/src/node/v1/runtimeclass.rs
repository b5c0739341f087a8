//! Runtime classes: container runtime configurations pods can select.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::Quantity;
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::core::v1::pod::affinity::Toleration;
use crate::go_json::omitempty;

/// A container runtime configuration (e.g. a sandboxed runtime) that pods pick
/// with `runtimeClassName`, with its resource overhead and node constraints.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "node.k8s.io",
    version = "v1",
    plural = "runtimeclasses",
    storage_prefix = "runtimeclasses",
    cluster_scoped,
    generation = false,
    printer_column(
        name = "Handler",
        type = "string",
        json_path = ".handler",
        description = "CRI handler that runs the pods."
    ),
    validate_update = super::validation::validate_runtime_class_update,
    warnings = super::warnings::runtimeclass_warnings
)]
#[api(validate = super::validation::validate_runtime_class)]
pub struct RuntimeClass {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Name of the runtime handler in the node's CRI configuration (a DNS
    /// label, e.g. `runc` or `runsc`); cannot change.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub handler: String,
    /// Resources a pod of this class uses on top of its containers' requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 3)]
    pub overhead: Option<Overhead>,
    /// Node constraints for pods of this class, merged into their specs at
    /// admission; every node is assumed to support the class when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub scheduling: Option<Scheduling>,
}

/// The fixed resource cost of running a pod with a runtime class.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = round_overhead)]
pub struct Overhead {
    /// Quantities by resource name (`cpu`, `memory`), added to each pod.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub pod_fixed: Option<BTreeMap<String, Quantity>>,
}

/// Where pods of a runtime class may run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::validate_scheduling)]
pub struct Scheduling {
    /// Labels nodes must have; merged with the pod's own node selector (a
    /// conflict rejects the pod).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(map_type = "atomic")]
    #[api(proto = 1)]
    pub node_selector: Option<BTreeMap<String, String>>,
    /// Tolerations added to the pod's own, for taints of the nodes that
    /// support this class.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub tolerations: Option<Vec<Toleration>>,
}

/// The overhead's resource list (`SetDefaults_ResourceList`).
fn round_overhead(overhead: &mut Overhead) {
    crate::defaulting::round_resource_list(&mut overhead.pod_fixed);
}
