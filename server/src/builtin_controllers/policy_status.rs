//! The ValidatingAdmissionPolicy status controller (kube-controller-manager's
//! validatingadmissionpolicy-status-controller): each policy whose
//! `metadata.generation` is newer than its `status.observedGeneration` has
//! its validations type-checked against the kinds its rules match, and the
//! findings written to `status.typeChecking` (present, even empty, once the
//! check is done) with server-side apply as the field manager
//! `validatingadmissionpolicy-status`.
//!
//! The check follows upstream's TypeChecker: every `expression` and
//! `messageExpression` of `spec.validations`, checked once per kind the
//! `matchConstraints.resourceRules` name exactly (a rule with a wildcard
//! group or version is skipped, as are wildcard and subresource resources;
//! at most ten kinds a rule), each kind typed by the schema the server
//! publishes at `/openapi/v3` (built-in and custom kinds alike; a kind
//! without one is left out). `object` and `oldObject` take the kind's type,
//! `params` the parameter kind's when it resolves (otherwise it is
//! undeclared), `request` and `namespaceObject` upstream's fixed types, and
//! `variables` the types of the policy's variables. A finding reads
//! `<group>/<version>, Kind=<Kind>: ` and cel-go's error text; findings for
//! several kinds are joined by a blank line.
//!
//! Not yet as upstream: `authorizer` is checked as a dynamic value (its
//! library is not typed), and the checker judges operators only on scalar
//! operands.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use axum::http::Method;
use kapi_api_types::admissionregistration::v1::ValidatingAdmissionPolicy;
use kapi_api_types::admissionregistration::v1::rule::MatchResources;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::controllers::client::{Client, Resource};
use crate::controllers::informer::{self, Event, Source};
use crate::custom::cel::check::check_typed;
use crate::custom::cel::types::{DYNAMIC, Ty};

/// The field manager of the status it writes (upstream's).
const FIELD_MANAGER: &str = "validatingadmissionpolicy-status";

/// The most kinds one rule adds to a check (upstream's `maxTypesToCheck`).
const MOST_KINDS: usize = 10;

/// How deep references in a schema are followed (a kind whose schema refers
/// to itself, as a CRD's does, is dynamic below that).
const MOST_DEPTH: usize = 24;

/// Runs the controller until aborted.
pub async fn run(client: Client) {
    let mut tasks = JoinSet::new();
    let (tx, mut rx) = mpsc::channel::<((), Event<ValidatingAdmissionPolicy>)>(256);
    informer::spawn(
        &mut tasks,
        client.clone(),
        Source::all(Resource::of::<ValidatingAdmissionPolicy>()),
        (),
        tx,
    );
    while let Some(((), event)) = rx.recv().await {
        let policies = match event {
            Event::Listed(all) => all,
            Event::Applied(policy) => vec![policy],
            Event::Deleted(_) => continue,
        };
        for policy in policies {
            let generation = policy.metadata.generation.unwrap_or(0);
            if generation <= policy.status.observed_generation.unwrap_or(0) {
                continue;
            }
            let warnings = TypeChecker::new(&client).check(&policy).await;
            write_status(&client, &policy, generation, warnings).await;
        }
    }
}

/// Writes the findings, tried again a few times when the server refuses
/// for a passing reason (the informer brings the policy back on a change).
async fn write_status(
    client: &Client,
    policy: &ValidatingAdmissionPolicy,
    generation: i64,
    warnings: Vec<(String, String)>,
) {
    let name = policy.metadata.name.as_deref().unwrap_or_default();
    let mut type_checking = Map::new();
    if !warnings.is_empty() {
        let warnings: Vec<Value> = warnings
            .into_iter()
            .map(|(field_ref, warning)| json!({"fieldRef": field_ref, "warning": warning}))
            .collect();
        type_checking.insert("expressionWarnings".into(), Value::Array(warnings));
    }
    let body = json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "status": {"observedGeneration": generation, "typeChecking": type_checking},
    });
    let uri = format!(
        "{}/status?fieldManager={FIELD_MANAGER}&force=true",
        Resource::of::<ValidatingAdmissionPolicy>().path(None, Some(name))
    );
    let mut pause = Duration::from_millis(200);
    for _ in 0..5 {
        let applied = client
            .request(
                Method::PATCH,
                &uri,
                "application/apply-patch+yaml",
                "application/json",
                Some(&body),
            )
            .await;
        match applied {
            Ok(_) => return,
            Err(e) if e.is_not_found() => return,
            Err(e) => {
                tracing::debug!(policy = %name, error = %e, "could not write the type checking");
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
        }
    }
}

/// A kind a policy's rules match.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Gvk {
    group: String,
    version: String,
    kind: String,
}

impl std::fmt::Display for Gvk {
    /// As Go's `schema.GroupVersionKind` prints itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// One check's reads of discovery and of the OpenAPI documents, each read
/// once.
struct TypeChecker<'c> {
    client: &'c Client,
    /// `(group, version)`'s resources: name to kind.
    resources: BTreeMap<(String, String), Option<BTreeMap<String, String>>>,
    /// `(group, version)`'s OpenAPI v3 schemas.
    documents: BTreeMap<(String, String), Option<Value>>,
}

impl<'c> TypeChecker<'c> {
    fn new(client: &'c Client) -> TypeChecker<'c> {
        TypeChecker {
            client,
            resources: BTreeMap::new(),
            documents: BTreeMap::new(),
        }
    }

    /// The findings, `(fieldRef, warning)`, in upstream's order.
    async fn check(&mut self, policy: &ValidatingAdmissionPolicy) -> Vec<(String, String)> {
        let spec = &policy.spec;
        let validations = spec.validations.as_deref().unwrap_or_default();
        if validations.is_empty() {
            return Vec::new();
        }
        let mut kinds = Vec::new();
        for gvk in self.kinds_to_check(spec.match_constraints.as_ref()).await {
            if let Some(ty) = self.type_of(&gvk).await {
                kinds.push((gvk, ty));
            }
        }
        let params = match &spec.param_kind {
            Some(param) => {
                self.param_type(param.api_version.as_deref(), param.kind.as_deref())
                    .await
            }
            None => None,
        };
        let variables = spec.variables.as_deref().unwrap_or_default();
        let environments: Vec<(&Gvk, Vec<(String, Ty)>)> = kinds
            .iter()
            .map(|(gvk, ty)| {
                let mut env = environment(ty, params.as_ref());
                let mut fields = BTreeMap::new();
                for variable in variables {
                    // A variable that does not check is dynamic; its error is
                    // not a finding of its own (upstream's).
                    let mut scope = env.clone();
                    scope.push(("variables".into(), object(fields.clone())));
                    let ty = checked(&variable.expression, scope).unwrap_or(Ty::Dyn);
                    fields.insert(variable.name.clone(), ty);
                }
                env.push(("variables".into(), object(fields)));
                (gvk, env)
            })
            .collect();
        let mut warnings = Vec::new();
        for (i, validation) in validations.iter().enumerate() {
            let message = validation
                .message_expression
                .as_deref()
                .filter(|m| !m.is_empty());
            let expressions = [
                ("expression", Some(validation.expression.as_str())),
                ("messageExpression", message),
            ];
            for (field, text) in expressions {
                let Some(text) = text else {
                    continue;
                };
                let found: Vec<String> = environments
                    .iter()
                    .filter_map(|(gvk, env)| {
                        let error = checked(text, env.clone()).err()?;
                        Some(format!("{gvk}: {error}\n"))
                    })
                    .collect();
                if !found.is_empty() {
                    warnings.push((format!("spec.validations[{i}].{field}"), found.join("\n")));
                }
            }
        }
        warnings
    }

    /// The kinds the rules name exactly, sorted (upstream's `typesToCheck`).
    async fn kinds_to_check(&mut self, constraints: Option<&MatchResources>) -> Vec<Gvk> {
        let mut kinds = BTreeSet::new();
        let rules = constraints
            .and_then(|c| c.resource_rules.as_deref())
            .unwrap_or_default();
        for rule in rules {
            let rule = &rule.rule_with_operations;
            let sorted = |list: &Option<Vec<String>>| -> Option<Vec<String>> {
                let list = list.as_deref().unwrap_or_default();
                if list.iter().any(|item| item.contains('*')) {
                    return None;
                }
                let mut list = list.to_vec();
                list.sort();
                Some(list)
            };
            let (Some(groups), Some(versions)) =
                (sorted(&rule.api_groups), sorted(&rule.api_versions))
            else {
                continue;
            };
            let mut resources: Vec<String> = rule
                .resources
                .iter()
                .flatten()
                .filter(|r| !r.contains('*') && !r.contains('/'))
                .cloned()
                .collect();
            resources.sort();
            let mut count = 0;
            'rule: for group in &groups {
                for version in &versions {
                    for resource in &resources {
                        let Some(kind) = self.kind_of(group, version, resource).await else {
                            continue;
                        };
                        kinds.insert(Gvk {
                            group: group.clone(),
                            version: version.clone(),
                            kind,
                        });
                        count += 1;
                        if count == MOST_KINDS {
                            break 'rule;
                        }
                    }
                }
            }
        }
        kinds.into_iter().collect()
    }

    /// The kind of `resource` in `group`/`version`, from discovery.
    async fn kind_of(&mut self, group: &str, version: &str, resource: &str) -> Option<String> {
        let key = (group.to_owned(), version.to_owned());
        if !self.resources.contains_key(&key) {
            let path = match group {
                "" => format!("/api/{version}"),
                _ => format!("/apis/{group}/{version}"),
            };
            let found = self.client.get_path(&path).await.ok().map(|list| {
                list["resources"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|r| {
                        Some((
                            r["name"].as_str()?.to_owned(),
                            r["kind"].as_str()?.to_owned(),
                        ))
                    })
                    .collect()
            });
            self.resources.insert(key.clone(), found);
        }
        self.resources.get(&key)?.as_ref()?.get(resource).cloned()
    }

    /// The type of `gvk`'s objects, from its schema in the OpenAPI v3
    /// document of its group version.
    async fn type_of(&mut self, gvk: &Gvk) -> Option<Ty> {
        let key = (gvk.group.clone(), gvk.version.clone());
        if !self.documents.contains_key(&key) {
            let path = match gvk.group.as_str() {
                "" => format!("/openapi/v3/api/{}", gvk.version),
                group => format!("/openapi/v3/apis/{group}/{}", gvk.version),
            };
            let schemas =
                self.client.get_path(&path).await.ok().and_then(|mut doc| {
                    Some(doc.get_mut("components")?.get_mut("schemas")?.take())
                });
            self.documents.insert(key.clone(), schemas);
        }
        let schemas = self.documents.get(&key)?.as_ref()?.as_object()?;
        let (name, root) = schemas.iter().find(|(_, schema)| names_kind(schema, gvk))?;
        Some(Ty::of_schema(&inline(
            root,
            schemas,
            0,
            &mut vec![name.clone()],
        )))
    }

    /// The type of the parameter kind `api_version`/`kind`, when it resolves.
    async fn param_type(&mut self, api_version: Option<&str>, kind: Option<&str>) -> Option<Ty> {
        let (api_version, kind) = (api_version?, kind?);
        let (group, version) = match api_version.split_once('/') {
            Some((group, version)) => (group, version),
            None => ("", api_version),
        };
        let gvk = Gvk {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        };
        self.type_of(&gvk).await
    }
}

/// Whether `schema` is the one of `gvk` (its `x-kubernetes-group-version-kind`).
fn names_kind(schema: &Value, gvk: &Gvk) -> bool {
    schema["x-kubernetes-group-version-kind"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|g| {
            g["group"] == gvk.group.as_str()
                && g["version"] == gvk.version.as_str()
                && g["kind"] == gvk.kind.as_str()
        })
}

/// A schema node of any type.
fn dynamic() -> Value {
    json!({ DYNAMIC: true })
}

/// `schema` with its references (`$ref`, and `allOf` around one) replaced
/// by what they name in `schemas`, `depth` levels deep at most; a reference
/// to a schema being inlined already on the way here (`path`: a type that
/// contains itself) is dynamic.
fn inline(
    schema: &Value,
    schemas: &Map<String, Value>,
    depth: usize,
    path: &mut Vec<String>,
) -> Value {
    if depth >= MOST_DEPTH {
        return dynamic();
    }
    let Some(node) = schema.as_object() else {
        return schema.clone();
    };
    let referenced = node
        .get("$ref")
        .or_else(|| match node.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => all[0].get("$ref"),
            _ => None,
        })
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/components/schemas/"));
    if let Some(name) = referenced {
        let Some(target) = schemas.get(name) else {
            return dynamic();
        };
        if path.iter().any(|on_the_way| on_the_way == name) {
            return dynamic();
        }
        path.push(name.to_owned());
        let inlined = inline(target, schemas, depth + 1, path);
        path.pop();
        return inlined;
    }
    let mut out = Map::new();
    for (key, value) in node {
        let value = match key.as_str() {
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, property)| {
                        (name.clone(), inline(property, schemas, depth + 1, path))
                    })
                    .collect(),
            ),
            "items" | "additionalProperties" if value.is_object() => {
                inline(value, schemas, depth + 1, path)
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    Value::Object(out)
}

/// The variables every expression of a policy may read, for objects of
/// type `object` (upstream's composition environment).
fn environment(object: &Ty, params: Option<&Ty>) -> Vec<(String, Ty)> {
    let mut env = vec![
        ("object".to_owned(), object.clone()),
        ("oldObject".to_owned(), object.clone()),
        ("request".to_owned(), Ty::of_schema(&request_schema())),
        (
            "namespaceObject".to_owned(),
            Ty::of_schema(&namespace_schema()),
        ),
        ("authorizer".to_owned(), Ty::Dyn),
    ];
    if let Some(params) = params {
        env.push(("params".to_owned(), params.clone()));
    }
    env
}

/// An object type of these fields.
fn object(fields: BTreeMap<String, Ty>) -> Ty {
    let max = fields.len() as u64;
    Ty::Object {
        fields: std::sync::Arc::new(fields),
        max,
    }
}

/// `text` checked with the variables `env`: its type, or cel-go's error text.
fn checked(text: &str, env: Vec<(String, Ty)>) -> Result<Ty, String> {
    let program = crate::custom::cel::parse(text)?;
    check_typed(&program, env)
}

/// The admission request as policies see it (upstream's `BuildRequestType`).
fn request_schema() -> Value {
    let text = json!({"type": "string"});
    let gvk = json!({"type": "object", "properties": {
        "group": text, "version": text, "kind": text}});
    let gvr = json!({"type": "object", "properties": {
        "group": text, "version": text, "resource": text}});
    json!({"type": "object", "properties": {
        "kind": gvk, "resource": gvr, "subResource": text,
        "requestKind": gvk, "requestResource": gvr, "requestSubResource": text,
        "name": text, "namespace": text, "operation": text,
        "userInfo": {"type": "object", "properties": {
            "username": text, "uid": text,
            "groups": {"type": "array", "items": text},
            "extra": {"type": "object", "additionalProperties": {"type": "array", "items": text}}}},
        "dryRun": {"type": "boolean"},
        "options": {"x-kubernetes-preserve-unknown-fields": true}}})
}

/// The namespace as policies see it (upstream's `BuildNamespaceType`).
fn namespace_schema() -> Value {
    let text = json!({"type": "string"});
    let texts = json!({"type": "array", "items": text});
    let labels = json!({"type": "object", "additionalProperties": text});
    let time = json!({"type": "string", "format": "date-time"});
    json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {
            "name": text, "generateName": text, "namespace": text,
            "labels": labels, "annotations": labels, "UID": text,
            "creationTimestamp": time, "deletionGracePeriodSeconds": {"type": "integer"},
            "deletionTimestamp": time, "generation": {"type": "integer"},
            "resourceVersion": text, "finalizers": texts}},
        "spec": {"type": "object", "properties": {"finalizers": texts}},
        "status": {"type": "object", "properties": {
            "conditions": {"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": true}},
            "phase": text}}}})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn schemas() -> Map<String, Value> {
        serde_json::from_value(json!({
            "io.k8s.api.apps.v1.Deployment": {
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": "apps", "version": "v1", "kind": "Deployment"}],
                "properties": {
                    "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "default": {}},
                    "spec": {"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}}},
            "io.k8s.api.apps.v1.DeploymentSpec": {
                "type": "object", "properties": {"replicas": {"type": "integer", "format": "int32"}}},
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
                "type": "object", "properties": {"name": {"type": "string"}}}
        }))
        .unwrap()
    }

    #[test]
    fn references_are_followed_and_the_kind_found_by_its_extension() {
        let schemas = schemas();
        let gvk = Gvk {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
        };
        let root = schemas.values().find(|s| names_kind(s, &gvk)).unwrap();
        let ty = Ty::of_schema(&inline(root, &schemas, 0, &mut Vec::new()));
        let env = environment(&ty, None);
        assert_eq!(
            checked("object.spec.replicas > 1", env.clone()).unwrap(),
            Ty::Bool
        );
        assert_eq!(
            checked("object.metadata.name == 'x'", env.clone()).unwrap(),
            Ty::Bool
        );
        let wrong = checked("object.spec.replicas > '1'", env.clone()).unwrap_err();
        assert!(
            wrong.contains("found no matching overload for '_>_' applied to '(int, string)'"),
            "{wrong}"
        );
        assert!(
            checked(
                "request.userInfo.username == 'x' && namespaceObject.metadata.name != ''",
                env.clone()
            )
            .is_ok()
        );
        let params = checked("params.x > 1", env).unwrap_err();
        assert!(
            params.contains("undeclared reference to 'params'"),
            "{params}"
        );
        assert_eq!(gvk.to_string(), "apps/v1, Kind=Deployment");
    }

    #[test]
    fn a_schema_that_refers_to_itself_ends() {
        let schemas: Map<String, Value> = serde_json::from_value(json!({
            "props": {"type": "object", "properties": {"not": {"$ref": "#/components/schemas/props"}}}
        }))
        .unwrap();
        let inlined = inline(
            &schemas["props"],
            &schemas,
            0,
            &mut vec!["props".to_owned()],
        );
        // The reference back to itself is dynamic.
        assert_eq!(
            inlined,
            json!({"type": "object", "properties": {"not": dynamic()}})
        );
        let ty = Ty::of_schema(&inlined);
        assert!(
            matches!(&ty, Ty::Object { fields, .. } if fields.get("not") == Some(&Ty::Dyn)),
            "{ty:?}"
        );
    }
}
