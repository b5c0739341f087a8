//! Certificate signing requests: asking a signer for an X.509 certificate.

use std::collections::BTreeMap;

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::ByteString;
use kapi_runtime::meta::human_duration;
use kapi_runtime::meta::{ObjectMeta, Time};
use kapi_runtime::validation::{FieldErrors, FieldPath};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};

/// A PKCS#10 request for a certificate from a named signer. It is approved or
/// denied through the `approval` subresource, and the signer puts the issued
/// certificate in the status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "certificates.k8s.io",
    version = "v1",
    plural = "certificatesigningrequests",
    storage_prefix = "certificatesigningrequests",
    reset_main = "spec, status",
    reset_status = "spec, status.conditions",
    short_names("csr"),
    cluster_scoped,
    selectable_fields("spec.signerName"),
    status,
    generation = false,
    name_format = "path-segment",
    printer_column(name = "Age", type = "date", json_path = ".metadata.creationTimestamp",
        description = "Time since the request was created."),
    printer_column(name = "SignerName", type = "string", json_path = ".spec.signerName",
        description = "Signer asked to issue the certificate."),
    printer_column(name = "Requestor", type = "string", json_path = ".spec.username",
        description = "User who created the request."),
    printer_column(name = "RequestedDuration", type = "string",
        json_path = ".spec.expirationSeconds",
        description = "Validity asked for the certificate, or <none>."),
    printer_column(name = "Condition", type = "string", json_path = ".status.conditions",
        description = "Approved, Denied or Pending, then Failed and Issued when they apply."),
    subresource(name = "approval", prepare_update = take_conditions,
        validate_update = validate_approval_update),
    prepare_update = keep_spec,
    prepare_status_update = keep_conditions,
    validate_update = validate_csr_update,
    table_cells = csr_cells
)]
#[api(validate = super::validation::validate_csr)]
pub struct CertificateSigningRequest {
    /// Name, labels and other metadata.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The request, and who made it (set by the server); cannot change.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    #[api(schema_required)]
    pub spec: CertificateSigningRequestSpec,
    /// Approval conditions and the issued certificate.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 3)]
    pub status: CertificateSigningRequestStatus,
}

/// What is requested, from which signer, and the requester's identity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CertificateSigningRequestSpec {
    /// The PEM-encoded PKCS#10 `CERTIFICATE REQUEST` block (base64 in JSON).
    #[serde(default)]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    #[api(schema_required)]
    pub request: Option<ByteString>,
    /// Signer asked to issue the certificate, a qualified name such as
    /// `kubernetes.io/kube-apiserver-client` or `example.com/my-signer`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 7)]
    pub signer_name: String,
    /// Validity asked for the certificate, in seconds (at least 600); signers
    /// may issue a different one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub expiration_seconds: Option<i32>,
    /// Key usages and extended key usages asked for, e.g. `digital signature`,
    /// `key encipherment`, `client auth`, `server auth`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 5)]
    pub usages: Option<Vec<String>>,
    /// Name of the user who created the request (set by the server).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub username: Option<String>,
    /// UID of the user who created the request (set by the server).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub uid: Option<String>,
    /// Groups of the user who created the request (set by the server).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 4)]
    pub groups: Option<Vec<String>>,
    /// Extra attributes of the user who created the request, by key (set by
    /// the server).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 6)]
    pub extra: Option<BTreeMap<String, ExtraValue>>,
}

/// The values of one extra attribute of a user: a plain string list in JSON, a
/// message with the list as `items` in protobuf.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(transparent)]
#[api(schema = extra_value_schema)]
pub struct ExtraValue {
    /// The values.
    #[api(proto = 1)]
    pub items: Vec<String>,
}

/// JSON sees the list itself.
fn extra_value_schema(_: &mut kapi_runtime::openapi::Definitions) -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

/// Where a request stands: approval conditions and the issued certificate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CertificateSigningRequestStatus {
    /// `Approved` or `Denied` (set through the approval subresource), and
    /// `Failed` when the signer gave up; one of each type at most.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "map", list_map_keys("type"))]
    #[api(proto = 1)]
    pub conditions: Option<Vec<CertificateSigningRequestCondition>>,
    /// The issued certificate chain as PEM `CERTIFICATE` blocks (base64 in
    /// JSON), set by the signer once approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(list_type = "atomic")]
    #[api(proto = 2)]
    pub certificate: Option<ByteString>,
}

/// One condition of a certificate signing request.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct CertificateSigningRequestCondition {
    /// `Approved`, `Denied` or `Failed`.
    #[serde(default, rename = "type")]
    #[api(schema_required)]
    #[api(proto = 1)]
    pub type_: String,
    /// `True`, `False` or `Unknown`; approval and denial are always `True`.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 6)]
    pub status: String,
    /// Machine-readable reason of the condition.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub reason: Option<String>,
    /// Human-readable detail of the condition.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub message: Option<String>,
    /// When the condition was last updated.
    #[serde(default)]
    #[api(proto = 4, proto_value)]
    pub last_update_time: Option<Time>,
    /// When the status last changed.
    #[serde(default)]
    #[api(proto = 5, proto_value)]
    pub last_transition_time: Option<Time>,
}

/// PrepareForUpdate through the main endpoint: a request cannot change once
/// made (the status is kept as for every kind with `/status`).
fn keep_spec(new: &mut CertificateSigningRequest, old: &CertificateSigningRequest) {
    new.spec.clone_from(&old.spec);
}

/// PrepareForUpdate of `certificatesigningrequests/<name>/approval`: only the
/// conditions (Approved, Denied...) change; spec and the rest of the status
/// are the stored ones. Approval and issuance are separate concerns upstream.
fn take_conditions(new: &mut CertificateSigningRequest, old: &CertificateSigningRequest) {
    new.spec.clone_from(&old.spec);
    let conditions = new.status.conditions.take();
    new.status.clone_from(&old.status);
    new.status.conditions = conditions;
    date_conditions(new, old);
}

/// PrepareForUpdate of `/status`: the certificate may be issued and other
/// conditions set, but the Approved and Denied conditions change only through
/// `approval`: the stored instances are kept in the places the new object has
/// them (upstream's preserveConditionInstances). A write that adds or removes
/// some is left as it is, for [`validate_csr_update`] to refuse.
fn keep_conditions(new: &mut CertificateSigningRequest, old: &CertificateSigningRequest) {
    new.spec.clone_from(&old.spec);
    for kind in ["Approved", "Denied"] {
        let olds = conditions_of(old, kind);
        let conditions = new.status.conditions.iter_mut().flatten();
        let places: Vec<_> = conditions.filter(|c| c.type_ == kind).collect();
        if places.len() == olds.len() {
            for (place, condition) in places.into_iter().zip(olds) {
                place.clone_from(condition);
            }
        }
    }
    date_conditions(new, old);
}

/// The conditions of type `kind`.
fn conditions_of<'c>(
    csr: &'c CertificateSigningRequest,
    kind: &str,
) -> Vec<&'c CertificateSigningRequestCondition> {
    csr.status
        .conditions
        .iter()
        .flatten()
        .filter(|c| c.type_ == kind)
        .collect()
}

/// Update checks of the main endpoint and `/status` (upstream's
/// validateCertificateSigningRequestUpdate): no Approved, Denied or Failed
/// condition may be removed, Approved and Denied are added only through
/// `approval`, and an issued certificate is not replaced. (The main endpoint
/// keeps the stored status, so these bite on `/status` writes.)
fn validate_csr_update(
    new: &CertificateSigningRequest,
    old: &CertificateSigningRequest,
    root: &FieldPath,
    errs: &mut FieldErrors,
) {
    validate_approval_update(new, old, root, errs);
    let path = root.child("status").child("conditions");
    for kind in ["Approved", "Denied"] {
        if conditions_of(new, kind).len() > conditions_of(old, kind).len() {
            let detail = format!("updates may not add a condition of type {kind:?}");
            errs.forbidden(path.clone(), &detail);
        }
    }
    let certificate = |csr: &CertificateSigningRequest| {
        csr.status
            .certificate
            .as_ref()
            .map_or(Vec::new(), |c| c.0.clone())
    };
    let (now, before) = (certificate(new), certificate(old));
    if now != before && !before.is_empty() {
        let detail = "updates may not modify existing certificate content";
        errs.forbidden(root.child("status").child("certificate"), detail);
    }
}

/// Update checks of `approval` (upstream's
/// ValidateCertificateSigningRequestApprovalUpdate beyond the object's own
/// checks): no Approved, Denied or Failed condition may be removed.
fn validate_approval_update(
    new: &CertificateSigningRequest,
    old: &CertificateSigningRequest,
    root: &FieldPath,
    errs: &mut FieldErrors,
) {
    let path = root.child("status").child("conditions");
    for kind in ["Approved", "Denied", "Failed"] {
        if conditions_of(new, kind).len() < conditions_of(old, kind).len() {
            let detail = format!("updates may not remove a condition of type {kind:?}");
            errs.forbidden(path.clone(), &detail);
        }
    }
}

/// Conditions written without times get them (upstream's
/// populateConditionTimestamps): `lastUpdateTime` now; `lastTransitionTime`
/// that of the stored condition of the same type and status, else now.
fn date_conditions(new: &mut CertificateSigningRequest, old: &CertificateSigningRequest) {
    let now = Time::now();
    for condition in new.status.conditions.iter_mut().flatten() {
        condition.last_update_time.get_or_insert(now);
        if condition.last_transition_time.is_none() {
            let kept = old
                .status
                .conditions
                .iter()
                .flatten()
                .filter(|o| o.type_ == condition.type_ && o.status == condition.status)
                .find_map(|o| o.last_transition_time);
            condition.last_transition_time = Some(kept.unwrap_or(now));
        }
    }
}

/// The `kubectl get csr` row (kube-apiserver's
/// `printCertificateSigningRequest`).
fn csr_cells(csr: &CertificateSigningRequest) -> Vec<Value> {
    let spec = &csr.spec;
    let signer = Some(spec.signer_name.as_str()).filter(|s| !s.is_empty());
    let duration = spec
        .expiration_seconds
        .map_or_else(|| "<none>".to_owned(), |s| human_duration(s.into()));
    vec![
        json!(csr.metadata.creation_timestamp.map(|t| t.to_string())),
        json!(signer.unwrap_or("<none>")),
        json!(spec.username.as_deref().unwrap_or_default()),
        json!(duration),
        json!(condition_text(&csr.status)),
    ]
}

/// `Denied`, else `Approved`, else `Pending`; then `,Failed` with a Failed
/// condition and `,Issued` once a certificate is there.
fn condition_text(status: &CertificateSigningRequestStatus) -> String {
    let has = |t: &str| status.conditions.iter().flatten().any(|c| c.type_ == t);
    let mut text = if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    }
    .to_owned();
    if has("Failed") {
        text.push_str(",Failed");
    }
    if status.certificate.as_ref().is_some_and(|c| !c.0.is_empty()) {
        text.push_str(",Issued");
    }
    text
}
