//! Service ClusterIP and NodePort allocation, answered as kube-apiserver 1.32
//! answers (its messages recorded from the reference server; its range was
//! 10.96.0.0/16, kapi's default is 10.96.0.0/12).

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::Request;
use kapi_runtime::scheme::Scheme;
use kapi_server::kinds::{self, ServiceRanges};
use kapi_server::registry::Registry;
use kapi_server::{App, app};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::common::harness;

const SERVICES: &str = "/api/v1/namespaces/default/services";

fn service(name: &str, spec: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn cluster_ips_are_allocated_honoured_refused_and_released() {
    let h = harness().await;
    let (code, v) = h
        .call(
            "POST",
            SERVICES,
            service("a", json!({"ports": [{"port": 80}]})),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let ip = v["spec"]["clusterIP"].as_str().unwrap().to_owned();
    assert!(ip.starts_with("10."), "{ip}");
    assert_eq!(v["spec"]["clusterIPs"], json!([ip]));
    assert_eq!(v["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(v["spec"]["ipFamilyPolicy"], "SingleStack");

    let fixed = json!({"clusterIP": "10.96.0.50", "ports": [{"port": 80}]});
    let (code, v) = h.call("POST", SERVICES, service("b", fixed.clone())).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["spec"]["clusterIPs"], json!(["10.96.0.50"]));
    let (code, v) = h.call("POST", SERVICES, service("c", fixed.clone())).await;
    assert_eq!(code, 422);
    assert_eq!(
        v["message"],
        "Service \"c\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.96.0.50\"}: \
         failed to allocate IP 10.96.0.50: provided IP is already allocated"
    );
    let outside = json!({"clusterIP": "10.200.0.5", "ports": [{"port": 80}]});
    let (code, v) = h.call("POST", SERVICES, service("d", outside)).await;
    assert_eq!(code, 422);
    assert_eq!(
        v["message"],
        "Service \"d\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.200.0.5\"}: \
         failed to allocate IP 10.200.0.5: the provided IP (10.200.0.5) is not in the valid \
         range. The range of valid IPs is 10.96.0.0/12"
    );

    // A dry run takes nothing; a delete gives the address back.
    let (code, _) = h
        .call(
            "POST",
            &format!("{SERVICES}?dryRun=All"),
            service(
                "e",
                json!({
            "clusterIP": "10.96.0.60", "ports": [{"port": 80}]}),
            ),
        )
        .await;
    assert_eq!(code, 201);
    let (code, v) = h
        .call(
            "POST",
            SERVICES,
            service(
                "f",
                json!({"clusterIP": "10.96.0.60", "ports": [{"port": 80}]}),
            ),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let (code, _) = h
        .call("DELETE", &format!("{SERVICES}/b"), Value::Null)
        .await;
    assert_eq!(code, 200);
    let (code, v) = h.call("POST", SERVICES, service("c", fixed)).await;
    assert_eq!(code, 201, "released on delete: {v}");

    // Headless and ExternalName Services take none.
    let (_, v) = h
        .call(
            "POST",
            SERVICES,
            service("h", json!({"clusterIP": "None", "ports": [{"port": 80}]})),
        )
        .await;
    assert_eq!(v["spec"]["clusterIPs"], json!(["None"]));
    assert_eq!(v["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    assert_eq!(v["spec"]["ipFamilyPolicy"], "RequireDualStack");
    let (_, v) = h
        .call(
            "POST",
            SERVICES,
            service(
                "x",
                json!({"type": "ExternalName", "externalName": "example.com"}),
            ),
        )
        .await;
    assert!(v["spec"].get("clusterIP").is_none(), "{v}");

    // A single-stack cluster refuses what it cannot give.
    let (code, v) = h
        .call(
            "POST",
            SERVICES,
            service(
                "v6",
                json!({"ipFamilies": ["IPv6"], "ports": [{"port": 80}]}),
            ),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        v["message"],
        "Service \"v6\" is invalid: spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on this cluster"
    );
    let (code, v) = h
        .call(
            "POST",
            SERVICES,
            service(
                "dual",
                json!({"ipFamilyPolicy": "RequireDualStack", "ports": [{"port": 80}]}),
            ),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        v["message"],
        "Service \"dual\" is invalid: spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": \
         this cluster is not configured for dual-stack services"
    );
}

#[tokio::test]
async fn node_ports_follow_the_type() {
    let h = harness().await;
    let spec = json!({"type": "NodePort", "ports": [
        {"name": "a", "port": 53}, {"name": "b", "port": 53, "protocol": "UDP"}]});
    let (code, v) = h.call("POST", SERVICES, service("np", spec)).await;
    assert_eq!(code, 201, "{v}");
    let a = v["spec"]["ports"][0]["nodePort"].as_i64().unwrap();
    assert!((30000..=32767).contains(&a));
    assert_eq!(
        v["spec"]["ports"][1]["nodePort"], a,
        "one number for both protocols"
    );

    let fixed = json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30100}]});
    let (code, _) = h.call("POST", SERVICES, service("p1", fixed.clone())).await;
    assert_eq!(code, 201);
    let (code, v) = h.call("POST", SERVICES, service("p2", fixed.clone())).await;
    assert_eq!(code, 422);
    assert_eq!(
        v["message"],
        "Service \"p2\" is invalid: spec.ports[0].nodePort: Invalid value: 30100: provided port is already allocated"
    );
    let low = json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]});
    let (_, v) = h.call("POST", SERVICES, service("p3", low)).await;
    assert_eq!(
        v["message"],
        "Service \"p3\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is \
         not in the valid range. The range of valid ports is 30000-32767"
    );

    // Leaving NodePort drops the port and the policy, and gives the port back.
    let (code, v) = h
        .merge_patch(
            &format!("{SERVICES}/p1"),
            json!({"spec": {"type": "ClusterIP"}}),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert!(v["spec"]["ports"][0].get("nodePort").is_none(), "{v}");
    assert!(v["spec"].get("externalTrafficPolicy").is_none(), "{v}");
    let (code, v) = h.call("POST", SERVICES, service("p2", fixed)).await;
    assert_eq!(code, 201, "released on type change: {v}");

    // A LoadBalancer with a local policy gets a health check port.
    let lb =
        json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": [{"port": 80}]});
    let (code, v) = h.call("POST", SERVICES, service("lb", lb)).await;
    assert_eq!(code, 201, "{v}");
    assert!(v["spec"]["healthCheckNodePort"].as_i64().is_some(), "{v}");
    assert!(v["spec"]["ports"][0]["nodePort"].as_i64().is_some(), "{v}");

    // ExternalName -> ClusterIP is given an address; back again gives it up.
    let ext = json!({"type": "ExternalName", "externalName": "example.com"});
    h.call("POST", SERVICES, service("ext", ext)).await;
    let (code, v) = h
        .merge_patch(
            &format!("{SERVICES}/ext"),
            json!({"spec": {"type": "ClusterIP", "ports": [{"port": 80}]}}),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert!(
        v["spec"]["clusterIP"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.")),
        "{v}"
    );
    let (code, v) = h
        .merge_patch(
            &format!("{SERVICES}/lb"),
            json!({"spec": {"type": "ExternalName", "externalName": "a.example.com"}}),
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert!(v["spec"].get("clusterIP").is_none(), "{v}");
    assert!(v["spec"].get("healthCheckNodePort").is_none(), "{v}");
}

/// Two servers on one store (replicas on one etcd) never hand out one
/// address twice.
#[tokio::test]
async fn replicas_on_one_store_allocate_distinct_addresses() {
    let h = harness().await;
    // A range of 14 addresses, so that collisions would be likely.
    let ranges = ServiceRanges {
        cluster_ips: "10.0.0.0/28".parse().unwrap(),
        node_ports: (30000, 30013),
    };
    let replicas: Vec<Router> = (0..2).map(|_| router(&h, ranges.clone())).collect();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let router = replicas[i % 2].clone();
        tasks.push(tokio::spawn(async move {
            let body = service(
                &format!("s{i}"),
                json!({"type": "NodePort", "ports": [{"port": 80}]}),
            );
            post(router, body).await
        }));
    }
    let mut ips = Vec::new();
    let mut ports = Vec::new();
    let mut refused = 0;
    for task in tasks {
        let (code, v) = task.await.unwrap();
        if code == 201 {
            ips.push(v["spec"]["clusterIP"].as_str().unwrap().to_owned());
            ports.push(v["spec"]["ports"][0]["nodePort"].as_i64().unwrap());
        } else {
            assert_eq!(code, 500, "{v}");
            refused += 1;
        }
    }
    assert_eq!(ips.len(), 14, "the range holds 14: {ips:?}");
    assert_eq!(refused, 2);
    ips.sort();
    ips.dedup();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!((ips.len(), ports.len()), (14, 14), "no address given twice");
}

fn router(h: &crate::common::Harness, ranges: ServiceRanges) -> Router {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let registry = Registry::new(h.store.clone(), Arc::new(scheme))
        .with_admission(kapi_server::admission_plugins::builtin())
        .with_hooks(kinds::builtin(
            ranges,
            Default::default(),
            Default::default(),
        ));
    let (_, rx) = tokio::sync::watch::channel(false);
    app(Arc::new(App {
        registry,
        shutdown: rx,
        address: "127.0.0.1:0".into(),
        metrics: Default::default(),
        authenticator: Default::default(),
        authorizer: Default::default(),
        limiter: Default::default(),
        auditor: None,
        remote: Default::default(),
        checks: Default::default(),
        openapi: Default::default(),
    }))
}

trait MergePatch {
    async fn merge_patch(&self, uri: &str, patch: Value) -> (u16, Value);
}

impl MergePatch for crate::common::Harness {
    async fn merge_patch(&self, uri: &str, patch: Value) -> (u16, Value) {
        let (code, v, _) = self
            .send(
                "PATCH",
                uri,
                "application/merge-patch+json",
                patch.to_string().into_bytes(),
                None,
            )
            .await;
        (code.as_u16(), v)
    }
}

async fn post(router: Router, body: Value) -> (u16, Value) {
    let request = Request::builder()
        .method("POST")
        .uri(SERVICES)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let response = router.oneshot(request).await.unwrap();
    let code = response.status().as_u16();
    let bytes = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// The EndpointSlice controller writes a slice without endpoints for a
/// Service nothing backs yet; in protobuf the empty list is absent. Accepted
/// and read back with `"endpoints": null`, as upstream.
#[tokio::test]
async fn an_endpoint_slice_may_have_no_endpoints() {
    let h = harness().await;
    let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "e1"}, "addressType": "IPv4"});
    let (code, v) = h
        .call(
            "POST",
            "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
            slice,
        )
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["endpoints"], Value::Null);
    assert!(v.as_object().unwrap().contains_key("endpoints"), "{v}");
}
