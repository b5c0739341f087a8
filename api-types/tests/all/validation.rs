//! Validation errors and unknown fields carry Kubernetes' field paths.

use crate::common;
#[path = "validation/upstream.rs"]
mod upstream;

use common::{admit, admit_clean, error_paths, fixture, object};
use kapi_api_types::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use kapi_api_types::batch::v1::{CronJob, Job};
use kapi_api_types::coordination::v1::Lease;
use kapi_api_types::core::v1::{
    ConfigMap, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod,
    ReplicationController, Secret, Service,
};
use kapi_api_types::networking::v1::{Ingress, NetworkPolicy};
use kapi_api_types::policy::v1::PodDisruptionBudget;
use kapi_api_types::rbac::v1::{ClusterRole, Role, RoleBinding};
use kapi_api_types::scheduling::v1::PriorityClass;
use kapi_runtime::validation::FieldErrorKind;
use serde_json::json;

#[test]
fn container_errors_point_into_the_list() {
    let admitted = admit::<Pod>(object(json!({
        "metadata": {"name": "bad"},
        "spec": {
            "restartPolicy": "Sometimes",
            "containers": [
                {"image": "nginx"},
                {"name": "Web_1", "ports": [{"containerPort": 70000, "protocol": "HTTP"}]}
            ],
            "initContainers": [{"name": "init", "image": "busybox", "restartPolicy": "Never"}]
        }
    })));
    assert_eq!(
        error_paths(&admitted),
        [
            "spec.initContainers[0].restartPolicy",
            "spec.containers[0].name",
            "spec.containers[1].name",
            "spec.containers[1].image",
            "spec.restartPolicy",
            "spec.containers[1].ports[0].containerPort",
            "spec.containers[1].ports[0].protocol",
        ]
    );
    let first = &admitted.errors.0[1];
    assert_eq!(first.kind, FieldErrorKind::Required);
    assert_eq!(first.to_string(), "spec.containers[0].name: Required value");
    let port = &admitted.errors.0[5];
    assert_eq!(
        port.to_string(),
        "spec.containers[1].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"
    );
    let protocol = &admitted.errors.0[6];
    assert_eq!(protocol.kind, FieldErrorKind::NotSupported);
}

#[test]
fn a_pod_needs_containers() {
    let admitted = admit::<Pod>(object(json!({"metadata": {"name": "empty"}, "spec": {}})));
    assert_eq!(error_paths(&admitted), ["spec.containers"]);
}

#[test]
fn nested_pod_fields() {
    let admitted = admit::<Pod>(object(json!({
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "c", "image": "x:1",
                "env": [{"value": "no name"}],
                "volumeMounts": [{"name": "v"}],
                "securityContext": {"seccompProfile": {"type": "Whatever"}}}],
            "volumes": [{"name": "v", "configMap": {"name": "c", "defaultMode": 4095}}],
            "tolerations": [{"key": "k", "operator": "Maybe"}],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 0, "podAffinityTerm": {"topologyKey": ""}}
            ]}}
        }
    })));
    assert_eq!(
        error_paths(&admitted),
        [
            "spec.containers[0].env[0].name",
            "spec.containers[0].volumeMounts[0].mountPath",
            "spec.containers[0].securityContext.seccompProfile.type",
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
            // Required, then two label-name errors of "" (as upstream).
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey",
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey",
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey",
            "spec.tolerations[0].operator",
            // The pod-wide hook: the volume's mode, then the mount of a volume
            // with errors (as upstream, not found).
            "spec.volumes[0].configMap.defaultMode",
            "spec.containers[0].volumeMounts[0].name",
        ]
    );
}

/// Text that is no quantity fails to decode, as Go's Quantity.UnmarshalJSON
/// fails: kube-apiserver answers 400 ("cannot be handled as a Pod: quantities
/// must match ..."), not a 422 naming the field.
#[test]
fn a_quantity_that_does_not_parse_is_a_decode_error() {
    let ops = kapi_runtime::scheme::KindEntry::of::<Pod>().ops;
    let pod = |cpu: serde_json::Value| {
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x",
            "resources": {"limits": {"cpu": cpu}}}]}})
    };
    let error = ops.decode_value(pod(json!("lots"))).unwrap_err();
    assert_eq!(
        error,
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    );
    assert!(ops.decode_value(pod(json!(""))).is_err());
    let json = serde_json::to_vec(&pod(json!("1x"))).unwrap();
    assert_eq!(
        ops.decode_json(&json).unwrap_err(),
        error,
        "no position in the text"
    );
    for good in [json!("500m"), json!(" 1Gi "), json!(2), json!("1e3")] {
        assert!(ops.decode_value(pod(good.clone())).is_ok(), "{good}");
    }
}

#[test]
fn service_ports_and_type() {
    // The node port's range is the allocator's check, not validation's.
    let admitted = admit::<Service>(object(json!({
        "metadata": {"name": "s"},
        "spec": {"type": "Internal", "ports": [{"port": 0}, {"name": "Bad_Name", "port": 80, "nodePort": 70000}]}
    })));
    assert_eq!(
        error_paths(&admitted),
        [
            "spec.ports[1].name",
            "spec.type",
            "spec.ports[0].name",
            "spec.ports[0].port",
            "spec.ports[0].targetPort",
        ]
    );
    assert_eq!(
        admitted.errors.0[3].to_string(),
        "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"
    );
}

#[test]
fn deployment_selector_rules() {
    let mut missing = fixture("deployment.json");
    missing["spec"]
        .as_object_mut()
        .expect("spec")
        .remove("selector");
    // A missing selector selects nothing, so the template does not match.
    assert_eq!(
        error_paths(&admit::<Deployment>(missing)),
        ["spec.selector", "spec.template.metadata.labels"]
    );

    let mut mismatch = fixture("deployment.json");
    mismatch["spec"]["selector"] = json!({"matchLabels": {"app": "api"}});
    let admitted = admit::<Deployment>(mismatch);
    assert_eq!(
        admitted.errors.summary(),
        "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\", \
         \"tier\":\"frontend\"}: `selector` does not match template `labels`"
    );

    let mut empty = fixture("deployment.json");
    empty["spec"]["selector"] = json!({});
    assert_eq!(error_paths(&admit::<Deployment>(empty)), ["spec.selector"]);

    let mut restart = fixture("deployment.json");
    restart["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    restart["spec"]["strategy"] = json!({"type": "Recreate", "rollingUpdate": {"maxSurge": 1}});
    restart["spec"]["replicas"] = json!(-1);
    assert_eq!(
        error_paths(&admit::<Deployment>(restart)),
        [
            "spec.replicas",
            "spec.template.spec.restartPolicy",
            "spec.strategy.rollingUpdate"
        ]
    );
}

#[test]
fn taints_need_a_known_effect() {
    let admitted = admit::<Node>(object(json!({
        "metadata": {"name": "n"},
        "spec": {"taints": [{"key": "k", "effect": "Sometimes"}, {"effect": "NoSchedule"}]}
    })));
    assert_eq!(
        error_paths(&admitted),
        // Upstream reports taints under `metadata` (validateNodeTaints).
        [
            "metadata.taints[0].effect",
            "metadata.taints[1].key",
            "metadata.taints[1].key"
        ]
    );
}

#[test]
fn unknown_fields_are_reported_with_their_paths() {
    let mut pod = fixture("pod.json");
    pod["spec"]["containers"][0]["livenessProbe"]["httpGet"]["verb"] = json!("GET");
    pod["spec"]["volumes"][0]["gitlab"] = json!({});
    pod["spec"]["hostNetworking"] = json!(true);
    let admitted = admit::<Pod>(pod);
    let mut unknown = admitted.unknown_fields.clone();
    unknown.sort();
    assert_eq!(
        unknown,
        [
            "spec.containers[0].livenessProbe.httpGet.verb",
            "spec.hostNetworking",
            "spec.volumes[0].gitlab",
        ]
    );
}

#[test]
fn wrong_json_types_are_decode_errors() {
    let result = common::try_admit::<Pod>(object(
        json!({"metadata": {"name": "p"}, "spec": {"containers": "nginx"}}),
    ));
    assert!(result.is_err());
}

#[test]
fn objects_of_the_real_server_are_valid() {
    admit_clean::<Pod>(fixture("pod.json"));
    admit_clean::<Service>(fixture("service.json"));
    admit_clean::<Deployment>(fixture("deployment.json"));
    admit_clean::<DaemonSet>(fixture("apps/daemonset.json"));
    admit_clean::<ReplicaSet>(fixture("apps/replicaset.json"));
    // Its claim templates carry `kind` and `apiVersion`, which the decoder
    // reports as unknown fields: only the validation is checked here.
    let set = admit::<StatefulSet>(fixture("apps/statefulset.json"));
    assert!(set.errors.is_empty(), "{}", set.errors.summary());
    for name in [
        "kubectl-service.json",
        "kubectl-service-lb.json",
        "kubectl-service-externalname.json",
    ] {
        admit_clean::<Service>(fixture(name));
    }
    admit_clean::<Deployment>(fixture("kubectl-deployment.json"));
    admit_clean::<Secret>(fixture("secret.json"));
    admit_clean::<Secret>(fixture("kubectl-secret.json"));
    admit_clean::<Secret>(fixture("kubectl-secret-docker.json"));
    admit_clean::<ConfigMap>(fixture("kubectl-configmap.json"));
    admit_clean::<ReplicationController>(fixture("core/replicationcontroller.json"));
    admit_clean::<PersistentVolumeClaim>(fixture("core/persistentvolumeclaim.json"));
    admit_clean::<PersistentVolume>(fixture("core/persistentvolume.json"));
    admit_clean::<Node>(fixture("node.json"));
}

/// Objects read back from the real server (with status and server-set
/// fields) pass our validation too; only the errors are checked, as some
/// carry fields the decoder reports as unknown.
#[test]
fn stored_objects_of_the_real_server_are_valid() {
    fn valid<K: kapi_runtime::Resource>(name: &str) {
        let admitted = admit::<K>(fixture(name));
        assert!(
            admitted.errors.is_empty(),
            "{name}: {}",
            admitted.errors.summary()
        );
    }
    valid::<Job>("batch/job.json");
    valid::<Job>("batch/job-complete.json");
    valid::<CronJob>("batch/cronjob.json");
    valid::<Lease>("coordination/lease.json");
    valid::<Ingress>("networking/ingress.json");
    valid::<Ingress>("networking/ingress-minimal.json");
    valid::<NetworkPolicy>("networking/networkpolicy.json");
    valid::<PodDisruptionBudget>("policy/poddisruptionbudget.json");
    valid::<Role>("rbac/role.json");
    valid::<ClusterRole>("rbac/clusterrole.json");
    valid::<RoleBinding>("rbac/rolebinding.json");
    valid::<PriorityClass>("scheduling/priorityclass.json");
}

#[test]
fn create_only_rules_are_lifted_on_update() {
    use kapi_runtime::{DynObject, Resource};
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "web", "image": "nginx"}],
            "ephemeralContainers": [{"name": "debug", "image": "busybox"}]
        }
    }))
    .expect("a pod");
    let mut new = pod.clone();
    let mut errs = DynObject::admit(&mut new);
    assert_eq!(
        errs.summary(),
        "spec.ephemeralContainers: Forbidden: cannot be set on create"
    );
    let mut old = pod;
    // The stored object went through the same admission.
    let _ = DynObject::admit(&mut old);
    Resource::validate_update(&new, &old, &mut errs);
    assert!(errs.is_empty(), "{}", errs.summary());

    // A schedule that already had a TZ= prefix may keep it.
    let cron: CronJob = serde_json::from_value(json!({
        "metadata": {"name": "c"},
        "spec": {"schedule": "TZ=UTC 0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "w", "image": "busybox"}]
        }}}}}
    }))
    .expect("a cron job");
    let mut new = cron.clone();
    let mut errs = DynObject::admit(&mut new);
    assert_eq!(errs.0.len(), 1, "{}", errs.summary());
    let mut old = cron;
    let _ = DynObject::admit(&mut old);
    Resource::validate_update(&new, &old, &mut errs);
    assert!(errs.is_empty(), "{}", errs.summary());
}

#[test]
fn a_job_template_changes_only_while_suspended_and_only_its_scheduling() {
    use kapi_runtime::{DynObject, Resource};
    let job = |suspend: bool, template: serde_json::Value| -> Job {
        let mut job: Job = serde_json::from_value(json!({
            "metadata": {"name": "j"},
            "spec": {"suspend": suspend, "manualSelector": true,
                "selector": {"matchLabels": {"job": "a"}}, "template": template}
        }))
        .expect("a job");
        let errs = DynObject::admit(&mut job);
        assert!(errs.is_empty(), "{}", errs.summary());
        job
    };
    let template = json!({"metadata": {"labels": {"job": "a"}}, "spec": {
        "restartPolicy": "Never", "containers": [{"name": "w", "image": "busybox"}]}});
    let mut new_image = template.clone();
    new_image["spec"]["containers"][0]["image"] = json!("busybox:2");
    let mut new_selector = template.clone();
    new_selector["spec"]["nodeSelector"] = json!({"zone": "a"});
    let update = |suspend: bool, new: &serde_json::Value| {
        let mut errs = kapi_runtime::validation::FieldErrors::default();
        Resource::validate_update(
            &job(suspend, new.clone()),
            &job(suspend, template.clone()),
            &mut errs,
        );
        errs.summary()
    };
    // As kube-apiserver 1.32 answers (fixtures job_template_update,
    // job_suspended_update, which it accepted), but for the value,
    // which upstream prints as the whole Go template.
    let immutable = "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable";
    assert_eq!(update(false, &new_image), immutable);
    assert_eq!(update(true, &new_image), immutable);
    assert_eq!(update(true, &new_selector), "[]", "accepted");
    assert_eq!(update(false, &new_selector), immutable);
}

/// Valid objects that exercise the volume, scheduling and job policy rules,
/// each accepted by kube-apiserver 1.32 (dry-run creates): no false alarms.
/// The volumes include what clients commonly send (kubectl writes
/// `creationTimestamp: null` into templates).
#[test]
fn valid_volumes_scheduling_and_job_policies_are_accepted() {
    admit_clean::<Pod>(fixture("validation/valid/pod_volumes.json"));
    admit_clean::<Pod>(fixture("validation/valid/pod_scheduling.json"));
    admit_clean::<Job>(fixture("validation/valid/job_policies.json"));
}

#[test]
fn a_volume_node_affinity_changes_only_from_beta_to_ga_labels() {
    use kapi_runtime::{DynObject, Resource};
    let pv = |key: &str, value: &str| -> PersistentVolume {
        let mut pv: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": "v"},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
                "hostPath": {"path": "/tmp/a"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": key, "operator": "In", "values": [value]}]}]}}}
        }))
        .expect("a persistent volume");
        let errs = DynObject::admit(&mut pv);
        assert!(errs.is_empty(), "{}", errs.summary());
        pv
    };
    let update = |new: &PersistentVolume, old: &PersistentVolume| {
        let mut errs = kapi_runtime::validation::FieldErrors::default();
        Resource::validate_update(new, old, &mut errs);
        errs.summary()
    };
    let beta = pv("failure-domain.beta.kubernetes.io/zone", "a");
    assert_eq!(update(&pv("topology.kubernetes.io/zone", "a"), &beta), "[]");
    // As kube-apiserver 1.32 answers (fixture pv_update_affinity), but for the
    // value, which upstream prints with a Go pointer.
    assert_eq!(
        update(&pv("topology.kubernetes.io/zone", "b"), &beta),
        "nodeAffinity: Invalid value: core.VolumeNodeAffinity{...}: field is immutable, except \
         for updating from beta label to GA"
    );
}

/// One test per recorded case of `tests/fixtures/validation/<group>/`: the kind,
/// the group directory, then the case names.
macro_rules! upstream_cases {
    ($kind:ty, $group:literal: $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                upstream::check::<$kind>(concat!($group, "/", stringify!($case)));
            }
        )*
    };
}

upstream_cases!(Pod, "core":
    pod_container_names,
    pod_container_ports,
    pod_env,
    pod_ephemeral,
    pod_env_refs,
    pod_init_containers,
    pod_probe_details,
    pod_probe_ports,
    pod_update_deadline,
    pod_update_forbidden,
    pod_policies,
    pod_probes,
    pod_resources,
    pod_scheduling,
    pod_security,
    pod_spec_fields,
    pod_volumes,
    pod_volume_projected,
    pod_volume_sources,
    pod_downward_files,
    pod_ephemeral_names,
    pod_node_affinity,
    pod_node_affinity_empty,
    pod_pod_affinity,
    pod_spread_tolerations,
);

upstream_cases!(Service, "core":
    service_ips_only,
    service_families_added,
    service_families_bad,
    service_families_update,
    service_ips_bad_second,
    service_ips_family_order,
    service_ips_mismatch,
    service_ips_none_first,
    service_ips_same_family,
    service_ips_three,
    service_single_two,
    service_affinity,
    service_cluster_ip_bad,
    service_cluster_ip_node_port,
    service_cluster_ip_update,
    service_external_name,
    service_external_name_missing,
    service_headless_np,
    service_lb_ranges,
    service_no_ports,
    service_ports,
    service_type,
);

upstream_cases!(Deployment, "apps":
    deployment_counts,
    deployment_ephemeral,
    deployment_recreate,
    deployment_selector_empty,
    deployment_selector_mismatch,
    deployment_selector_missing,
    deployment_selector_update,
    deployment_strategy_negative,
    deployment_strategy_type,
    deployment_strategy_values,
    deployment_strategy_zero,
    deployment_template_labels,
);

upstream_cases!(ReplicaSet, "apps": replicaset_selector, replicaset_selector_update);

upstream_cases!(DaemonSet, "apps":
    daemonset_empty_selector,
    daemonset_no_selector,
    daemonset_selector_update,
    daemonset_strategy,
    daemonset_strategy_type,
);

upstream_cases!(StatefulSet, "apps":
    statefulset_pod_spec,
    statefulset_rolling,
    statefulset_spec,
    statefulset_strategy_type,
    statefulset_update_forbidden,
);

upstream_cases!(Job, "batch":
    job_completions_high,
    job_managed_by,
    job_managed_by_bad,
    job_managed_by_long,
    job_backoff_per_index,
    job_backoff_per_index_nonindexed,
    job_max_failed_alone,
    job_pod_failure_policy,
    job_pod_failure_policy_empty,
    job_replacement_bogus,
    job_replacement_pfp,
    job_success_policy,
    job_success_policy_empty,
    job_too_many,
    job_counts,
    job_indexed,
    job_manual_selector,
    job_restart_always,
    job_restart_default,
    job_update,
    job_update_completions,
    job_update_policies,
);

upstream_cases!(CronJob, "batch":
    cronjob_bad_words,
    cronjob_missing,
    cronjob_schedule,
    cronjob_tz_in_schedule,
    cronjob_tz_update,
);

upstream_cases!(ConfigMap, "core": configmap_immutable, configmap_keys);

upstream_cases!(Secret, "core":
    secret_basic_auth,
    secret_dockerconfigjson,
    secret_ssh_auth,
    secret_tls,
    secret_type_update,
);

upstream_cases!(PersistentVolumeClaim, "core": pvc_missing, pvc_spec, pvc_update);

upstream_cases!(Node, "core":
    node_taints,
    node_cidrs_same_family,
    node_cidrs_three,
    node_update_cidr,
    node_update_cidr_added,
    node_update_provider,
);

upstream_cases!(Namespace, "core": namespace_finalizers);

// `core/pv_update_affinity` is recorded but not run: upstream's message
// prints a Go pointer (`core.VolumeNodeAffinity{Required:(*core.NodeSelector)(0xc...)}`).
upstream_cases!(PersistentVolume, "core":
    pv_missing,
    pv_spec,
    pv_azure_file,
    pv_cinder,
    pv_csi,
    pv_flex,
    pv_glusterfs,
    pv_glusterfs_namespace,
    pv_iscsi,
    pv_iscsi_secret,
    pv_local_no_affinity,
    pv_node_affinity_empty,
    pv_node_affinity_no_terms,
    pv_node_affinity_terms,
    pv_scaleio,
    pv_storageos,
    pv_update_mode,
    pv_update_source,
);

upstream_cases!(ReplicationController, "core": rc_spec);

// The cases of the smaller API groups (networking, policy, RBAC, storage,
// scheduling, coordination, discovery, node, autoscaling, events).
#[path = "validation/upstream_apis.rs"]
mod upstream_apis;

// admissionregistration.k8s.io: webhook configurations and admission policies.
#[path = "validation/upstream_admission.rs"]
mod upstream_admission;

// flowcontrol, apiregistration and certificates.
#[path = "validation/upstream_control.rs"]
mod upstream_control;

// The core kinds beyond those above: service accounts, endpoints, limit
// ranges, quotas, pod templates.
#[path = "validation/upstream_core_rest.rs"]
mod upstream_core_rest;

// The kinds surveyed last: CSINode and VolumeAttachment updates, runtime
// class tolerations, HPA updates, CIDRs, controller revisions, storage
// capacities, bindings and the review kinds.
#[path = "validation/upstream_rest.rs"]
mod upstream_rest;
