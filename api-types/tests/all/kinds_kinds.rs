//! Binding and the review kinds (authentication.k8s.io/v1 TokenReview and
//! SelfSubjectReview, authorization.k8s.io/v1 SubjectAccessReview,
//! LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview),
//! with the TokenRequest body, apiregistration.k8s.io/v1 APIService and
//! apiextensions.k8s.io/v1 CustomResourceDefinition, against what the real kube-apiserver 1.32
//! answered to creates (`tests/fixtures/<group>/<kind>.json` and `.pb`, the
//! same request POSTed with `Accept: application/json` and then
//! `application/vnd.kubernetes.protobuf`): the JSON decodes without unknown
//! fields and is written back as the same value and bytes, the protobuf
//! decodes and is encoded again to Go's exact bytes. APIServices and
//! CustomResourceDefinitions were created, then fetched (`GET`) in both
//! encodings.
//!
//! `protobuf_upstream` does not know apiextensions-apiserver's and
//! kube-aggregator's messages, so their field numbers and types are checked
//! here against those groups' `generated.proto` (v0.32.9).

use kapi_api_types::apiextensions::v1::CustomResourceDefinition;
use kapi_api_types::apiextensions::v1::json_schema::{
    JSON, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
    JSONSchemaPropsOrStringArray,
};
use kapi_api_types::apiregistration::v1::APIService;
use kapi_api_types::authentication::v1::{SelfSubjectReview, TokenRequest, TokenReview};
use kapi_api_types::authorization::v1::{
    LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
};
use kapi_api_types::core::v1::Binding;
use kapi_runtime::Resource;
use kapi_runtime::proto::{Message, envelope};
use kapi_runtime::scheme::{KindEntry, Scheme};
use serde_json::{Value, json};

use crate::common;

fn fixture(path: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Go's JSON decodes with every field known and is written back as the same
/// JSON value (type meta added), and by the server's writer as the same bytes.
fn check_json<K: Resource>(path: &str) -> K {
    check_json_as::<K>(path, true)
}

/// [`check_json`], with or without comparing bytes (a hand-indented request
/// body only compares as a value).
fn check_json_as<K: Resource>(path: &str, same_bytes: bool) -> K {
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
    if same_bytes {
        let mut text = Vec::new();
        decoded.object.write_json(&mut text).expect("JSON");
        text.push(b'\n');
        assert_same_bytes(&text, &bytes, &format!("{path}.json text"));
    }
    serde_json::from_slice(&bytes).expect("decodes")
}

/// Go's protobuf decodes (envelope, then the message) and is encoded again to
/// exactly Go's bytes.
fn check_protobuf<K: Message>(path: &str, api_version: &str, kind: &str) -> K {
    let body = fixture(&format!("{path}.pb"));
    let unknown = envelope::decode(&body).unwrap_or_else(|e| panic!("{path}.pb: {e}"));
    assert_eq!(unknown.kind, kind, "{path}.pb");
    assert_eq!(unknown.api_version, api_version, "{path}.pb");
    let object = K::decode(unknown.raw).unwrap_or_else(|e| panic!("{path}.pb: {e}"));
    let ours = object.encode_to_vec();
    assert_same_bytes(&ours, unknown.raw, &format!("{path}.pb"));
    let enveloped = envelope::encode(unknown.api_version, unknown.kind, &ours);
    assert_same_bytes(&enveloped, &body, &format!("{path}.pb envelope"));
    object
}

/// Both fixtures of a kind: each round trip, and both answers decode to the
/// same object (the server's answer to the same request, asked twice).
fn check<K: Resource + Message>(path: &str) -> K {
    let from_json = check_json::<K>(path);
    let from_protobuf = check_protobuf::<K>(path, K::INFO.group_version, K::INFO.kind);
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

/// The Binding request body (see `kinds_core_a`; indented, so compared as a
/// value), now through the registered kind's decoder.
#[test]
fn binding() {
    let binding = check_json_as::<Binding>("core/binding", false);
    assert_eq!(binding.target.kind.as_deref(), Some("Node"));
    let proto = check_protobuf::<Binding>("core/binding", "v1", "Binding");
    assert_eq!(proto.target.name.as_deref(), Some("worker-1"));
}

#[test]
fn token_review_of_a_pod_bound_token() {
    // The token in the two answers differs (two tokens were minted).
    let review = check_json::<TokenReview>("authentication/tokenreview");
    check_protobuf::<TokenReview>(
        "authentication/tokenreview",
        "authentication.k8s.io/v1",
        "TokenReview",
    );
    assert_eq!(review.status.authenticated, Some(true));
    let user = &review.status.user;
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:kinds:reviewer")
    );
    let extra = user.extra.as_ref().expect("extra");
    assert_eq!(
        extra["authentication.kubernetes.io/pod-name"].items,
        ["holder"]
    );
    assert_eq!(extra.len(), 3);
}

#[test]
fn token_review_of_an_invalid_token() {
    let review = check::<TokenReview>("authentication/tokenreview-invalid");
    assert_eq!(review.status.authenticated, None);
    assert_eq!(review.status.error.as_deref(), Some("invalid bearer token"));
    assert_eq!(review.status.user, Default::default());
}

#[test]
fn self_subject_review() {
    // The credential ID in the two answers differs (a new token each time).
    let review = check_json::<SelfSubjectReview>("authentication/selfsubjectreview");
    check_protobuf::<SelfSubjectReview>(
        "authentication/selfsubjectreview",
        "authentication.k8s.io/v1",
        "SelfSubjectReview",
    );
    let user = &review.status.user_info;
    assert_eq!(user.groups.as_ref().map(Vec::len), Some(3));
    assert!(review.metadata.creation_timestamp.is_some());
}

/// TokenRequest is the body of `serviceaccounts/<name>/token`, not a kind of
/// its own: its type meta are fields of the struct.
#[test]
fn token_request() {
    let bytes = fixture("authentication/tokenrequest.json");
    let request: TokenRequest = serde_json::from_slice(&bytes).expect("decodes");
    let go: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(serde_json::to_value(&request).expect("JSON"), go);
    let mut text = serde_json::to_vec(&request).expect("JSON");
    text.push(b'\n');
    assert_same_bytes(&text, &bytes, "tokenrequest.json text");
    let spec = &request.spec;
    assert_eq!(spec.expiration_seconds, Some(3600));
    let bound = spec.bound_object_ref.as_ref().expect("bound object");
    assert_eq!(bound.kind.as_deref(), Some("Secret"));
    assert!(request.status.expiration_timestamp.is_some());
    let proto = check_protobuf::<TokenRequest>(
        "authentication/tokenrequest",
        "authentication.k8s.io/v1",
        "TokenRequest",
    );
    assert_eq!(proto.spec.audiences, ["https://kinds.example.com", "api"]);
    assert_eq!(proto.kind, None, "type meta travel in the envelope");
}

#[test]
fn subject_access_review_with_selector_requirements() {
    let review = check::<SubjectAccessReview>("authorization/subjectaccessreview");
    let attributes = review
        .spec
        .resource_attributes
        .expect("resource attributes");
    let fields = attributes
        .field_selector
        .and_then(|s| s.requirements)
        .expect("field requirements");
    assert_eq!(
        fields[0].values.as_deref(),
        Some(&["worker-1".to_owned(), "worker-2".to_owned()][..])
    );
    let labels = attributes
        .label_selector
        .and_then(|s| s.requirements)
        .expect("label requirements");
    assert_eq!(labels[1].operator, "Exists");
    assert!(review.status.allowed);
    assert!(review.status.evaluation_error.is_some());
}

#[test]
fn local_subject_access_review_with_raw_selectors() {
    let review = check::<LocalSubjectAccessReview>("authorization/localsubjectaccessreview");
    assert_eq!(review.metadata.namespace.as_deref(), Some("kinds"));
    let attributes = review
        .spec
        .resource_attributes
        .expect("resource attributes");
    assert_eq!(
        attributes
            .label_selector
            .and_then(|s| s.raw_selector)
            .as_deref(),
        Some("app=web,tier!=cache")
    );
    assert!(!review.status.allowed);
    assert_eq!(review.status.reason, None);
}

#[test]
fn self_subject_access_reviews() {
    let review = check::<SelfSubjectAccessReview>("authorization/selfsubjectaccessreview");
    assert!(review.status.allowed);
    let review =
        check::<SelfSubjectAccessReview>("authorization/selfsubjectaccessreview-nonresource");
    let path = review.spec.non_resource_attributes.and_then(|a| a.path);
    assert_eq!(path.as_deref(), Some("/healthz"));
}

#[test]
fn self_subject_rules_review() {
    // The two answers list the same rules, non-resource ones in another order
    // (the authorizer walks a Go map).
    let review = check_json::<SelfSubjectRulesReview>("authorization/selfsubjectrulesreview");
    let proto = check_protobuf::<SelfSubjectRulesReview>(
        "authorization/selfsubjectrulesreview",
        "authorization.k8s.io/v1",
        "SelfSubjectRulesReview",
    );
    assert_eq!(proto.status.resource_rules, review.status.resource_rules);
    let status = &review.status;
    assert_eq!(status.resource_rules.len(), 4);
    assert_eq!(status.non_resource_rules.len(), 4);
    assert!(!status.incomplete);
    assert_eq!(
        status.resource_rules[3].resource_names.as_deref(),
        Some(&["bound-secret".to_owned()][..])
    );
}

/// The cells the kind computes, as the request path gets them.
fn cells<K: Resource>(object: &K) -> Vec<Value> {
    let boxed: Box<dyn kapi_runtime::DynObject> = Box::new(object.clone());
    boxed.table_cells().unwrap_or_default()
}

/// The fields of a message as `(name, number, type)`, from the derive.
fn message_fields<M: Message>() -> Vec<(String, u32, String)> {
    M::describe()
        .into_iter()
        .map(|f| (f.name.to_owned(), f.number, f.shape.proto_type()))
        .collect()
}

/// `(name, number, type)` triples as `generated.proto` declares them, by
/// number (as the derive describes them).
fn declared(fields: &[(&str, u32, &str)]) -> Vec<(String, u32, String)> {
    let mut fields: Vec<_> = fields
        .iter()
        .map(|(n, i, t)| ((*n).to_owned(), *i, (*t).to_owned()))
        .collect();
    fields.sort_by_key(|f| f.1);
    fields
}

#[test]
fn apiservice_of_an_extension_server() {
    let service = check::<APIService>("apiregistration/apiservice");
    let spec = &service.spec;
    assert_eq!(spec.service.as_ref().and_then(|s| s.port), Some(8443));
    assert!(
        spec.ca_bundle
            .as_ref()
            .is_some_and(|b| b.0.starts_with(b"-----BEGIN CERTIFICATE-----"))
    );
    assert_eq!(
        (spec.group_priority_minimum, spec.version_priority),
        (1000, 15)
    );
    assert_eq!(
        cells(&service),
        [
            json!("kinds/kinds-api"),
            json!("False (ServiceNotFound)"),
            json!("2026-11-22T21:50:48Z"),
        ]
    );
    let insecure = check::<APIService>("apiregistration/apiservice-insecure");
    assert_eq!(insecure.spec.insecure_skip_tls_verify, Some(true));
    assert_eq!(insecure.spec.service.and_then(|s| s.port), Some(443));
}

#[test]
fn local_apiservice() {
    let service = check::<APIService>("apiregistration/apiservice-local");
    assert_eq!(service.spec.service, None);
    assert_eq!(
        cells(&service),
        [json!("Local"), json!("True"), json!("2026-11-22T21:43:12Z")]
    );
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let info = scheme
        .get("apiregistration.k8s.io", "v1", "apiservices")
        .expect("registered")
        .info;
    assert!(!info.namespaced && info.status_subresource && !info.tracks_generation);
    assert_eq!(info.categories, ["api-extensions"]);
    let mut unknown = service.clone();
    unknown.status.conditions = None;
    assert_eq!(cells(&unknown)[1], json!("Unknown"));
}

/// kube-aggregator's `generated.proto` for apiregistration/v1.
#[test]
fn apiservice_messages_are_kube_aggregators() {
    use kapi_api_types::apiregistration::v1::apiservice::{
        APIServiceCondition, APIServiceSpec, APIServiceStatus, ServiceReference,
    };
    assert_eq!(
        message_fields::<APIService>(),
        declared(&[
            ("metadata", 1, "ObjectMeta"),
            ("spec", 2, "APIServiceSpec"),
            ("status", 3, "APIServiceStatus"),
        ])
    );
    assert_eq!(
        message_fields::<APIServiceSpec>(),
        declared(&[
            ("service", 1, "ServiceReference"),
            ("group", 2, "string"),
            ("version", 3, "string"),
            ("insecureSkipTLSVerify", 4, "bool"),
            ("caBundle", 5, "bytes"),
            ("groupPriorityMinimum", 7, "int32"),
            ("versionPriority", 8, "int32"),
        ])
    );
    assert_eq!(
        message_fields::<ServiceReference>(),
        declared(&[
            ("namespace", 1, "string"),
            ("name", 2, "string"),
            ("port", 3, "int32"),
        ])
    );
    assert_eq!(
        message_fields::<APIServiceStatus>(),
        declared(&[("conditions", 1, "repeated APIServiceCondition")])
    );
    assert_eq!(
        message_fields::<APIServiceCondition>(),
        declared(&[
            ("type", 1, "string"),
            ("status", 2, "string"),
            ("lastTransitionTime", 3, "Time"),
            ("reason", 4, "string"),
            ("message", 5, "string"),
        ])
    );
}

/// Each kind is registered with the facts of the real server's discovery:
/// scope, plural, no short names or categories, no `/status`, no generation
/// (nothing is stored), protobuf spoken.
#[test]
fn kinds_are_registered_as_upstream_serves_them() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    for (group, kind, plural, namespaced) in [
        ("", "Binding", "bindings", true),
        (
            "authentication.k8s.io",
            "TokenReview",
            "tokenreviews",
            false,
        ),
        (
            "authentication.k8s.io",
            "SelfSubjectReview",
            "selfsubjectreviews",
            false,
        ),
        (
            "authorization.k8s.io",
            "SubjectAccessReview",
            "subjectaccessreviews",
            false,
        ),
        (
            "authorization.k8s.io",
            "LocalSubjectAccessReview",
            "localsubjectaccessreviews",
            true,
        ),
        (
            "authorization.k8s.io",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
            false,
        ),
        (
            "authorization.k8s.io",
            "SelfSubjectRulesReview",
            "selfsubjectrulesreviews",
            false,
        ),
    ] {
        let entry = scheme
            .get(group, "v1", plural)
            .unwrap_or_else(|| panic!("{plural} is not registered"));
        let info = entry.info;
        assert_eq!(info.kind, kind);
        assert_eq!(info.namespaced, namespaced, "{kind}");
        assert!(info.short_names.is_empty(), "{kind}");
        assert!(info.categories.is_empty(), "{kind}");
        assert!(!info.status_subresource, "{kind}");
        assert!(!info.tracks_generation, "{kind}");
        assert!(entry.proto.is_some(), "{kind} speaks protobuf");
    }
}

/// TokenRequest is not a registered kind, so `openapi_upstream` does not reach
/// it: its definitions have upstream's names, properties, types, required
/// lists and list types.
#[test]
fn token_request_schema_is_upstreams() {
    let Some(text) = common::upstream("openapi-v2-k8s-1.32.json") else {
        return;
    };
    let upstream: Value = serde_json::from_str(&text).expect("JSON");
    let mut defs = kapi_runtime::openapi::Definitions::new();
    <TokenRequest as kapi_runtime::openapi::OpenApi>::schema(&mut defs);
    let outline = |schema: &Value| -> Value {
        let properties: serde_json::Map<String, Value> = schema["properties"]
            .as_object()
            .expect("properties")
            .iter()
            .map(|(name, p)| {
                let mut p = p.clone();
                if let Some(p) = p.as_object_mut() {
                    p.remove("description");
                }
                (name.clone(), p)
            })
            .collect();
        json!({"properties": properties, "required": schema["required"]})
    };
    for name in [
        "TokenRequest",
        "TokenRequestSpec",
        "TokenRequestStatus",
        "BoundObjectReference",
    ] {
        let name = format!("io.k8s.api.authentication.v1.{name}");
        let ours = defs.get(&name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(
            outline(ours),
            outline(&upstream["definitions"][&name]),
            "{name}"
        );
    }
}

/// A namespaced CRD using most of the schema dialect: numbers with fractions,
/// defaults and examples of every JSON type, enums with null, CEL rules,
/// list and map types, int-or-string, embedded resources, allOf/oneOf/anyOf/not,
/// `additionalProperties` as a schema and as a boolean; two versions,
/// subresources, printer columns, selectable fields, a conversion webhook
/// behind a Service.
#[test]
fn custom_resource_definition() {
    // Go's encoding/json escapes `<`, `>` and `&` in strings (`\u003e` in
    // the CEL rules); kapi's writer does not, so the bytes are compared with
    // those escapes undone, and the values exactly.
    let path = "apiextensions/customresourcedefinition";
    let crd = check_json_as::<CustomResourceDefinition>(path, false);
    let go = String::from_utf8(fixture(&format!("{path}.json"))).expect("UTF-8");
    let go = go
        .replace("\\u003c", "<")
        .replace("\\u003e", ">")
        .replace("\\u0026", "&");
    let mut ours = Vec::new();
    let object: Box<dyn kapi_runtime::DynObject> = Box::new(crd.clone());
    object.write_json(&mut ours).expect("JSON");
    ours.push(b'\n');
    assert_same_bytes(&ours, go.as_bytes(), "customresourcedefinition.json text");
    let proto = check_protobuf::<CustomResourceDefinition>(
        path,
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
    );
    assert_eq!(
        serde_json::to_value(&proto).expect("JSON"),
        serde_json::to_value(&crd).expect("JSON")
    );
    assert_eq!(crd.metadata.generation, Some(1));
    let v1 = &crd.spec.versions[0];
    let schema = v1
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .expect("schema");
    let spec = &schema.properties.as_ref().expect("properties")["spec"];
    let props = spec.properties.as_ref().expect("spec properties");
    assert_eq!(props["ratio"].multiple_of, Some(0.05));
    assert_eq!(props["size"].maximum, Some(100.0));
    assert_eq!(
        props["size"].default.as_ref().map(JSON::to_value),
        Some(json!(3))
    );
    assert_eq!(
        props["settings"].default.as_ref().map(JSON::to_value),
        Some(json!({"a": [1, "x"], "b": 2, "c": {"d": null}}))
    );
    let members = props["mode"].enum_.as_ref().expect("enum");
    assert_eq!(members[2], JSON::default(), "null is a member");
    assert_eq!(
        props["labels"]
            .additional_properties
            .as_ref()
            .map(|a| a.allows),
        Some(true)
    );
    assert!(
        props["open"]
            .additional_properties
            .as_ref()
            .is_some_and(|a| a.allows && a.schema.is_none())
    );
    assert!(props["choice"].not.is_some());
    let tags = props["tags"].items.as_ref().and_then(|i| i.schema.as_ref());
    assert_eq!(tags.and_then(|s| s.type_.as_deref()), Some("string"));
    let rules = spec.x_kubernetes_validations.as_ref().expect("rules");
    assert_eq!(rules[1].optional_old_self, Some(false));
    let scale = v1
        .subresources
        .as_ref()
        .and_then(|s| s.scale.as_ref())
        .expect("scale");
    assert_eq!(
        scale.label_selector_path.as_deref(),
        Some(".status.selector")
    );
    let webhook = crd
        .spec
        .conversion
        .as_ref()
        .and_then(|c| c.webhook.as_ref());
    let service = webhook
        .and_then(|w| w.client_config.as_ref())
        .and_then(|c| c.service.as_ref())
        .expect("service");
    assert_eq!(service.port, Some(8443));
    assert_eq!(crd.spec.versions[1].deprecated, Some(true));
    assert_eq!(crd.status.stored_versions, ["v1"]);
    assert_eq!(crd.status.conditions.as_ref().map_or(0, Vec::len), 2);
}

/// A cluster-scoped CRD with a conversion webhook by URL and a version that
/// is not served.
#[test]
fn cluster_scoped_custom_resource_definition() {
    let crd = check::<CustomResourceDefinition>("apiextensions/customresourcedefinition-cluster");
    assert_eq!(crd.spec.scope, "Cluster");
    let url = crd
        .spec
        .conversion
        .and_then(|c| c.webhook)
        .and_then(|w| w.client_config)
        .and_then(|c| c.url);
    assert_eq!(
        url.as_deref(),
        Some("https://converter.kinds.example.com/convert")
    );
    assert!(!crd.spec.versions[1].served);
}

/// The either-or schema fields read and write the JSON shapes Go's
/// `UnmarshalJSON`/`MarshalJSON` do, including the forms CustomResourceDefinitions
/// refuse (item arrays, dependencies), and protobuf carries every part.
#[test]
fn schema_either_or_shapes() {
    let text = r##"{"items":[{"type":"string"},{"type":"integer"}],"additionalItems":false,"dependencies":{"a":["b","c"],"d":{"required":["e"]}},"patternProperties":{"^x-":{"type":"string"}},"definitions":{"port":{"type":"integer","minimum":1,"maximum":65535}},"$ref":"#/definitions/port","$schema":"http://json-schema.org/draft-04/schema#","id":"urn:kinds","uniqueItems":true,"maximum":1e+21,"minimum":0.000001,"example":{"b":[true,null],"a":"\u003cnone\u003e"}}"##;
    let schema: JSONSchemaProps = serde_json::from_str(text).expect("decodes");
    let items = schema.items.as_ref().expect("items");
    assert!(items.schema.is_none());
    assert_eq!(items.json_schemas.len(), 2);
    assert_eq!(
        schema.additional_items,
        Some(JSONSchemaPropsOrBool {
            allows: false,
            schema: None
        })
    );
    let dependencies = schema.dependencies.as_ref().expect("dependencies");
    assert_eq!(dependencies["a"].property, ["b", "c"]);
    assert!(dependencies["d"].schema.is_some());
    // The example keeps its text: key order and escapes as written.
    assert_eq!(
        schema
            .example
            .as_ref()
            .and_then(|e| e.raw.as_ref())
            .map(|r| r.0.as_slice()),
        Some(&br#"{"b":[true,null],"a":"\u003cnone\u003e"}"#[..])
    );
    let back = serde_json::to_value(&schema).expect("JSON");
    let go: Value = serde_json::from_str(text).expect("JSON");
    assert_eq!(back, go);
    let proto = JSONSchemaProps::decode(&schema.encode_to_vec()).expect("decodes");
    assert_eq!(proto, schema);
    // Empty either-or values: what Go writes for them.
    assert_eq!(
        serde_json::to_value(JSONSchemaPropsOrArray::default()).expect("JSON"),
        Value::Null
    );
    assert_eq!(
        serde_json::to_value(JSONSchemaPropsOrStringArray::default()).expect("JSON"),
        Value::Null
    );
    assert_eq!(
        serde_json::to_value(JSONSchemaPropsOrBool::default()).expect("JSON"),
        json!(false)
    );
    assert!(serde_json::from_str::<JSONSchemaPropsOrBool>("1").is_err());
    // Whitespace between tokens goes, as Go compacts raw JSON.
    let spaced: JSON = serde_json::from_str("{ \"a\" : [ 1, \"b c\" ] }").expect("decodes");
    assert_eq!(
        serde_json::to_string(&spaced).expect("JSON"),
        r#"{"a":[1,"b c"]}"#
    );
}

/// apiextensions-apiserver's `generated.proto` (v0.32.9), which the shared
/// upstream `.proto` does not hold.
#[test]
fn custom_resource_definition_messages_are_apiextensions() {
    use kapi_api_types::apiextensions::v1::customresourcedefinition::*;
    use kapi_api_types::apiextensions::v1::json_schema::{ExternalDocumentation, ValidationRule};
    let message = |fields: Vec<(String, u32, String)>, expected: &[(&str, u32, &str)]| {
        assert_eq!(fields, declared(expected));
    };
    message(
        message_fields::<CustomResourceDefinition>(),
        &[
            ("metadata", 1, "ObjectMeta"),
            ("spec", 2, "CustomResourceDefinitionSpec"),
            ("status", 3, "CustomResourceDefinitionStatus"),
        ],
    );
    message(
        message_fields::<CustomResourceDefinitionSpec>(),
        &[
            ("group", 1, "string"),
            ("names", 3, "CustomResourceDefinitionNames"),
            ("scope", 4, "string"),
            ("versions", 7, "repeated CustomResourceDefinitionVersion"),
            ("conversion", 9, "CustomResourceConversion"),
            ("preserveUnknownFields", 10, "bool"),
        ],
    );
    message(
        message_fields::<CustomResourceConversion>(),
        &[
            ("strategy", 1, "string"),
            ("webhook", 2, "WebhookConversion"),
        ],
    );
    message(
        message_fields::<WebhookConversion>(),
        &[
            ("clientConfig", 2, "WebhookClientConfig"),
            ("conversionReviewVersions", 3, "repeated string"),
        ],
    );
    message(
        message_fields::<WebhookClientConfig>(),
        &[
            ("url", 3, "string"),
            ("service", 1, "ServiceReference"),
            ("caBundle", 2, "bytes"),
        ],
    );
    message(
        message_fields::<ServiceReference>(),
        &[
            ("namespace", 1, "string"),
            ("name", 2, "string"),
            ("path", 3, "string"),
            ("port", 4, "int32"),
        ],
    );
    message(
        message_fields::<CustomResourceDefinitionVersion>(),
        &[
            ("name", 1, "string"),
            ("served", 2, "bool"),
            ("storage", 3, "bool"),
            ("deprecated", 7, "bool"),
            ("deprecationWarning", 8, "string"),
            ("schema", 4, "CustomResourceValidation"),
            ("subresources", 5, "CustomResourceSubresources"),
            (
                "additionalPrinterColumns",
                6,
                "repeated CustomResourceColumnDefinition",
            ),
            ("selectableFields", 9, "repeated SelectableField"),
        ],
    );
    message(
        message_fields::<SelectableField>(),
        &[("jsonPath", 1, "string")],
    );
    message(
        message_fields::<CustomResourceColumnDefinition>(),
        &[
            ("name", 1, "string"),
            ("type", 2, "string"),
            ("format", 3, "string"),
            ("description", 4, "string"),
            ("priority", 5, "int32"),
            ("jsonPath", 6, "string"),
        ],
    );
    message(
        message_fields::<CustomResourceDefinitionNames>(),
        &[
            ("plural", 1, "string"),
            ("singular", 2, "string"),
            ("shortNames", 3, "repeated string"),
            ("kind", 4, "string"),
            ("listKind", 5, "string"),
            ("categories", 6, "repeated string"),
        ],
    );
    message(
        message_fields::<CustomResourceDefinitionStatus>(),
        &[
            (
                "conditions",
                1,
                "repeated CustomResourceDefinitionCondition",
            ),
            ("acceptedNames", 2, "CustomResourceDefinitionNames"),
            ("storedVersions", 3, "repeated string"),
        ],
    );
    message(
        message_fields::<CustomResourceDefinitionCondition>(),
        &[
            ("type", 1, "string"),
            ("status", 2, "string"),
            ("lastTransitionTime", 3, "Time"),
            ("reason", 4, "string"),
            ("message", 5, "string"),
        ],
    );
    message(
        message_fields::<CustomResourceValidation>(),
        &[("openAPIV3Schema", 1, "JSONSchemaProps")],
    );
    message(
        message_fields::<CustomResourceSubresources>(),
        &[
            ("status", 1, "CustomResourceSubresourceStatus"),
            ("scale", 2, "CustomResourceSubresourceScale"),
        ],
    );
    message(message_fields::<CustomResourceSubresourceStatus>(), &[]);
    message(
        message_fields::<CustomResourceSubresourceScale>(),
        &[
            ("specReplicasPath", 1, "string"),
            ("statusReplicasPath", 2, "string"),
            ("labelSelectorPath", 3, "string"),
        ],
    );
    message(
        message_fields::<ExternalDocumentation>(),
        &[("description", 1, "string"), ("url", 2, "string")],
    );
    message(message_fields::<JSON>(), &[("raw", 1, "bytes")]);
    message(
        message_fields::<JSONSchemaProps>(),
        &[
            ("id", 1, "string"),
            ("schema", 2, "string"),
            ("ref", 3, "string"),
            ("description", 4, "string"),
            ("type", 5, "string"),
            ("format", 6, "string"),
            ("title", 7, "string"),
            ("default", 8, "JSON"),
            ("maximum", 9, "double"),
            ("exclusiveMaximum", 10, "bool"),
            ("minimum", 11, "double"),
            ("exclusiveMinimum", 12, "bool"),
            ("maxLength", 13, "int64"),
            ("minLength", 14, "int64"),
            ("pattern", 15, "string"),
            ("maxItems", 16, "int64"),
            ("minItems", 17, "int64"),
            ("uniqueItems", 18, "bool"),
            ("multipleOf", 19, "double"),
            ("enum", 20, "repeated JSON"),
            ("maxProperties", 21, "int64"),
            ("minProperties", 22, "int64"),
            ("required", 23, "repeated string"),
            ("items", 24, "JSONSchemaPropsOrArray"),
            ("allOf", 25, "repeated JSONSchemaProps"),
            ("oneOf", 26, "repeated JSONSchemaProps"),
            ("anyOf", 27, "repeated JSONSchemaProps"),
            ("not", 28, "JSONSchemaProps"),
            ("properties", 29, "map<string, JSONSchemaProps>"),
            ("additionalProperties", 30, "JSONSchemaPropsOrBool"),
            ("patternProperties", 31, "map<string, JSONSchemaProps>"),
            (
                "dependencies",
                32,
                "map<string, JSONSchemaPropsOrStringArray>",
            ),
            ("additionalItems", 33, "JSONSchemaPropsOrBool"),
            ("definitions", 34, "map<string, JSONSchemaProps>"),
            ("externalDocs", 35, "ExternalDocumentation"),
            ("example", 36, "JSON"),
            ("nullable", 37, "bool"),
            ("xKubernetesPreserveUnknownFields", 38, "bool"),
            ("xKubernetesEmbeddedResource", 39, "bool"),
            ("xKubernetesIntOrString", 40, "bool"),
            ("xKubernetesListMapKeys", 41, "repeated string"),
            ("xKubernetesListType", 42, "string"),
            ("xKubernetesMapType", 43, "string"),
            ("xKubernetesValidations", 44, "repeated ValidationRule"),
        ],
    );
    message(
        message_fields::<ValidationRule>(),
        &[
            ("rule", 1, "string"),
            ("message", 2, "string"),
            ("messageExpression", 3, "string"),
            ("reason", 4, "string"),
            ("fieldPath", 5, "string"),
            ("optionalOldSelf", 6, "bool"),
        ],
    );
    message(
        message_fields::<JSONSchemaPropsOrArray>(),
        &[
            ("schema", 1, "JSONSchemaProps"),
            ("jSONSchemas", 2, "repeated JSONSchemaProps"),
        ],
    );
    message(
        message_fields::<JSONSchemaPropsOrBool>(),
        &[("allows", 1, "bool"), ("schema", 2, "JSONSchemaProps")],
    );
    message(
        message_fields::<JSONSchemaPropsOrStringArray>(),
        &[
            ("schema", 1, "JSONSchemaProps"),
            ("property", 2, "repeated string"),
        ],
    );
    assert_eq!(<JSON as Message>::NAME, "JSON");
}

#[test]
fn custom_resource_definition_is_registered_as_upstream_serves_it() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let entry = scheme
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .expect("registered");
    let info = entry.info;
    assert!(!info.namespaced && info.status_subresource && info.tracks_generation);
    assert_eq!(info.short_names, ["crd", "crds"]);
    assert_eq!(info.categories, ["api-extensions"]);
    assert!(entry.proto.is_some());
    let columns: Vec<_> = info.printer_columns.iter().map(|c| c.name).collect();
    assert_eq!(columns, ["Created At"]);
}
