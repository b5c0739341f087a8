//! What the derives do at run time: defaults, validation paths and messages as
//! Kubernetes prints them, JSON names, flattening, resource facts, hooks and
//! registration in the scheme.

use std::sync::atomic::{AtomicUsize, Ordering};

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use kapi_runtime::scheme::{KINDS, KindEntry};
use kapi_runtime::validation::{FieldErrorKind, FieldErrors, FieldPath};
use kapi_runtime::{ApiType as _, PrinterColumn, Resource as _};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A kind with the defaults of every `#[resource]` key and every hook.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType, Resource)]
#[resource(
    group = "policy.example.com",
    version = "v1beta1",
    short_names("pol"),
    categories("all", "example"),
    cluster_scoped,
    status,
    selectable_fields("spec.mode"),
    indexed_fields("spec.mode"),
    return_deleted_object,
    orphan_dependents,
    generation = false,
    name_format = "dns1035-label",
    printer_column(name = "Mode", type = "string", json_path = ".spec.mode"),
    printer_column(
        name = "Port",
        type = "integer",
        json_path = ".spec.ports[0].port",
        priority = 1,
        description = "The first port",
        format = "int32"
    ),
    prepare = prepare_policy,
    table_cells = policy_cells,
    grace_period = policy_grace
)]
pub struct Policy {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PolicySpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<PolicyStatus>,
}

/// A nested struct using every `#[api]` rule.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PolicySpec {
    /// `one_of` + `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("Enforce", "Audit"), default = "Audit")]
    pub mode: Option<String>,
    /// `required` on a list; recursion into its elements.
    #[serde(default)]
    #[api(required)]
    pub ports: Vec<PolicyPort>,
    /// `format = "dns1123-subdomain"`, camel-cased by `rename_all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(format = "dns1123-subdomain")]
    pub target_ref: Option<String>,
    /// `rename` beats `rename_all`.
    #[serde(default, rename = "hostIP", skip_serializing_if = "Option::is_none")]
    #[api(required)]
    pub host_ip: Option<String>,
    /// Flattened: its fields sit at this level, in JSON and in error paths.
    #[serde(flatten)]
    pub limits: Limits,
    /// Skipped fields are neither defaulted nor validated.
    #[serde(skip)]
    #[api(required)]
    pub cache: String,
}

/// One port: `required`, `format = "dns1123-label"`, `minimum`, `maximum`, defaults.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PolicyPort {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(format = "dns1123-label")]
    pub name: Option<String>,
    #[api(required, minimum = 1, maximum = 65535)]
    pub port: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(one_of("TCP", "UDP", "SCTP"), default = "TCP")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = true)]
    pub enabled: Option<bool>,
}

/// Flattened into `PolicySpec`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(minimum = 0.5, maximum = 10, default = 1.5)]
    pub max_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(minimum = 1, default = 100)]
    pub burst: Option<i64>,
}

/// Status: not validated by any rule, present for the `/status` subresource.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PolicyStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
}

static PREPARED: AtomicUsize = AtomicUsize::new(0);

/// Runs before defaulting: lower-cases the target, counts its calls.
fn prepare_policy(policy: &mut Policy) {
    PREPARED.fetch_add(1, Ordering::SeqCst);
    if let Some(target) = &mut policy.spec.target_ref {
        *target = target.to_lowercase();
    }
}

fn policy_cells(policy: &Policy) -> Vec<Value> {
    vec![json!(policy.spec.mode), json!(policy.spec.ports.len())]
}

fn policy_grace(policy: &Policy, requested: Option<i64>) -> Option<i64> {
    match policy.spec.mode.as_deref() {
        Some("Enforce") => Some(requested.unwrap_or(30)),
        _ => None,
    }
}

/// A namespaced kind with explicit names, no hooks and no `status` subresource.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType, Resource)]
#[resource(
    group = "",
    version = "v1",
    kind = "Gadget",
    plural = "gadgetry",
    singular = "gizmo",
    namespaced
)]
pub struct GadgetObject {
    pub metadata: ObjectMeta,
}

fn valid_policy() -> Policy {
    Policy {
        spec: PolicySpec {
            ports: vec![PolicyPort {
                port: 443,
                ..PolicyPort::default()
            }],
            host_ip: Some("10.0.0.1".to_owned()),
            ..PolicySpec::default()
        },
        ..Policy::default()
    }
}

fn errors(value: &impl kapi_runtime::ApiType) -> Vec<String> {
    let mut errs = FieldErrors::default();
    value.validate(&FieldPath::root(), &mut errs);
    errs.0.iter().map(ToString::to_string).collect()
}

#[test]
fn defaults_fill_unset_options_recursively() {
    let mut policy = valid_policy();
    policy.spec.ports.push(PolicyPort {
        port: 53,
        protocol: Some("UDP".into()),
        enabled: Some(false),
        ..Default::default()
    });
    policy.apply_defaults();
    let spec = &policy.spec;
    assert_eq!(spec.mode.as_deref(), Some("Audit"));
    assert_eq!(spec.ports[0].protocol.as_deref(), Some("TCP"));
    assert_eq!(spec.ports[0].enabled, Some(true));
    // Set values are kept.
    assert_eq!(spec.ports[1].protocol.as_deref(), Some("UDP"));
    assert_eq!(spec.ports[1].enabled, Some(false));
    // Through the flattened struct.
    assert_eq!(spec.limits.max_rate, Some(1.5));
    assert_eq!(spec.limits.burst, Some(100));
    // Unset options without a default stay unset.
    assert_eq!(spec.ports[0].name, None);
    assert_eq!(spec.target_ref, None);
}

#[test]
fn valid_object_has_no_errors() {
    let mut policy = valid_policy();
    policy.apply_defaults();
    assert_eq!(errors(&policy), Vec::<String>::new());
}

#[test]
fn errors_carry_kubernetes_paths_and_messages() {
    let mut policy = valid_policy();
    policy.spec.mode = Some("Sometimes".into());
    policy.spec.host_ip = None;
    policy.spec.target_ref = Some("Not_A.Domain".into());
    policy.spec.limits.max_rate = Some(0.25);
    policy.spec.limits.burst = Some(0);
    policy.spec.ports = vec![
        PolicyPort {
            port: 70000,
            protocol: Some("ICMP".into()),
            ..Default::default()
        },
        PolicyPort {
            port: 0,
            name: Some("Web".into()),
            ..Default::default()
        },
    ];
    assert_eq!(
        errors(&policy),
        [
            r#"spec.mode: Unsupported value: "Sometimes": supported values: "Enforce", "Audit""#,
            "spec.ports[0].port: Invalid value: 70000: must be less than or equal to 65535",
            r#"spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP""#,
            concat!(
                r#"spec.ports[1].name: Invalid value: "Web": a lowercase RFC 1123 label must consist of "#,
                "lower case alphanumeric characters or '-', and must start and end with an alphanumeric ",
                "character (e.g. 'my-name',  or '123-abc', regex used for validation is ",
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ),
            "spec.ports[1].port: Invalid value: 0: must be greater than or equal to 1",
            concat!(
                r#"spec.targetRef: Invalid value: "Not_A.Domain": a lowercase RFC 1123 subdomain must "#,
                "consist of lower case alphanumeric characters, '-' or '.', and must start and end with ",
                "an alphanumeric character (e.g. 'example.com', regex used for validation is ",
                r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ),
            "spec.hostIP: Required value",
            "spec.maxRate: Invalid value: 0.25: must be greater than or equal to 0.5",
            "spec.burst: Invalid value: 0: must be greater than or equal to 1",
        ]
    );
}

#[test]
fn required_reports_empty_values_with_reason() {
    let mut policy = valid_policy();
    policy.spec.ports.clear();
    policy.spec.host_ip = Some(String::new());
    let mut errs = FieldErrors::default();
    policy.validate(&FieldPath::root(), &mut errs);
    let found: Vec<(FieldErrorKind, &str, &str)> = errs
        .0
        .iter()
        .map(|e| (e.kind, e.path.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (FieldErrorKind::Required, "spec.ports", "Required value"),
            (FieldErrorKind::Required, "spec.hostIP", "Required value"),
        ]
    );
    assert_eq!(errs.0[0].kind.reason(), "FieldValueRequired");
}

#[test]
fn json_names_follow_serde() {
    let mut policy = valid_policy();
    policy.spec.target_ref = Some("a.b".into());
    policy.spec.cache = "not on the wire".into();
    policy.apply_defaults();
    let value = serde_json::to_value(&policy).expect("a Policy encodes");
    assert_eq!(
        value["spec"],
        json!({
            "mode": "Audit",
            "ports": [{"port": 443, "protocol": "TCP", "enabled": true}],
            "targetRef": "a.b",
            "hostIP": "10.0.0.1",
            "maxRate": 1.5,
            "burst": 100,
        })
    );
}

#[test]
fn resource_info_defaults_from_the_kind() {
    let info = Policy::INFO;
    assert_eq!(info.group, "policy.example.com");
    assert_eq!(info.version, "v1beta1");
    assert_eq!(info.api_version(), "policy.example.com/v1beta1");
    assert_eq!(info.kind, "Policy");
    assert_eq!(info.list_kind(), "PolicyList");
    assert_eq!(info.plural, "policies");
    assert_eq!(info.singular, "policy");
    assert_eq!(info.short_names, ["pol"]);
    assert_eq!(info.categories, ["all", "example"]);
    assert!(!info.namespaced);
    assert!(info.status_subresource);
    assert_eq!(info.selectable_fields, ["spec.mode"]);
    assert_eq!(info.indexed_fields, ["spec.mode"]);
    assert!(info.return_deleted_object);
    assert!(info.orphan_dependents);
    assert!(!info.tracks_generation);
    assert_eq!(
        info.name_format,
        kapi_runtime::resource::NameFormat::Dns1035Label
    );
    assert_eq!(
        info.printer_columns,
        [
            PrinterColumn {
                name: "Mode",
                type_: "string",
                format: "",
                description: "",
                priority: 0,
                json_path: ".spec.mode",
            },
            PrinterColumn {
                name: "Port",
                type_: "integer",
                format: "int32",
                description: "The first port",
                priority: 1,
                json_path: ".spec.ports[0].port",
            },
        ]
    );
}

#[test]
fn resource_info_explicit_names() {
    let info = GadgetObject::INFO;
    assert_eq!(info.api_version(), "v1");
    assert_eq!(info.kind, "Gadget");
    assert_eq!(info.plural, "gadgetry");
    assert_eq!(info.singular, "gizmo");
    assert!(info.short_names.is_empty());
    assert!(info.categories.is_empty());
    assert!(info.namespaced);
    assert!(!info.status_subresource);
    assert!(!info.return_deleted_object);
    assert!(!info.orphan_dependents);
    assert!(
        info.tracks_generation,
        "generation is tracked unless a kind opts out"
    );
    assert_eq!(
        info.name_format,
        kapi_runtime::resource::NameFormat::Dns1123Subdomain
    );
    assert!(info.selectable_fields.is_empty());
    assert!(info.indexed_fields.is_empty());
    assert!(info.printer_columns.is_empty());
}

#[test]
fn metadata_accessors_reach_the_field() {
    let mut gadget = GadgetObject::default();
    gadget.metadata_mut().name = Some("g1".into());
    assert_eq!(gadget.metadata().name(), "g1");
    assert_eq!(gadget.metadata.name(), "g1");
}

#[test]
fn hooks_are_called_through_the_scheme() {
    let entry = KindEntry::of::<Policy>();
    assert_eq!(entry.info, Policy::INFO);

    let before = PREPARED.load(Ordering::SeqCst);
    let object = json!({
        "metadata": {"name": "p"},
        "spec": {"mode": "Enforce", "ports": [{"port": 70000, "extra": 1}], "targetRef": "A.B", "hostIP": "h"},
    });
    let Value::Object(object) = object else {
        unreachable!()
    };
    let decoded = entry
        .ops
        .decode_value(Value::Object(object))
        .expect("the object decodes");
    assert_eq!(decoded.unknown_fields, ["spec.ports[0].extra"]);
    let mut typed = decoded.object;
    let errors = typed.admit();
    assert!(
        PREPARED.load(Ordering::SeqCst) > before,
        "prepare hook not called"
    );
    // prepare ran (lower-cased), then defaults, then validation.
    let admitted = typed.to_json_value().expect("JSON");
    assert_eq!(admitted["spec"]["targetRef"], "a.b");
    assert_eq!(admitted["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(
        errors.summary(),
        "spec.ports[0].port: Invalid value: 70000: must be less than or equal to 65535"
    );

    assert_eq!(typed.table_cells(), Some(vec![json!("Enforce"), json!(1)]));
    assert_eq!(typed.deletion_grace_period(Some(5)), Some(5));
    assert_eq!(typed.deletion_grace_period(None), Some(30));
    let policy = typed.downcast_ref::<Policy>().expect("a Policy");
    assert_eq!(policy.metadata.name(), "p");
}

#[test]
fn the_request_path_reads_typed_objects() {
    let entry = KindEntry::of::<Policy>();
    let json = br#"{"kind":"Policy","apiVersion":"example.com/v1","metadata":{"name":"p"},
        "spec":{"mode":"Enforce","ports":[{"port":80}]}}"#;
    let decoded = entry.ops.decode_json(json).expect("decodes");
    // The type meta every body carries is not an unknown field.
    assert!(
        decoded.unknown_fields.is_empty(),
        "{:?}",
        decoded.unknown_fields
    );
    let object = decoded.object;
    assert_eq!(object.field_text("spec.mode").as_deref(), Some("Enforce"));
    assert_eq!(object.field_text("metadata.name").as_deref(), Some("p"));
    assert_eq!(object.field_text("spec.ports"), None);
    assert!(entry.ops.decode_json(b"{\"spec\": 5}").is_err());
    assert!(entry.ops.decode_json(b"{} trailing").is_err());

    // Only the desired state counts as a spec change; an absent list equals an
    // empty one, as Kubernetes' semantic equality has it.
    let mut other = object.clone();
    assert!(other.spec_semantic_eq(&*object));
    other.metadata_mut().labels = Some([("a".to_owned(), "b".to_owned())].into());
    assert!(other.spec_semantic_eq(&*object));
    let mut changed = entry
        .ops
        .decode_json(br#"{"metadata":{"name":"p"},"spec":{"mode":"Audit","ports":[{"port":80}]}}"#)
        .expect("decodes")
        .object;
    assert!(!changed.spec_semantic_eq(&*object));
    changed.copy_status_from(&*object);
    assert!(!changed.object_eq(&*object));
}

#[test]
fn kinds_without_hooks_use_the_trait_defaults() {
    let gadget: &dyn kapi_runtime::DynObject = &GadgetObject::default();
    assert_eq!(gadget.table_cells(), None);
    assert_eq!(gadget.deletion_grace_period(Some(10)), None);
    let mut gadget = GadgetObject::default();
    gadget.prepare_for_write();
    assert_eq!(gadget.table_cells(), None);
}

#[test]
fn kinds_are_registered_in_the_scheme() {
    let kinds: Vec<(&str, &str)> = KINDS
        .iter()
        .map(|make| make())
        .map(|e| (e.info.group, e.info.kind))
        .collect();
    assert!(
        kinds.contains(&("policy.example.com", "Policy")),
        "{kinds:?}"
    );
    assert!(kinds.contains(&("", "Gadget")), "{kinds:?}");

    let mut scheme = kapi_runtime::scheme::Scheme::new();
    scheme.install_group("policy.example.com");
    let entry = scheme
        .get("policy.example.com", "v1beta1", "policies")
        .expect("Policy installed");
    assert_eq!(entry.info.kind, "Policy");
    assert!(
        scheme.get("", "v1", "gadgetry").is_none(),
        "only the asked group is installed"
    );
}

/// A struct with a defaulting hook and a field default, to see their order.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType)]
#[api(defaults = default_rollout)]
#[serde(rename_all = "camelCase")]
struct Rollout {
    #[api(default = "Steady")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seen_pace: Option<String>,
}

/// Records what the hook saw: the field default is not applied yet, as Go's
/// `SetDefaults_<Type>` runs before its fields' defaulters.
fn default_rollout(rollout: &mut Rollout) {
    rollout.seen_pace = Some(rollout.pace.clone().unwrap_or_else(|| "unset".into()));
}

#[test]
fn the_defaults_hook_runs_before_field_defaults() {
    let mut rollout = Rollout::default();
    rollout.apply_defaults();
    assert_eq!(rollout.pace.as_deref(), Some("Steady"));
    assert_eq!(rollout.seen_pace.as_deref(), Some("unset"));
}

/// A kind with an update check and a verb list.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, ApiType, Resource)]
#[resource(
    group = "example.com",
    version = "v1",
    verbs("list", "get", "create", "update"),
    validate_update = pinned_unchanged
)]
struct Pinned {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    value: String,
}

fn pinned_unchanged(new: &Pinned, old: &Pinned, path: &FieldPath, errs: &mut FieldErrors) {
    if new.value != old.value {
        errs.invalid(path.child("value"), &new.value, "field is immutable");
    }
}

#[test]
fn update_checks_and_verbs_come_from_the_resource_attribute() {
    assert_eq!(Pinned::INFO.verbs, ["create", "get", "list", "update"]);
    assert!(Pinned::INFO.serves("get") && !Pinned::INFO.serves("delete"));
    assert_eq!(
        Policy::INFO.verbs.len(),
        8,
        "every verb without a verbs(...) key"
    );
    let old = Pinned {
        value: "a".into(),
        ..Pinned::default()
    };
    let new = Pinned {
        value: "b".into(),
        ..Pinned::default()
    };
    let mut errs = FieldErrors::default();
    new.validate_update(&old, &mut errs);
    assert_eq!(
        errs.summary(),
        r#"value: Invalid value: "b": field is immutable"#
    );
    let mut errs = FieldErrors::default();
    old.validate_update(&old, &mut errs);
    assert!(errs.is_empty());
}
