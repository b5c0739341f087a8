//! The defaults of flowcontrol/v1 on Go value fields, where zero means unset
//! (k8s.io/kubernetes/pkg/apis/flowcontrol/v1/defaults.go); pointer fields have
//! `#[api(default = ...)]`.

use super::flowschema::FlowSchemaSpec;
use super::prioritylevelconfiguration::QueuingConfiguration;

/// Matching precedence of a flow schema that does not set one.
const DEFAULT_MATCHING_PRECEDENCE: i32 = 1000;

/// `SetDefaults_FlowSchemaSpec`: an unset (zero) precedence is 1000.
pub(super) fn default_flow_schema_spec(spec: &mut FlowSchemaSpec) {
    if spec.matching_precedence == 0 {
        spec.matching_precedence = DEFAULT_MATCHING_PRECEDENCE;
    }
}

/// `SetDefaults_QueuingConfiguration`: 64 queues, hands of 8, 50 requests a
/// queue, each where left at zero.
pub(super) fn default_queuing(queuing: &mut QueuingConfiguration) {
    for (field, default) in [
        (&mut queuing.queues, 64),
        (&mut queuing.hand_size, 8),
        (&mut queuing.queue_length_limit, 50),
    ] {
        if *field == 0 {
            *field = default;
        }
    }
}
