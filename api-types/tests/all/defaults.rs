//! Defaulting of every served kind against the real kube-apiserver 1.32: each
//! `tests/fixtures/defaults/<group>/<kind>.in.json` is a minimal manifest as people
//! write it, and `<kind>.out.json` is what the reference server answered to a
//! `?dryRun=All` create of it. Our admit path (prepare hook, defaults) must give
//! the same object, less what the server sets that is not defaulting (see
//! [`strip_server_work`]). Applying the defaults a second time changes nothing.
//!
//! `fixtures/defaults/autoscaling/` holds the server's answers for
//! HorizontalPodAutoscaler (autoscaling/v2 and v1) for when that kind is served.

use crate::common;

use kapi_api_types::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};
use kapi_api_types::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use kapi_api_types::batch::v1::{CronJob, Job};
use kapi_api_types::certificates::v1::CertificateSigningRequest;
use kapi_api_types::coordination::v1::Lease;
use kapi_api_types::core::v1::{
    ConfigMap, Endpoints, Event, LimitRange, Namespace, Node, PersistentVolume,
    PersistentVolumeClaim, Pod, PodTemplate, ReplicationController, ResourceQuota, Secret, Service,
    ServiceAccount,
};
use kapi_api_types::discovery::v1::EndpointSlice;
use kapi_api_types::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};
use kapi_api_types::networking::v1::{Ingress, IngressClass, NetworkPolicy};
use kapi_api_types::node::v1::RuntimeClass;
use kapi_api_types::policy::v1::PodDisruptionBudget;
use kapi_api_types::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kapi_api_types::scheduling::v1::PriorityClass;
use kapi_api_types::storage::v1::{
    CSIDriver, CSINode, CSIStorageCapacity, StorageClass, VolumeAttachment,
};
use kapi_runtime::Resource;
use serde_json::{Map, Value};

/// The metadata the server fills on create: identity and bookkeeping, not defaults.
const SERVER_METADATA: &[&str] = &[
    "uid",
    "creationTimestamp",
    "resourceVersion",
    "managedFields",
    "generation",
];

/// Removes from the server's answer what the server sets on create that is not
/// defaulting, so that what remains is the defaults and the kind's prepare hook.
/// Each entry names the code upstream that does it (admission plugins and
/// allocation are issue 9).
fn strip_server_work(kind: &str, input: &Value, out: &mut Value) {
    drop_server_metadata(out);
    match kind {
        "Pod" => {
            let input_spec = &input["spec"];
            let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut) else {
                return;
            };
            // ServiceAccount admission: the default account and its token volume.
            if input_spec.get("serviceAccountName").is_none()
                && input_spec.get("serviceAccount").is_none()
            {
                spec.remove("serviceAccountName");
                spec.remove("serviceAccount");
            }
            remove_named(spec, "volumes", is_api_access);
            for list in ["containers", "initContainers"] {
                for container in array_mut(spec, list) {
                    if let Some(container) = container.as_object_mut() {
                        remove_named(container, "volumeMounts", is_api_access);
                    }
                }
            }
            // DefaultTolerationSeconds admission: not-ready and unreachable for 300 s.
            if input_spec.get("tolerations").is_none() {
                spec.remove("tolerations");
            }
            // Priority admission: the priority and preemption policy of the class.
            if input_spec.get("priority").is_none() {
                spec.remove("priority");
            }
            if input_spec.get("preemptionPolicy").is_none() {
                spec.remove("preemptionPolicy");
            }
        }
        "Service" => {
            let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut) else {
                return;
            };
            // Service REST storage: IP and IP family allocation, node ports.
            for key in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
                spec.remove(key);
            }
            for port in array_mut(spec, "ports") {
                if let Some(port) = port.as_object_mut() {
                    port.remove("nodePort");
                }
            }
        }
        "Job" => {
            // Job strategy (generateSelector): a selector and labels made from
            // the new object's uid.
            let input_spec = &input["spec"];
            if input["metadata"].get("labels").is_none()
                && let Some(metadata) = out.get_mut("metadata").and_then(Value::as_object_mut)
            {
                metadata.remove("labels");
            }
            let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut) else {
                return;
            };
            if input_spec.get("selector").is_none() {
                spec.remove("selector");
            }
            if input_spec["template"]["metadata"].get("labels").is_none()
                && let Some(metadata) = spec
                    .get_mut("template")
                    .and_then(|t| t.get_mut("metadata"))
                    .and_then(Value::as_object_mut)
            {
                metadata.remove("labels");
            }
        }
        "PersistentVolume" | "PersistentVolumeClaim" => {
            // StorageObjectInUseProtection admission: the protection finalizer.
            if let Some(metadata) = out.get_mut("metadata").and_then(Value::as_object_mut) {
                metadata.remove("finalizers");
            }
        }
        "Node" => {
            // TaintNodesByCondition admission: a new node is not ready.
            if input["spec"].get("taints").is_none()
                && let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut)
            {
                spec.remove("taints");
            }
        }
        "CertificateSigningRequest" => {
            // CSR strategy: the requesting user's identity.
            if let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut) {
                for key in ["username", "uid", "groups", "extra"] {
                    spec.remove(key);
                }
            }
        }
        _ => {}
    }
}

/// Whether a volume or mount is the ServiceAccount admission's token volume.
fn is_api_access(item: &Value) -> bool {
    item["name"]
        .as_str()
        .is_some_and(|n| n.starts_with("kube-api-access-"))
}

/// The items of the array `key` of `object` (none when it is absent).
fn array_mut<'a>(
    object: &'a mut Map<String, Value>,
    key: &str,
) -> impl Iterator<Item = &'a mut Value> {
    object
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// Drops the items of the array `key` that `pred` picks, and the array when that
/// empties it.
fn remove_named(object: &mut Map<String, Value>, key: &str, pred: fn(&Value) -> bool) {
    if let Some(items) = object.get_mut(key).and_then(Value::as_array_mut) {
        items.retain(|item| !pred(item));
        if items.is_empty() {
            object.remove(key);
        }
    }
}

/// A fixture as a JSON value.
fn read(name: &str) -> Value {
    Value::Object(common::fixture(&format!("defaults/{name}")))
}

/// Admits `<name>.in.json` as `K` and compares with `<name>.out.json`; then
/// admits the result again and checks nothing changes.
fn check<K: Resource>(name: &str) {
    let input = read(&format!("{name}.in.json"));
    let mut want = read(&format!("{name}.out.json"));
    strip_server_work(K::INFO.kind, &input, &mut want);
    if let Some(want) = want.as_object_mut() {
        want.remove("kind");
        want.remove("apiVersion");
    }
    let Value::Object(input_object) = input else {
        panic!("{name}.in.json is not an object");
    };
    let admitted = common::admit::<K>(input_object);
    assert_eq!(
        admitted.unknown_fields,
        Vec::<String>::new(),
        "{name}: unknown fields"
    );
    let mut got = Value::Object(admitted.object);
    let first = got.clone();
    drop_server_metadata(&mut got);
    take_clock_readings(name, &mut got, &mut want);
    let mut differences = Vec::new();
    diff("", &got, &want, &mut differences);
    assert!(
        differences.is_empty(),
        "{name}: defaults differ from the reference server's (ours, then the server's):\n{}",
        differences.join("\n")
    );
    let Value::Object(again) = first.clone() else {
        panic!("{name}: not an object");
    };
    let twice = Value::Object(common::admit::<K>(again).object);
    let mut differences = Vec::new();
    diff("", &twice, &first, &mut differences);
    assert!(
        differences.is_empty(),
        "{name}: defaults not idempotent (twice, then once):\n{}",
        differences.join("\n")
    );
}

/// Fields set to the time of the write (the PersistentVolume strategy's phase
/// transition time): both sides must have one; their values cannot agree.
const CLOCK_READINGS: &[(&str, &str)] = &[("status", "lastPhaseTransitionTime")];

/// Checks that ours has each clock reading the server's answer has, then
/// removes it from both.
fn take_clock_readings(name: &str, ours: &mut Value, theirs: &mut Value) {
    for (parent, key) in CLOCK_READINGS {
        let Some(theirs) = theirs.get_mut(*parent).and_then(Value::as_object_mut) else {
            continue;
        };
        if theirs.remove(*key).is_none() {
            continue;
        }
        let ours = ours.get_mut(*parent).and_then(Value::as_object_mut);
        assert!(
            ours.and_then(|o| o.remove(*key)).is_some(),
            "{name}: {parent}.{key} not set"
        );
    }
}

/// Removes [`SERVER_METADATA`] from an object.
fn drop_server_metadata(object: &mut Value) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in SERVER_METADATA {
            metadata.remove(*key);
        }
    }
}

/// Appends one line per place where `ours` and `theirs` differ, with its JSON path.
fn diff(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let child = format!("{path}.{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => diff(&child, x, y, out),
                    (Some(x), None) => out.push(format!("{child}: {x} | (absent)")),
                    (None, Some(y)) => out.push(format!("{child}: (absent) | {y}")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), x, y, out);
            }
        }
        _ if ours != theirs => out.push(format!("{path}: {ours} | {theirs}")),
        _ => {}
    }
}

/// The job strategy's selector, made from the uid the server gave the job: the
/// input gets the uid of the server's answer, and nothing is left out.
#[test]
fn batch_job_selector_from_uid() {
    let name = "batch/job";
    let mut input = read(&format!("{name}.in.json"));
    let mut want = read(&format!("{name}.out.json"));
    input["metadata"]["uid"] = want["metadata"]["uid"].clone();
    drop_server_metadata(&mut want);
    if let Some(want) = want.as_object_mut() {
        want.remove("kind");
        want.remove("apiVersion");
    }
    let Value::Object(input) = input else {
        panic!("{name}.in.json is not an object");
    };
    let mut got = Value::Object(common::admit::<Job>(input).object);
    drop_server_metadata(&mut got);
    let mut differences = Vec::new();
    diff("", &got, &want, &mut differences);
    assert!(
        differences.is_empty(),
        "{name}: selector differs (ours, then the server's):\n{}",
        differences.join("\n")
    );
}

macro_rules! defaults_test {
    ($($test:ident: $kind:ty = $name:literal;)*) => {
        $(
            #[test]
            fn $test() {
                check::<$kind>($name);
            }
        )*
    };
}

defaults_test! {
    core_pod_hostnetwork: Pod = "core/pod-hostnetwork";
    core_pod: Pod = "core/pod";
    core_service: Service = "core/service";
    core_service_nodeport: Service = "core/service-nodeport";
    core_service_loadbalancer: Service = "core/service-loadbalancer";
    core_service_externalname: Service = "core/service-externalname";
    core_configmap: ConfigMap = "core/configmap";
    core_secret: Secret = "core/secret";
    core_secret_tls: Secret = "core/secret-tls";
    core_serviceaccount: ServiceAccount = "core/serviceaccount";
    core_endpoints: Endpoints = "core/endpoints";
    core_event: Event = "core/event";
    core_limitrange_defaults: LimitRange = "core/limitrange-defaults";
    core_limitrange: LimitRange = "core/limitrange";
    core_namespace: Namespace = "core/namespace";
    core_node: Node = "core/node";
    core_persistentvolume: PersistentVolume = "core/persistentvolume";
    core_persistentvolume_iscsi: PersistentVolume = "core/persistentvolume-iscsi";
    core_persistentvolume_rbd: PersistentVolume = "core/persistentvolume-rbd";
    core_persistentvolumeclaim: PersistentVolumeClaim = "core/persistentvolumeclaim";
    core_podtemplate: PodTemplate = "core/podtemplate";
    core_podtemplate_quantities: PodTemplate = "core/podtemplate-quantities";
    core_podtemplate_zero_values: PodTemplate = "core/podtemplate-zero-values";
    core_replicationcontroller: ReplicationController = "core/replicationcontroller";
    core_replicationcontroller_selector: ReplicationController =
        "core/replicationcontroller-selector";
    core_node_cidrs: Node = "core/node-cidrs";
    core_resourcequota_quantities: ResourceQuota = "core/resourcequota-quantities";
    core_resourcequota: ResourceQuota = "core/resourcequota";
    apps_deployment: Deployment = "apps/deployment";
    apps_deployment_recreate: Deployment = "apps/deployment-recreate";
    apps_replicaset: ReplicaSet = "apps/replicaset";
    apps_statefulset: StatefulSet = "apps/statefulset";
    apps_statefulset_ondelete: StatefulSet = "apps/statefulset-ondelete";
    apps_daemonset: DaemonSet = "apps/daemonset";
    apps_daemonset_ondelete: DaemonSet = "apps/daemonset-ondelete";
    apps_controllerrevision: ControllerRevision = "apps/controllerrevision";
    batch_job: Job = "batch/job";
    batch_job_indexed: Job = "batch/job-indexed";
    batch_job_failure_policy: Job = "batch/job-failure-policy";
    batch_cronjob: CronJob = "batch/cronjob";
    batch_cronjob_forbid: CronJob = "batch/cronjob-forbid";
    policy_poddisruptionbudget: PodDisruptionBudget = "policy/poddisruptionbudget";
    coordination_lease: Lease = "coordination/lease";
    discovery_endpointslice: EndpointSlice = "discovery/endpointslice";
    events_event: kapi_api_types::events::v1::Event = "events/event";
    networking_ingress: Ingress = "networking/ingress";
    networking_ingressclass: IngressClass = "networking/ingressclass";
    networking_networkpolicy: NetworkPolicy = "networking/networkpolicy";
    networking_networkpolicy_egress: NetworkPolicy = "networking/networkpolicy-egress";
    node_runtimeclass: RuntimeClass = "node/runtimeclass";
    rbac_role: Role = "rbac/role";
    rbac_clusterrole: ClusterRole = "rbac/clusterrole";
    rbac_rolebinding: RoleBinding = "rbac/rolebinding";
    rbac_clusterrolebinding: ClusterRoleBinding = "rbac/clusterrolebinding";
    rbac_clusterrolebinding_sa: ClusterRoleBinding = "rbac/clusterrolebinding-sa";
    scheduling_priorityclass: PriorityClass = "scheduling/priorityclass";
    storage_storageclass: StorageClass = "storage/storageclass";
    storage_csidriver: CSIDriver = "storage/csidriver";
    storage_csinode: CSINode = "storage/csinode";
    storage_csistoragecapacity: CSIStorageCapacity = "storage/csistoragecapacity";
    storage_volumeattachment: VolumeAttachment = "storage/volumeattachment";
    certificates_certificatesigningrequest: CertificateSigningRequest =
        "certificates/certificatesigningrequest";
    admissionregistration_validatingwebhookconfiguration: ValidatingWebhookConfiguration =
        "admissionregistration/validatingwebhookconfiguration";
    admissionregistration_mutatingwebhookconfiguration: MutatingWebhookConfiguration =
        "admissionregistration/mutatingwebhookconfiguration";
    admissionregistration_validatingadmissionpolicy: ValidatingAdmissionPolicy =
        "admissionregistration/validatingadmissionpolicy";
    admissionregistration_validatingadmissionpolicybinding: ValidatingAdmissionPolicyBinding =
        "admissionregistration/validatingadmissionpolicybinding";
    flowcontrol_flowschema: FlowSchema = "flowcontrol/flowschema";
    flowcontrol_prioritylevelconfiguration: PriorityLevelConfiguration =
        "flowcontrol/prioritylevelconfiguration";
    flowcontrol_prioritylevelconfiguration_reject: PriorityLevelConfiguration =
        "flowcontrol/prioritylevelconfiguration-reject";
}
