//! ServiceAccount, Endpoints, LimitRange, ResourceQuota, PodTemplate,
//! ReplicationController, ComponentStatus and Binding against objects of the real
//! kube-apiserver 1.32 (`tests/fixtures/core/*.json` and `*.pb`, fetched as JSON
//! and as protobuf): the JSON decodes without unknown fields and writes back the
//! same JSON, the protobuf decodes to the same object and re-encodes to Go's bytes,
//! and the `kubectl get` cells are the real server's.

use kapi_api_types::core::v1::{
    Binding, ComponentStatus, Endpoints, LimitRange, PodTemplate, ReplicationController,
    ResourceQuota, ServiceAccount,
};
use kapi_runtime::Resource;
use kapi_runtime::proto::{Message, envelope};
use kapi_runtime::scheme::{KindEntry, Scheme};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::support::go_bytes::assert_written_in_go_order;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/core/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `value` as JSON with the type meta the kind's type does not hold put back.
fn with_type_meta<T: Serialize>(value: &T, kind: &str) -> Value {
    let mut json = serde_json::to_value(value).expect("serializes");
    let map = json.as_object_mut().expect("an object");
    map.insert("kind".into(), json!(kind));
    map.insert("apiVersion".into(), json!("v1"));
    json
}

/// Go's JSON decodes with every field known and writes back the same JSON.
fn json_round_trip<T: Serialize + DeserializeOwned>(file: &str, kind: &str) -> T {
    let bytes = fixture(file);
    let typed: T = serde_json::from_slice(&bytes).expect("decodes");
    let go: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(
        with_type_meta(&typed, kind),
        go,
        "{file}: JSON written back"
    );
    typed
}

/// Like [`json_round_trip`], through the kind's registered decoder, which also
/// reports unknown fields.
fn kind_json_round_trip<T: Resource + DeserializeOwned>(file: &str) -> T {
    let bytes = fixture(file);
    let decoded = KindEntry::of::<T>()
        .ops
        .decode_json(&bytes)
        .expect("decodes");
    assert!(
        decoded.unknown_fields.is_empty(),
        "{file}: unknown fields {:?}",
        decoded.unknown_fields
    );
    assert_written_in_go_order(&*decoded.object, &bytes, file);
    json_round_trip(file, T::INFO.kind)
}

/// Go's protobuf decodes and re-encodes to exactly Go's bytes, envelope
/// included.
fn proto_round_trip<T: Message>(file: &str, kind: &str) -> T {
    let body = fixture(file);
    let unknown = envelope::decode(&body).expect("envelope");
    assert_eq!((unknown.api_version, unknown.kind), ("v1", kind), "{file}");
    let typed = T::decode(unknown.raw).expect("Go's bytes decode");
    let ours = typed.encode_to_vec();
    assert_same_bytes(&ours, unknown.raw, file);
    let enveloped = envelope::encode(unknown.api_version, unknown.kind, &ours);
    assert_same_bytes(&enveloped, &body, &format!("{file} envelope"));
    typed
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

/// Both encodings of one stored object, fetched back to back: each round-trips
/// and both decode to the same value (compared as JSON values: managed fields
/// keep their raw text, which the JSON fixture has indented).
fn stored_object<T>(name: &str) -> T
where
    T: Resource + Message + DeserializeOwned,
{
    let from_json: T = kind_json_round_trip(&format!("{name}.json"));
    let from_proto: T = proto_round_trip(&format!("{name}.pb"), T::INFO.kind);
    assert_eq!(
        serde_json::to_value(&from_proto).expect("serializes"),
        serde_json::to_value(&from_json).expect("serializes"),
        "{name}: protobuf and JSON differ"
    );
    from_json
}

/// The kind's cells without its date columns (which the server turns into ages).
fn cells<T: Resource>(object: &T) -> Vec<Value> {
    let cells = Resource::table_cells(object).expect("the kind computes its cells");
    let columns = T::INFO.printer_columns;
    assert_eq!(
        cells.len(),
        columns.len(),
        "{}: one cell per column",
        T::INFO.kind
    );
    columns
        .iter()
        .zip(cells)
        .filter(|(column, _)| column.type_ != "date")
        .map(|(_, cell)| cell)
        .collect()
}

#[test]
fn service_account() {
    let sa: ServiceAccount = stored_object("serviceaccount");
    assert_eq!(sa.secrets.as_ref().map(Vec::len), Some(2));
    assert_eq!(sa.automount_service_account_token, Some(false));
    assert_eq!(cells(&sa), [json!(2)]);
}

#[test]
fn endpoints() {
    let ep: Endpoints = stored_object("endpoints");
    let subsets = ep.subsets.as_deref().expect("subsets");
    assert_eq!(subsets.len(), 2);
    let first = &subsets[0].addresses.as_deref().expect("addresses")[0];
    assert_eq!(first.node_name.as_deref(), Some("worker-1"));
    assert_eq!(
        cells(&ep),
        [json!(
            "10.244.1.7:8080,10.244.2.9:8080,10.244.1.7:53 + 2 more..."
        )]
    );
}

#[test]
fn limit_range() {
    let lr: LimitRange = stored_object("limitrange");
    assert_eq!(lr.spec.limits.len(), 3);
    let created = lr.metadata.creation_timestamp.expect("created").to_string();
    assert_eq!(cells(&lr), [json!(created)]);
}

#[test]
fn resource_quota() {
    let quota: ResourceQuota = stored_object("resourcequota");
    let selector = quota.spec.scope_selector.as_ref().expect("scope selector");
    assert_eq!(selector.match_expressions.as_ref().map(Vec::len), Some(1));
    assert_eq!(
        cells(&quota),
        [
            json!(
                "count/configmaps: 2/50, pods: 3/20, requests.cpu: 750m/4, requests.memory: 768Mi/8Gi"
            ),
            json!("limits.cpu: 3/8, limits.memory: 1536Mi/16Gi"),
        ]
    );
}

#[test]
fn pod_template() {
    let pt: PodTemplate = stored_object("podtemplate");
    assert_eq!(pt.template.spec.containers.len(), 2);
    assert_eq!(
        cells(&pt),
        [
            json!("web,sidecar"),
            json!("registry.example.com/shop/web:1.4.2,envoyproxy/envoy:v1.30.1"),
            json!("app=web,tier=frontend"),
        ]
    );
}

#[test]
fn replication_controller() {
    let rc: ReplicationController = stored_object("replicationcontroller");
    assert_eq!(rc.status.observed_generation, Some(1));
    let conditions = rc.status.conditions.as_deref().expect("conditions");
    assert!(conditions[0].last_transition_time.is_some());
    assert_eq!(
        cells(&rc),
        [
            json!(3),
            json!(3),
            json!(2),
            json!("web,sidecar"),
            json!("registry.example.com/shop/web:1.4.2,envoyproxy/envoy:v1.30.1"),
            json!("app=web,tier=frontend"),
        ]
    );
}

#[test]
fn component_status() {
    let cs: ComponentStatus = stored_object("componentstatus");
    assert_eq!(cs.metadata.name.as_deref(), Some("etcd-0"));
    assert_eq!(cells(&cs), [json!("Healthy"), json!("ok"), json!("")]);
}

/// Bindings are only ever sent (the server answers a Status), so these fixtures
/// are request bodies the real server accepted and applied: `binding.json` as a
/// Go client writes it, `binding.pb` built from upstream's `.proto` with every
/// field Go's encoder writes.
#[test]
fn binding() {
    let json: Binding = json_round_trip("binding.json", "Binding");
    assert_eq!(json.target.name.as_deref(), Some("worker-2"));
    let proto: Binding = proto_round_trip("binding.pb", "Binding");
    assert_eq!(proto.target.kind.as_deref(), Some("Node"));
    assert_eq!(proto.target.name.as_deref(), Some("worker-1"));
    assert_eq!(proto.metadata.namespace.as_deref(), Some("core-a"));
}

/// Binding is not a registered kind, so `protobuf_upstream` does not reach it:
/// its message as upstream declares it (`metadata = 1`, `target = 2`).
#[test]
fn binding_message_is_upstreams() {
    assert_eq!(<Binding as Message>::NAME, "Binding");
    let fields: Vec<(&str, u32, String)> = Binding::describe()
        .into_iter()
        .map(|f| (f.name, f.number, f.shape.proto_type()))
        .collect();
    assert_eq!(
        fields,
        [
            ("metadata", 1, "ObjectMeta".to_owned()),
            ("target", 2, "ObjectReference".to_owned()),
        ]
    );
}

/// The kinds are in the scheme with the real server's discovery facts.
#[test]
fn registered_as_the_real_server_lists_them() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let info = |kind: &str| {
        scheme
            .entries()
            .find(|e| e.info.kind == kind && e.info.group.is_empty())
            .unwrap_or_else(|| panic!("{kind} is not registered"))
            .info
    };
    let expected = [
        (
            "ServiceAccount",
            "serviceaccounts",
            "serviceaccount",
            &["sa"][..],
            true,
            false,
        ),
        ("Endpoints", "endpoints", "endpoints", &["ep"], true, false),
        (
            "LimitRange",
            "limitranges",
            "limitrange",
            &["limits"],
            true,
            false,
        ),
        (
            "ResourceQuota",
            "resourcequotas",
            "resourcequota",
            &["quota"],
            true,
            true,
        ),
        (
            "PodTemplate",
            "podtemplates",
            "podtemplate",
            &[],
            true,
            false,
        ),
        (
            "ReplicationController",
            "replicationcontrollers",
            "replicationcontroller",
            &["rc"],
            true,
            true,
        ),
        (
            "ComponentStatus",
            "componentstatuses",
            "componentstatus",
            &["cs"],
            false,
            false,
        ),
    ];
    for (kind, plural, singular, short_names, namespaced, status) in expected {
        let info = info(kind);
        assert_eq!(info.plural, plural, "{kind}");
        assert_eq!(info.singular, singular, "{kind}");
        assert_eq!(info.short_names, short_names, "{kind}");
        assert_eq!(info.namespaced, namespaced, "{kind}");
        assert_eq!(info.status_subresource, status, "{kind}");
    }
    assert_eq!(info("ReplicationController").categories, ["all"]);
    let tracked: Vec<&str> = expected
        .iter()
        .map(|e| e.0)
        .filter(|kind| info(kind).tracks_generation)
        .collect();
    assert_eq!(tracked, ["PodTemplate", "ReplicationController"]);
}
