//! The recorded upstream cases of the control-plane API groups: API Priority
//! and Fairness (flowcontrol), the aggregation layer (apiregistration) and
//! certificate signing requests; one `upstream_cases!` list per kind, as in
//! `validation.rs`.

use super::upstream;
use kapi_api_types::apiregistration::v1::APIService;
use kapi_api_types::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};

// `flowcontrol/fs_catch_all` and `fs_exempt` are recorded but not run:
// upstream prints the mandatory schemas' spec with Go pointers
// (`DistinguisherMethod:(*flowcontrol.FlowDistinguisherMethod)(0xc...)`); we
// print it as JSON.
upstream_cases!(FlowSchema, "flowcontrol":
    fs_spec,
    fs_precedence,
    fs_precedence_one,
    fs_subjects,
    fs_resource_rules,
    fs_nonresource_rules,
);

// `flowcontrol/plc_catch_all` and `plc_exempt_name` are recorded but not run
// for their spec cause, printed with Go pointers; the other causes of
// `plc_exempt_name` are checked by `plc_exempt_type`.
upstream_cases!(PriorityLevelConfiguration, "flowcontrol":
    plc_type,
    plc_limited,
    plc_limited_missing,
    plc_exempt_type,
    plc_reject_queuing,
    plc_queue_missing,
    plc_queuing,
    plc_queuing_hand,
    plc_queuing_entropy,
    plc_queuing_entropy2,
    plc_queuing_over,
    plc_empty,
);

upstream_cases!(APIService, "apiregistration":
    apiservice_spec,
    apiservice_local,
    apiservice_name,
    apiservice_name_bad,
    apiservice_core,
    apiservice_version,
);
