//! Realistic manifests go through the admit path: every field is understood, the
//! objects are valid, and Kubernetes' defaults are applied.

use crate::common;

use common::{admit_clean, fixture, object};
use kapi_api_types::apps::v1::Deployment;
use kapi_api_types::core::v1::{ConfigMap, Event, Namespace, Node, Pod, Secret, Service};
use serde_json::json;

#[test]
fn full_featured_pod() {
    let pod = admit_clean::<Pod>(fixture("pod.json"));
    let spec = &pod["spec"];
    // PodSpec defaults.
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["terminationGracePeriodSeconds"], 45);
    assert_eq!(
        spec["enableServiceLinks"], false,
        "an explicit value is kept"
    );
    // Container defaults.
    let web = &spec["containers"][0];
    assert_eq!(web["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(web["terminationMessagePolicy"], "FallbackToLogsOnError");
    assert_eq!(web["imagePullPolicy"], "IfNotPresent");
    assert_eq!(web["ports"][0]["protocol"], "TCP");
    assert_eq!(web["livenessProbe"]["httpGet"]["scheme"], "HTTP");
    assert_eq!(web["livenessProbe"]["httpGet"]["port"], "http");
    assert_eq!(web["livenessProbe"]["timeoutSeconds"], 1);
    assert_eq!(web["livenessProbe"]["periodSeconds"], 15);
    assert_eq!(web["livenessProbe"]["successThreshold"], 1);
    assert_eq!(web["livenessProbe"]["failureThreshold"], 3);
    assert_eq!(web["readinessProbe"]["tcpSocket"]["port"], 8080);
    assert_eq!(web["readinessProbe"]["periodSeconds"], 10);
    assert_eq!(web["env"][1]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
    assert_eq!(
        web["env"][3]["valueFrom"]["resourceFieldRef"]["divisor"],
        "1Mi"
    );
    assert_eq!(
        web["env"][4]["valueFrom"]["resourceFieldRef"]["divisor"],
        "0"
    );
    // Requests default to limits, on pods only.
    assert_eq!(web["resources"]["requests"]["ephemeral-storage"], "1Gi");
    assert_eq!(web["resources"]["requests"]["cpu"], "250m");
    let sidecar = &spec["containers"][1];
    assert_eq!(sidecar["imagePullPolicy"], "Always", "untagged image");
    assert_eq!(sidecar["livenessProbe"]["grpc"]["service"], "");
    assert_eq!(
        sidecar["resources"]["requests"],
        json!({"cpu": "100m", "memory": "64Mi"})
    );
    assert_eq!(spec["initContainers"][1]["restartPolicy"], "Always");
    // Volume defaults.
    let volumes = spec["volumes"].as_array().expect("volumes");
    assert_eq!(volumes[0]["configMap"]["defaultMode"], 420);
    assert_eq!(volumes[1]["secret"]["defaultMode"], 256);
    assert_eq!(volumes[5]["projected"]["defaultMode"], 420);
    let sources = &volumes[5]["projected"]["sources"];
    assert_eq!(sources[0]["serviceAccountToken"]["expirationSeconds"], 7200);
    assert_eq!(volumes[6]["downwardAPI"]["defaultMode"], 420);
    assert_eq!(
        volumes[6]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
        "v1"
    );
    let claim = &volumes[9]["ephemeral"]["volumeClaimTemplate"]["spec"];
    assert_eq!(claim["volumeMode"], "Filesystem");
    assert_eq!(volumes[10]["hostPath"]["type"], "File");
    // Status of a new pod.
    assert_eq!(pod["status"]["phase"], "Pending");
    assert_eq!(pod["status"]["qosClass"], "Burstable");
}

#[test]
fn minimal_pod_gets_every_default() {
    let pod = admit_clean::<Pod>(object(json!({
        "metadata": {"name": "nginx"},
        "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}], "volumes": [{"name": "scratch"}]}
    })));
    assert_eq!(
        pod["spec"],
        json!({
            "volumes": [{"name": "scratch", "emptyDir": {}}],
            "containers": [{
                "name": "nginx",
                "image": "nginx",
                "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
                "imagePullPolicy": "Always"
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "securityContext": {},
            "schedulerName": "default-scheduler",
            "enableServiceLinks": true
        })
    );
    assert_eq!(
        pod["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
}

#[test]
fn host_network_pods_publish_container_ports_on_the_host() {
    let pod = admit_clean::<Pod>(object(json!({
        "metadata": {"name": "dns"},
        "spec": {"hostNetwork": true, "containers": [{"name": "dns", "image": "coredns:1.11", "ports": [{"containerPort": 53, "protocol": "UDP"}]}]}
    })));
    assert_eq!(pod["spec"]["containers"][0]["ports"][0]["hostPort"], 53);
}

#[test]
fn guaranteed_pods() {
    let pod = admit_clean::<Pod>(object(json!({
        "metadata": {"name": "db"},
        "spec": {"containers": [{"name": "db", "image": "postgres:16",
            "resources": {"limits": {"cpu": "2", "memory": "4Gi"}, "requests": {"cpu": "2000m"}}}]}
    })));
    assert_eq!(pod["status"]["qosClass"], "Guaranteed");
}

#[test]
fn deployment() {
    let deploy = admit_clean::<Deployment>(fixture("deployment.json"));
    let spec = &deploy["spec"];
    assert_eq!(spec["replicas"], 3);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["securityContext"], json!({}));
    assert_eq!(pod["volumes"][0], json!({"name": "tmp", "emptyDir": {}}));
    assert_eq!(pod["containers"][0]["imagePullPolicy"], "IfNotPresent");
    assert_eq!(pod["containers"][1]["imagePullPolicy"], "Always");
    assert_eq!(
        pod["containers"][0]["readinessProbe"]["httpGet"]["path"],
        "/"
    );
    // Pod-only defaults stay out of templates.
    assert!(pod.get("enableServiceLinks").is_none());
    assert!(
        pod["containers"][0]["resources"]["requests"]
            .get("memory")
            .is_some()
    );
    assert_eq!(
        pod["containers"][0]["resources"]["requests"]["memory"],
        "128Mi"
    );
    assert_eq!(deploy["status"], json!({}));
}

#[test]
fn deployment_defaults_replicas_and_recreate_strategy() {
    let deploy = admit_clean::<Deployment>(object(json!({
        "metadata": {"name": "batch"},
        "spec": {
            "selector": {"matchLabels": {"app": "batch"}},
            "strategy": {"type": "Recreate"},
            "template": {"metadata": {"labels": {"app": "batch"}}, "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}
        }
    })));
    assert_eq!(deploy["spec"]["replicas"], 1);
    assert_eq!(deploy["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[test]
fn service() {
    let svc = admit_clean::<Service>(fixture("service.json"));
    let spec = &svc["spec"];
    assert_eq!(spec["ports"][0]["protocol"], "TCP");
    assert_eq!(spec["ports"][0]["targetPort"], "http");
    assert_eq!(spec["ports"][2]["protocol"], "UDP");
    assert_eq!(
        spec["ports"][2]["targetPort"], 53,
        "targetPort defaults to port"
    );
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(spec["externalTrafficPolicy"], "Cluster");
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert_eq!(spec["clusterIPs"], json!(["10.96.12.34"]));
    assert!(spec.get("allocateLoadBalancerNodePorts").is_none());
    assert_eq!(svc["status"], json!({"loadBalancer": {}}));
}

#[test]
fn load_balancer_and_session_affinity_defaults() {
    let svc = admit_clean::<Service>(object(json!({
        "metadata": {"name": "lb"},
        "spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP", "ports": [{"port": 443}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}, {"hostname": "lb.example.com"}]}}
    })));
    let spec = &svc["spec"];
    assert_eq!(spec["allocateLoadBalancerNodePorts"], true);
    assert_eq!(
        spec["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 10800}})
    );
    assert_eq!(spec["externalTrafficPolicy"], "Cluster");
    let ingress = &svc["status"]["loadBalancer"]["ingress"];
    assert_eq!(ingress[0]["ipMode"], "VIP");
    assert!(ingress[1].get("ipMode").is_none());
}

#[test]
fn minimal_service_is_cluster_ip() {
    let svc = admit_clean::<Service>(object(json!({
        "metadata": {"name": "api"},
        "spec": {"selector": {"app": "api"}, "ports": [{"port": 80, "targetPort": 8080}]}
    })));
    assert_eq!(svc["spec"]["type"], "ClusterIP");
    assert!(svc["spec"].get("externalTrafficPolicy").is_none());
}

#[test]
fn node_with_status() {
    let node = admit_clean::<Node>(fixture("node.json"));
    assert_eq!(node["status"]["allocatable"], node["status"]["capacity"]);
    assert_eq!(
        node["status"]["daemonEndpoints"],
        json!({"kubeletEndpoint": {"Port": 10250}})
    );
    assert_eq!(
        node["spec"]["taints"][0]["timeAdded"],
        "2024-05-01T12:00:00Z"
    );
    assert_eq!(
        node["status"]["conditions"][1]["lastHeartbeatTime"],
        "2024-05-01T12:00:00Z"
    );
}

#[test]
fn event() {
    let event = admit_clean::<Event>(fixture("event.json"));
    assert_eq!(event["involvedObject"]["fieldPath"], "spec.containers{web}");
    assert_eq!(event["count"], 7);
    assert_eq!(
        event["eventTime"],
        json!(null),
        "Go writes a zero MicroTime as null"
    );
}

#[test]
fn new_style_event_with_series() {
    let event = admit_clean::<Event>(object(json!({
        "metadata": {"name": "x.1", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "worker-1"},
        "eventTime": "2024-05-01T12:00:00.123456Z",
        "series": {"count": 3, "lastObservedTime": "2024-05-01T12:10:00.5Z"},
        "action": "Rebooted",
        "related": {"kind": "Pod", "name": "p"},
        "reportingComponent": "kubelet",
        "reportingInstance": "worker-1",
        "type": "Normal",
        "reason": "Rebooted"
    })));
    assert_eq!(event["eventTime"], "2024-05-01T12:00:00.123456Z");
    assert_eq!(
        event["series"]["lastObservedTime"],
        "2024-05-01T12:10:00.500000Z"
    );
    assert_eq!(event["source"], json!({}));
    assert_eq!(event["firstTimestamp"], json!(null));
}

#[test]
fn namespace_gets_phase_name_label_and_finalizer() {
    let ns = admit_clean::<Namespace>(object(json!({"metadata": {"name": "shop"}})));
    assert_eq!(ns["status"], json!({"phase": "Active"}));
    assert_eq!(ns["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(
        ns["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": "shop"})
    );
    let terminating = admit_clean::<Namespace>(object(json!({
        "metadata": {"name": "old"},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Terminating"}
    })));
    assert_eq!(terminating["status"]["phase"], "Terminating");
}

#[test]
fn configmap_with_binary_data() {
    let cm = admit_clean::<ConfigMap>(object(json!({
        "metadata": {"name": "web-config", "namespace": "shop"},
        "immutable": true,
        "data": {"app.yaml": "port: 8080\n", "log-level": "info"},
        "binaryData": {"logo.png": "iVBORw0KGgo="}
    })));
    assert_eq!(cm["binaryData"]["logo.png"], "iVBORw0KGgo=");
    assert_eq!(cm["immutable"], true);
}

#[test]
fn secret_type_defaults_to_opaque() {
    let secret = admit_clean::<Secret>(fixture("secret.json"));
    assert_eq!(secret["type"], "Opaque");
}
