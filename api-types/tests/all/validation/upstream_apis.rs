//! The recorded upstream cases of the API groups beyond core, apps and
//! batch: one `upstream_cases!` list per kind, as in `validation.rs`.

use super::upstream;
use crate::common::{admit_clean, fixture};
use kapi_api_types::apiextensions::v1::CustomResourceDefinition;
use kapi_api_types::autoscaling::v2::HorizontalPodAutoscaler;
use kapi_api_types::coordination::v1::Lease;
use kapi_api_types::core::v1::Event;
use kapi_api_types::discovery::v1::EndpointSlice;
use kapi_api_types::events;
use kapi_api_types::networking::v1::{Ingress, IngressClass, NetworkPolicy};
use kapi_api_types::node::v1::RuntimeClass;
use kapi_api_types::policy::v1::PodDisruptionBudget;
use kapi_api_types::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kapi_api_types::scheduling::v1::PriorityClass;
use kapi_api_types::storage::v1::{CSIDriver, CSINode, StorageClass, VolumeAttachment};

upstream_cases!(NetworkPolicy, "networking":
    networkpolicy_spec,
    networkpolicy_except,
    networkpolicy_policy_types,
    networkpolicy_ports,
);

upstream_cases!(Ingress, "networking":
    ingress_default_backend,
    ingress_rules,
    ingress_empty,
    ingress_class_annotation,
    ingress_resource,
);

upstream_cases!(IngressClass, "networking":
    ingressclass_params,
    ingressclass_scope,
    ingressclass_cluster_ns,
    ingressclass_update,
);

// `policy/pdb_both` is recorded but not run: upstream prints the spec with
// Go pointers (`MinAvailable:(*intstr.IntOrString)(0xc...)`); we print the
// values.
upstream_cases!(PodDisruptionBudget, "policy":
    pdb_negative,
    pdb_percent,
    pdb_values,
    pdb_percent_forms,
    pdb_selector,
);

upstream_cases!(Role, "rbac": role_rules);

upstream_cases!(ClusterRole, "rbac":
    clusterrole_rules,
    clusterrole_aggregation,
    clusterrole_aggregation_empty,
);

upstream_cases!(RoleBinding, "rbac": rolebinding_refs, rolebinding_update, rolebinding_subjects);

upstream_cases!(ClusterRoleBinding, "rbac": clusterrolebinding_refs, clusterrolebinding_update);

upstream_cases!(StorageClass, "storage":
    storageclass_spec,
    storageclass_provisioner,
    storageclass_update,
);

upstream_cases!(CSIDriver, "storage": csidriver_spec, csidriver_update);

upstream_cases!(CSINode, "storage": csinode_drivers);

// `storage/volumeattachment_update` is recorded but not run: upstream prints
// the spec with a Go pointer (`PersistentVolumeName:(*string)(0xc...)`).
upstream_cases!(VolumeAttachment, "storage": volumeattachment_spec, volumeattachment_both);

upstream_cases!(PriorityClass, "scheduling":
    priorityclass_update,
    priorityclass_value,
    priorityclass_system,
    priorityclass_system_value,
);

upstream_cases!(Lease, "coordination": lease_spec, lease_negative);

upstream_cases!(EndpointSlice, "discovery":
    endpointslice_type,
    endpointslice_ports,
    endpointslice_endpoints,
    endpointslice_fqdn,
    endpointslice_update,
);

upstream_cases!(RuntimeClass, "node":
    runtimeclass_handler,
    runtimeclass_overhead,
    runtimeclass_update,
);

upstream_cases!(HorizontalPodAutoscaler, "autoscaling":
    hpa_spec,
    hpa_min_max,
    hpa_metrics,
    hpa_behavior,
);

// The same stored Events, checked by the version a write comes through: an
// events.k8s.io/v1 write more strictly than a v1 one.
upstream_cases!(Event, "events": core_event_reporting, core_event_namespace);

upstream_cases!(events::v1::Event, "events":
    event_missing,
    event_fields,
    event_v1_unset,
    event_v1_update,
    event_v1_update_times,
);

/// Objects kube-apiserver 1.32 accepts (checked with `?dryRun=All`) that
/// touch the edges of the rules above: non-canonical `except` CIDRs,
/// wildcard hosts, upper-case driver names, a 200-character node ID, port
/// numbers an endpoint slice does not check.
#[test]
fn objects_upstream_accepts_are_valid() {
    admit_clean::<NetworkPolicy>(fixture("validation/valid/networkpolicy_peers.json"));
    admit_clean::<Ingress>(fixture("validation/valid/ingress_wildcard.json"));
    admit_clean::<IngressClass>(fixture("validation/valid/ingressclass_namespaced.json"));
    admit_clean::<StorageClass>(fixture("validation/valid/storageclass_topology.json"));
    admit_clean::<CSINode>(fixture("validation/valid/csinode_drivers.json"));
    admit_clean::<CSIDriver>(fixture("validation/valid/csidriver_tokens.json"));
    admit_clean::<VolumeAttachment>(fixture("validation/valid/volumeattachment_pv.json"));
    admit_clean::<EndpointSlice>(fixture("validation/valid/endpointslice_ipv6.json"));
    admit_clean::<HorizontalPodAutoscaler>(fixture("validation/valid/hpa_metrics.json"));
    admit_clean::<RuntimeClass>(fixture("validation/valid/runtimeclass_full.json"));
}

// The names of a CustomResourceDefinition: required in the spec, checked in
// the status only when set (a new definition's status is the server's).
upstream_cases!(CustomResourceDefinition, "apiextensions":
    crd_names_missing,
    crd_names_plural_only,
    crd_names_format,
    crd_names_lists,
    crd_name_mismatch,
);
