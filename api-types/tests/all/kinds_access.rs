//! The access-control and cluster-service kinds (rbac, coordination, scheduling,
//! node and certificates, all v1) against objects the real kube-apiserver 1.32
//! sent (`tests/fixtures/<group>/<kind>.json` and `.pb`, fetched with `Accept:
//! application/json` and `application/vnd.kubernetes.protobuf`): the JSON
//! decodes without unknown fields and is written back as the same value (and
//! the same bytes), the protobuf decodes to the same object and is encoded again
//! to Go's exact bytes, and the `kubectl get` cells are the ones the real server
//! printed.

use kapi_api_types::certificates::v1::CertificateSigningRequest;
use kapi_api_types::coordination::v1::Lease;
use kapi_api_types::node::v1::RuntimeClass;
use kapi_api_types::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kapi_api_types::scheduling::v1::PriorityClass;
use kapi_runtime::Resource;
use kapi_runtime::proto::{Message, envelope};
use kapi_runtime::scheme::{KindEntry, Scheme};
use serde_json::{Value, json};

fn fixture(path: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Go's JSON decodes with every field known and is written back as the same
/// JSON value (type meta added), and by the server's writer as the same bytes.
fn check_json<K: Resource>(path: &str) -> K {
    let bytes = fixture(&format!("{path}.json"));
    let decoded = KindEntry::of::<K>()
        .ops
        .decode_json(&bytes)
        .unwrap_or_else(|e| panic!("{path}.json: {e}"));
    assert_eq!(
        decoded.unknown_fields,
        Vec::<String>::new(),
        "{path}.json: unknown fields"
    );
    let mut ours = decoded.object.to_json_value().expect("JSON");
    ours["kind"] = json!(K::INFO.kind);
    ours["apiVersion"] = json!(K::INFO.group_version);
    let go: Value = serde_json::from_slice(&bytes).expect("fixture is JSON");
    assert_eq!(ours, go, "{path}.json: written back differently");
    let mut text = Vec::new();
    decoded.object.write_json(&mut text).expect("JSON");
    text.push(b'\n');
    assert_same_bytes(&text, &bytes, &format!("{path}.json text"));
    serde_json::from_slice(&bytes).expect("decodes")
}

/// Go's protobuf decodes (envelope, then the kind's message) and is encoded
/// again to exactly Go's bytes.
fn check_protobuf<K: Resource + Message>(path: &str) -> K {
    let body = fixture(&format!("{path}.pb"));
    let unknown = envelope::decode(&body).unwrap_or_else(|e| panic!("{path}.pb: {e}"));
    assert_eq!(unknown.kind, K::INFO.kind, "{path}.pb");
    assert_eq!(unknown.api_version, K::INFO.group_version, "{path}.pb");
    let object = K::decode(unknown.raw).unwrap_or_else(|e| panic!("{path}.pb: {e}"));
    let ours = object.encode_to_vec();
    assert_same_bytes(&ours, unknown.raw, &format!("{path}.pb"));
    let enveloped = envelope::encode(unknown.api_version, unknown.kind, &ours);
    assert_same_bytes(&enveloped, &body, &format!("{path}.pb envelope"));
    object
}

/// Both fixtures of a kind: each round trip, and both forms decode to the same
/// object (they were fetched one after the other, unchanged in between),
/// compared as JSON (managed fields keep their JSON text as it came).
fn check<K: Resource + Message>(path: &str) -> K {
    let from_json = check_json::<K>(path);
    let from_protobuf = check_protobuf::<K>(path);
    assert_eq!(
        serde_json::to_value(&from_json).expect("JSON"),
        serde_json::to_value(&from_protobuf).expect("JSON"),
        "{path}: JSON and protobuf differ"
    );
    from_json
}

#[track_caller]
fn assert_same_bytes(ours: &[u8], go: &[u8], what: &str) {
    if ours != go {
        let at = ours
            .iter()
            .zip(go)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(go.len()));
        panic!(
            "{what}: bytes differ from Go's at offset {at} (ours {} bytes, Go {} bytes)\n ours: {:02x?}\n   go: {:02x?}",
            ours.len(),
            go.len(),
            &ours[at.saturating_sub(8)..(at + 24).min(ours.len())],
            &go[at.saturating_sub(8)..(at + 24).min(go.len())],
        );
    }
}

/// The cells the kind computes, as the request path gets them.
fn cells<K: Resource>(object: &K) -> Vec<Value> {
    let boxed: Box<dyn kapi_runtime::DynObject> = Box::new(object.clone());
    boxed.table_cells().unwrap_or_default()
}

#[test]
fn role() {
    let role = check::<Role>("rbac/role");
    assert_eq!(role.rules.len(), 2);
    assert_eq!(
        role.rules[0].api_groups.as_deref(),
        Some(&["".to_owned()][..])
    );
}

#[test]
fn cluster_role_with_an_aggregation_rule() {
    let role = check::<ClusterRole>("rbac/clusterrole");
    let selectors = role
        .aggregation_rule
        .and_then(|r| r.cluster_role_selectors)
        .expect("selectors");
    assert_eq!(selectors.len(), 2);
    let urls = role.rules[1].non_resource_urls.as_deref().expect("URLs");
    assert_eq!(urls, ["/healthz", "/metrics", "/logs/*"]);
}

#[test]
fn role_binding() {
    let binding = check::<RoleBinding>("rbac/rolebinding");
    assert_eq!(binding.role_ref.kind, "Role");
    let row = cells(&binding);
    assert_eq!(
        row,
        [
            json!("Role/config-editor"),
            json!("2026-11-22T19:41:41Z"),
            json!("alice@example.com"),
            json!("editors"),
            json!("access/deployer"),
        ]
    );
}

#[test]
fn cluster_role_binding() {
    let binding = check::<ClusterRoleBinding>("rbac/clusterrolebinding");
    let row = cells(&binding);
    assert_eq!(
        row,
        [
            json!("ClusterRole/access-aggregate-view"),
            json!("2026-11-22T19:41:41Z"),
            json!("bob@example.com"),
            json!("system:authenticated"),
            json!("access/monitor"),
        ]
    );
}

#[test]
fn binding_subjects_join_like_kubectl() {
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "b", "namespace": "ns"},
        "subjects": [
            {"kind": "User", "name": "u1"}, {"kind": "User", "name": "u2"},
            {"kind": "Group", "name": "g1"}, {"kind": "Group", "name": "g2"},
            {"kind": "ServiceAccount", "name": "s1", "namespace": "access"},
            {"kind": "ServiceAccount", "name": "s2"}
        ],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    }))
    .expect("decodes");
    let row = cells(&binding);
    assert_eq!(row[2], "u1, u2");
    assert_eq!(row[3], "g1, g2");
    assert_eq!(row[4], "access/s1, /s2");
}

#[test]
fn lease() {
    let lease = check::<Lease>("coordination/lease");
    assert_eq!(
        lease.spec.renew_time.map(|t| t.to_string()).as_deref(),
        Some("2026-11-22T19:41:11.654321Z")
    );
    assert_eq!(cells(&lease), [json!("controller-7d9f_1b2c3d4e")]);
    assert_eq!(cells(&Lease::default()), [json!("")]);
}

#[test]
fn priority_class() {
    let class = check::<PriorityClass>("scheduling/priorityclass");
    assert_eq!(
        cells(&class),
        [
            json!(100000),
            json!(false),
            json!("2026-11-22T19:41:41Z"),
            json!("Never"),
        ]
    );
}

#[test]
fn runtime_class() {
    let class = check::<RuntimeClass>("node/runtimeclass");
    let scheduling = class.scheduling.expect("scheduling");
    assert_eq!(scheduling.tolerations.map(|t| t.len()), Some(3));
    assert_eq!(scheduling.node_selector.map(|s| s.len()), Some(2));
}

#[test]
fn certificate_signing_request() {
    let csr = check::<CertificateSigningRequest>("certificates/certificatesigningrequest");
    let extra = csr.spec.extra.as_ref().expect("extra");
    assert_eq!(extra["scopes"].items, ["read", "write"]);
    assert!(
        csr.spec
            .request
            .as_ref()
            .is_some_and(|r| { r.0.starts_with(b"-----BEGIN CERTIFICATE REQUEST-----") })
    );
    assert_eq!(
        cells(&csr),
        [
            json!("2026-11-22T19:41:44Z"),
            json!("access.example.com/client"),
            json!("access-user"),
            json!("24h"),
            json!("Approved,Issued"),
        ]
    );
}

#[test]
fn certificate_signing_request_conditions_print_like_kubectl() {
    let row = |status: Value, expiration: Option<i32>| {
        let csr: CertificateSigningRequest = serde_json::from_value(json!({
            "metadata": {"name": "r"},
            "spec": {"request": null, "signerName": "", "expirationSeconds": expiration},
            "status": status,
        }))
        .expect("decodes");
        let cells = cells(&csr);
        (cells[1].clone(), cells[3].clone(), cells[4].clone())
    };
    assert_eq!(
        row(json!({}), None),
        (json!("<none>"), json!("<none>"), json!("Pending"))
    );
    let denied_failed = json!({"conditions": [
        {"type": "Denied", "status": "True"}, {"type": "Failed", "status": "True"}
    ]});
    assert_eq!(row(denied_failed, Some(600)).2, json!("Denied,Failed"));
    assert_eq!(row(json!({}), Some(600)).1, json!("10m"));
    assert_eq!(row(json!({}), Some(3 * 86400 + 3600)).1, json!("3d1h"));
    assert_eq!(row(json!({}), Some(365 * 86400 * 3)).1, json!("3y"));
}

/// What the real server says of a kind: plural, scope, short names, a status
/// subresource, and whether created objects get `metadata.generation`.
struct Served {
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
    status: bool,
    generation: bool,
}

/// Each kind is registered with the facts of the real server's discovery and
/// objects.
#[test]
fn kinds_are_registered_as_upstream_serves_them() {
    let served = |kind, plural, namespaced, short_names, status, generation| Served {
        kind,
        plural,
        namespaced,
        short_names,
        status,
        generation,
    };
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    for expected in [
        served("Role", "roles", true, &[], false, false),
        served("ClusterRole", "clusterroles", false, &[], false, false),
        served("RoleBinding", "rolebindings", true, &[], false, false),
        served(
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            &[],
            false,
            false,
        ),
        served("Lease", "leases", true, &[], false, false),
        served(
            "PriorityClass",
            "priorityclasses",
            false,
            &["pc"],
            false,
            true,
        ),
        served("RuntimeClass", "runtimeclasses", false, &[], false, false),
        served(
            "CertificateSigningRequest",
            "certificatesigningrequests",
            false,
            &["csr"],
            true,
            false,
        ),
    ] {
        let kind = expected.kind;
        let entry = scheme
            .entries()
            .find(|e| e.info.kind == kind)
            .unwrap_or_else(|| panic!("{kind} is not registered"));
        let info = entry.info;
        assert_eq!(info.plural, expected.plural, "{kind}");
        assert_eq!(info.namespaced, expected.namespaced, "{kind}");
        assert_eq!(info.short_names, expected.short_names, "{kind}");
        assert!(info.categories.is_empty(), "{kind}");
        assert_eq!(info.status_subresource, expected.status, "{kind}");
        assert_eq!(info.tracks_generation, expected.generation, "{kind}");
        assert!(entry.proto.is_some(), "{kind} speaks protobuf");
    }
}
