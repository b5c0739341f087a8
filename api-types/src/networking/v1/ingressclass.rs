//! IngressClasses: the ingress controllers of a cluster, by name.

use kapi_codegen::{ApiType, Resource};
use kapi_runtime::meta::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::go_json::{null_as_default, omitempty};

/// A class of ingresses and the controller implementing them; an ingress
/// names its class in `spec.ingressClassName`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType, Resource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "networking.k8s.io",
    version = "v1",
    plural = "ingressclasses",
    storage_prefix = "ingressclasses",
    cluster_scoped,
    printer_column(name = "Controller", type = "string", json_path = ".spec.controller",
        description = "The controller implementing the class."),
    printer_column(name = "Parameters", type = "string", json_path = ".spec.parameters",
        description = "Object holding the controller's settings for the class."),
    table_cells = ingressclass_cells,
    validate_update = super::validation::ingressclass::validate_ingress_class_update
)]
pub struct IngressClass {
    /// Name, labels and other metadata; the annotation
    /// `ingressclass.kubernetes.io/is-default-class: "true"` makes it the default.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// The controller and its settings.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub spec: IngressClassSpec,
}

/// The controller of an ingress class and its settings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(validate = super::validation::ingressclass::validate_ingress_class_spec)]
pub struct IngressClassSpec {
    /// Name of the controller, a domain-prefixed path such as
    /// `example.com/ingress-controller` (at most 250 characters). Immutable.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub controller: Option<String>,
    /// An object with further settings for the controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 2)]
    pub parameters: Option<IngressClassParametersReference>,
}

/// Points at the object holding an ingress class's controller settings,
/// cluster-wide or in a namespace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct IngressClassParametersReference {
    /// API group of the object; unset means the core group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1, proto_name = "aPIGroup")]
    pub api_group: Option<String>,
    /// Kind of the object.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 2)]
    pub kind: String,
    /// Name of the object.
    #[serde(default)]
    #[api(schema_required)]
    #[api(proto = 3)]
    pub name: String,
    /// `Cluster` (the default) or `Namespace`.
    #[serde(default)]
    #[api(proto = 4)]
    #[api(default = "Cluster")]
    pub scope: Option<String>,
    /// Namespace of the object; required with scope `Namespace`, forbidden
    /// with `Cluster`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub namespace: Option<String>,
}

/// The `kubectl get ingressclasses` row (kube-apiserver's `printIngressClass`):
/// parameters as `Kind[.group]/name`.
fn ingressclass_cells(class: &IngressClass) -> Vec<Value> {
    let parameters = match &class.spec.parameters {
        None => "<none>".to_owned(),
        Some(p) => match &p.api_group {
            Some(group) => format!("{}.{group}/{}", p.kind, p.name),
            None => format!("{}/{}", p.kind, p.name),
        },
    };
    vec![
        json!(class.spec.controller.as_deref().unwrap_or_default()),
        json!(parameters),
    ]
}
