//! The `AdmissionReview` a webhook is sent and what its answer must hold
//! (k8s.io/apiserver's `pkg/admission/plugin/webhook/request`).

use serde_json::{Map, Value, json};

use crate::admission::{Operation, Request};
use crate::user::UserInfo;
use kapi_runtime::ResourceInfo;

/// The review of `request` for AdmissionReview `version` (`v1` or
/// `v1beta1`), with the call's `uid`, the object (None on deletes) and the
/// stored one (None on creates), both whole in the request's version.
pub fn request(
    version: &str,
    uid: &str,
    request: &Request<'_>,
    invoked: &ResourceInfo,
    name: &str,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Value {
    // An action's body is of its own kind (an Eviction on pods/eviction).
    let gvk = |i: &ResourceInfo| match request.body_kind {
        Some((group, version, kind)) => json!({"group": group, "version": version, "kind": kind}),
        None => json!({"group": i.group, "version": i.version, "kind": i.kind}),
    };
    let gvr =
        |i: &ResourceInfo| json!({"group": i.group, "version": i.version, "resource": i.plural});
    let served = request.attrs.scope.served.info;
    let mut body = Map::new();
    body.insert("uid".into(), json!(uid));
    body.insert("kind".into(), gvk(invoked));
    body.insert("resource".into(), gvr(invoked));
    let subresource = request.subresource();
    if !subresource.is_empty() {
        body.insert("subResource".into(), json!(subresource));
    }
    body.insert("requestKind".into(), gvk(served));
    body.insert("requestResource".into(), gvr(served));
    if !subresource.is_empty() {
        body.insert("requestSubResource".into(), json!(subresource));
    }
    if !name.is_empty() {
        body.insert("name".into(), json!(name));
    }
    let namespace = namespace(request, name);
    if !namespace.is_empty() {
        body.insert("namespace".into(), json!(namespace));
    }
    body.insert("operation".into(), json!(operation(request.operation)));
    body.insert("userInfo".into(), user_info(request.user));
    body.insert("object".into(), object.cloned().unwrap_or(Value::Null));
    body.insert("oldObject".into(), old.cloned().unwrap_or(Value::Null));
    body.insert("dryRun".into(), json!(request.dry_run));
    body.insert("options".into(), options(request));
    json!({
        "kind": "AdmissionReview",
        "apiVersion": format!("admission.k8s.io/{version}"),
        "request": body,
    })
}

use crate::admission_plugins::matching::namespace_of as namespace;
pub use crate::admission_plugins::matching::operation;

/// `userInfo`, empty fields left out.
fn user_info(user: &UserInfo) -> Value {
    let mut info = Map::new();
    if !user.name.is_empty() {
        info.insert("username".into(), json!(user.name));
    }
    if !user.uid.is_empty() {
        info.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        info.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        info.insert("extra".into(), json!(user.extra));
    }
    Value::Object(info)
}

/// The write's options object (meta.k8s.io/v1), as the client gave them.
fn options(request: &Request<'_>) -> Value {
    let kind = match request.operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
    };
    let mut options = Map::new();
    options.insert("kind".into(), json!(kind));
    options.insert("apiVersion".into(), json!("meta.k8s.io/v1"));
    if let Some(delete) = request.delete_options {
        if let Ok(Value::Object(given)) = serde_json::to_value(delete) {
            for (key, value) in given {
                if key != "kind" && key != "apiVersion" {
                    options.insert(key, value);
                }
            }
        }
        return Value::Object(options);
    }
    if request.dry_run {
        options.insert("dryRun".into(), json!(["All"]));
    }
    if let Some(manager) = request.given.field_manager.filter(|m| !m.is_empty()) {
        options.insert("fieldManager".into(), json!(manager));
    }
    if let Some(validation) = request.given.field_validation.filter(|v| !v.is_empty()) {
        options.insert("fieldValidation".into(), json!(validation));
    }
    Value::Object(options)
}

/// What a webhook answered, checked as upstream checks it.
pub struct Response {
    pub allowed: bool,
    pub status: Value,
    /// The JSON patch's bytes (decoded from base64), if any.
    pub patch: Option<Vec<u8>>,
    pub patch_type: Option<String>,
    pub warnings: Vec<String>,
    pub audit_annotations: Vec<(String, String)>,
}

/// The answer `body` to a review of `version` sent with `uid`: `Err` is
/// upstream's reason for refusing it (a call failure).
pub fn response(body: &[u8], version: &str, uid: &str, mutating: bool) -> Result<Response, String> {
    let review: Value =
        serde_json::from_slice(body).map_err(|e| format!("failed to call webhook: {e}"))?;
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("received invalid webhook response: webhook response was absent".into());
    };
    let invalid = |why: String| format!("received invalid webhook response: {why}");
    let patch = match response.get("patch").and_then(Value::as_str) {
        Some(encoded) if !encoded.is_empty() => {
            use base64::Engine as _;
            Some(
                base64::engine::general_purpose::STANDARD
                    .decode(encoded)
                    .map_err(|e| format!("failed to call webhook: {e}"))?,
            )
        }
        _ => None,
    };
    let patch_type = response
        .get("patchType")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if version == "v1" {
        let got = response
            .get("uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if got != uid {
            return Err(invalid(format!(
                "expected response.uid={uid:?}, got {got:?}"
            )));
        }
        let text = |key: &str| review.get(key).and_then(Value::as_str).unwrap_or_default();
        if (text("apiVersion"), text("kind")) != ("admission.k8s.io/v1", "AdmissionReview") {
            let (group, version) = match text("apiVersion").split_once('/') {
                Some((g, v)) => (g, v),
                None => ("", text("apiVersion")),
            };
            return Err(invalid(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {group}/{version}, Kind={}",
                text("kind")
            )));
        }
        let has_patch_type = response.get("patchType").is_some_and(|t| !t.is_null());
        if mutating {
            if patch.is_some() && !has_patch_type {
                return Err(invalid(
                    "webhook returned response.patch but not response.patchType".into(),
                ));
            }
            if has_patch_type && patch.is_none() {
                return Err(invalid(
                    "webhook returned response.patchType but not response.patch".into(),
                ));
            }
            if patch_type.as_deref() == Some("") {
                return Err(invalid(
                    "webhook returned invalid response.patchType of \"\"".into(),
                ));
            }
        } else {
            if patch.is_some() {
                return Err(invalid(
                    "validating webhook may not return response.patch".into(),
                ));
            }
            if has_patch_type {
                return Err(invalid(
                    "validating webhook may not return response.patchType".into(),
                ));
            }
        }
    }
    let (patch, patch_type) = match (mutating, version) {
        (false, _) => (None, None),
        // v1beta1 answers patch as JSONPatch whatever they say.
        (true, "v1beta1") => (patch.clone(), patch.map(|_| "JSONPatch".to_owned())),
        (true, _) => (patch, patch_type),
    };
    let warnings = response
        .get("warnings")
        .and_then(Value::as_array)
        .map(|w| {
            w.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let audit_annotations = response
        .get("auditAnnotations")
        .and_then(Value::as_object)
        .map(|a| {
            a.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    Ok(Response {
        allowed: response
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        status: response.get("status").cloned().unwrap_or(Value::Null),
        patch,
        patch_type,
        warnings,
        audit_annotations,
    })
}

/// The `request` variable of CEL expressions (match conditions,
/// policies): the review's request without `uid`, `object` and
/// `oldObject`.
///
/// `invoked` is the resource version the request was matched as (its own,
/// or an equivalent one).
pub fn cel_request(request: &Request<'_>, invoked: &ResourceInfo, name: &str) -> Value {
    let mut review = self::request("v1", "", request, invoked, name, None, None);
    let mut fields = match review.get_mut("request").map(Value::take) {
        Some(Value::Object(fields)) => fields,
        _ => Map::new(),
    };
    for key in ["uid", "object", "oldObject"] {
        fields.remove(key);
    }
    Value::Object(fields)
}
