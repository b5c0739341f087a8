//! admissionregistration.k8s.io/v1 and flowcontrol.apiserver.k8s.io/v1 kinds
//! against objects the real kube-apiserver 1.32 sent (`tests/fixtures/
//! admissionregistration/` and `tests/fixtures/flowcontrol/`, each fetched as
//! JSON and as protobuf at the same resourceVersion): JSON decodes without
//! unknown fields and encodes back to the same value, protobuf re-encodes to
//! Go's exact bytes, both encodings hold the same object, the objects pass
//! our validation, and the table rows are the server's.

use kapi_api_types::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    ValidatingWebhookConfiguration,
};
use kapi_api_types::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};
use kapi_runtime::Resource;
use kapi_runtime::proto::{Message, envelope};
use kapi_runtime::scheme::KindEntry;
use serde_json::{Value, json};

use crate::support::go_bytes::assert_same_key_order;

fn read(path: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Checks the JSON and protobuf fixtures `<name>.json` and `<name>.pb`, and
/// returns the row of the object.
fn check<K: Resource + Message>(name: &str) -> Vec<Value> {
    let json_bytes = read(&format!("{name}.json"));
    let go_json: Value = serde_json::from_slice(&json_bytes).expect("fixture is JSON");

    // JSON: every field known, and written back as Go wrote it.
    let decoded = KindEntry::of::<K>()
        .ops
        .decode_json(&json_bytes)
        .unwrap_or_else(|e| panic!("{name}.json: {e}"));
    assert!(
        decoded.unknown_fields.is_empty(),
        "{name}.json: unknown fields {:?}",
        decoded.unknown_fields
    );
    let mut ours = decoded.object.to_json_value().expect("JSON");
    ours["kind"] = json!(K::INFO.kind);
    ours["apiVersion"] = json!(K::INFO.group_version);
    assert_eq!(ours, go_json, "{name}.json: JSON round trip");
    let mut written = Vec::new();
    decoded.object.write_json(&mut written).expect("JSON");
    assert_same_key_order(&written, &json_bytes, &format!("{name}.json"));
    let written: Value = serde_json::from_slice(&written).expect("JSON");
    assert_eq!(written, go_json, "{name}.json: JSON with type meta");

    // Protobuf: Go's bytes exactly, envelope included.
    let body = read(&format!("{name}.pb"));
    let unknown = envelope::decode(&body).unwrap_or_else(|e| panic!("{name}.pb: {e}"));
    assert_eq!(unknown.kind, K::INFO.kind, "{name}.pb");
    assert_eq!(unknown.api_version, K::INFO.group_version, "{name}.pb");
    let object = K::decode(unknown.raw).unwrap_or_else(|e| panic!("{name}.pb: {e}"));
    let raw = object.encode_to_vec();
    assert_same_bytes(&raw, unknown.raw, &format!("{name}.pb"));
    let enveloped = envelope::encode(unknown.api_version, unknown.kind, &raw);
    assert_same_bytes(&enveloped, &body, &format!("{name}.pb envelope"));

    // The same object in both encodings.
    let mut from_proto = serde_json::to_value(&object).expect("JSON");
    from_proto["kind"] = json!(K::INFO.kind);
    from_proto["apiVersion"] = json!(K::INFO.group_version);
    assert_eq!(from_proto, go_json, "{name}: protobuf and JSON disagree");

    // What the server stored passes our validation.
    let mut typed = decoded.object;
    let row = typed.table_cells().expect("the kind computes its cells");
    let errors = typed.admit();
    assert!(errors.is_empty(), "{name}: {errors:?}");
    row
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

#[test]
fn mutating_webhook_configuration() {
    let row =
        check::<MutatingWebhookConfiguration>("admissionregistration/mutatingwebhookconfiguration");
    assert_eq!(row, [json!(2)]);
}

#[test]
fn validating_webhook_configuration() {
    let row = check::<ValidatingWebhookConfiguration>(
        "admissionregistration/validatingwebhookconfiguration",
    );
    assert_eq!(row, [json!(2)]);
}

#[test]
fn validating_admission_policy() {
    let row = check::<ValidatingAdmissionPolicy>("admissionregistration/validatingadmissionpolicy");
    assert_eq!(row, [json!(2), json!("v1/ConfigMap")]);
}

#[test]
fn validating_admission_policy_bindings() {
    let row = check::<ValidatingAdmissionPolicyBinding>(
        "admissionregistration/validatingadmissionpolicybinding",
    );
    assert_eq!(
        row,
        [json!("admission-fixture"), json!("admission/widget-limits")]
    );
    let row = check::<ValidatingAdmissionPolicyBinding>(
        "admissionregistration/validatingadmissionpolicybinding-selector",
    );
    assert_eq!(
        row,
        [
            json!("admission-fixture"),
            json!(
                "&LabelSelector{MatchLabels:map[string]string{b: x,example.com/limits: true,},\
                 MatchExpressions:[]LabelSelectorRequirement{\
                 LabelSelectorRequirement{Key:tier,Operator:In,Values:[gold silver],},\
                 LabelSelectorRequirement{Key:legacy,Operator:DoesNotExist,Values:[],},},}"
            )
        ]
    );
}

#[test]
fn flow_schemas() {
    for (name, cells) in [
        (
            "flowschema",
            json!(["admission-fixture", 7777, "ByNamespace", "False"]),
        ),
        ("flowschema-probes", json!(["exempt", 2, "<none>", "False"])),
        (
            "flowschema-kube-system-service-accounts",
            json!(["workload-high", 900, "ByNamespace", "False"]),
        ),
    ] {
        let mut row = check::<FlowSchema>(&format!("flowcontrol/{name}"));
        // The Age cell carries the creation time.
        let age = row.remove(3);
        assert!(age.as_str().is_some_and(|t| t.starts_with("20")), "{age}");
        assert_eq!(Value::from(row), cells, "{name}");
    }
}

#[test]
fn priority_level_configurations() {
    for (name, cells) in [
        (
            "prioritylevelconfiguration",
            json!(["Limited", 5, 16, 4, 25]),
        ),
        (
            "prioritylevelconfiguration-reject",
            json!(["Limited", 30, "<none>", "<none>", "<none>"]),
        ),
        (
            "prioritylevelconfiguration-exempt",
            json!(["Exempt", "<none>", "<none>", "<none>", "<none>"]),
        ),
    ] {
        let row = check::<PriorityLevelConfiguration>(&format!("flowcontrol/{name}"));
        assert_eq!(Value::from(row), cells, "{name}");
    }
}

/// A binding's parameters without a namespace print as `*/name`, and no
/// parameters as `<unset>`.
#[test]
fn binding_param_ref_cells() {
    let mut binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
        "spec": {"policyName": "p", "paramRef": {"name": "limits"}}
    }))
    .expect("binding");
    let cells = |b: &ValidatingAdmissionPolicyBinding| {
        KindEntry::of::<ValidatingAdmissionPolicyBinding>()
            .ops
            .decode_value(serde_json::to_value(b).expect("JSON"))
            .expect("decodes")
            .object
            .table_cells()
            .expect("cells")
    };
    assert_eq!(cells(&binding), [json!("p"), json!("*/limits")]);
    binding.spec.param_ref = None;
    assert_eq!(cells(&binding), [json!("p"), json!("<unset>")]);
}

/// The resource rules of a policy keep the Go layout: operations and the rule
/// inline in JSON, nested `ruleWithOperations { rule { ... } }` in protobuf.
#[test]
fn named_rules_nest_in_protobuf() {
    let body = read("admissionregistration/validatingadmissionpolicy.pb");
    let unknown = envelope::decode(&body).expect("envelope");
    let policy = ValidatingAdmissionPolicy::decode(unknown.raw).expect("policy");
    let rules = policy
        .spec
        .match_constraints
        .as_ref()
        .and_then(|m| m.resource_rules.as_ref())
        .expect("rules");
    let rule = &rules[0];
    assert_eq!(
        rule.resource_names.as_deref(),
        Some(&["guarded".to_owned()][..])
    );
    let inner = &rule.rule_with_operations;
    assert_eq!(
        inner.operations.as_deref(),
        Some(&["CREATE".to_owned(), "UPDATE".to_owned()][..])
    );
    assert_eq!(
        inner.resources.as_deref(),
        Some(&["widgets".to_owned()][..])
    );
    assert_eq!(inner.scope.as_deref(), Some("*"));
}
