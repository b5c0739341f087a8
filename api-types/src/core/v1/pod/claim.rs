//! Generic ephemeral volumes: a PersistentVolumeClaim made for one pod.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use kapi_runtime::Quantity;
use kapi_runtime::meta::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};

use crate::core::v1::reference::{TypedLocalObjectReference, TypedObjectReference};
use crate::go_json::{null_as_default, omitempty};

/// A volume backed by a claim that is created with the pod and deleted with it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralVolumeSource {
    /// Template of the claim, named `<pod>-<volume>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 1)]
    pub volume_claim_template: Option<PersistentVolumeClaimTemplate>,
}

/// Template of a PersistentVolumeClaim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimTemplate {
    /// Labels and annotations copied to the claim.
    #[serde(default)]
    #[api(proto = 1)]
    pub metadata: ObjectMeta,
    /// Spec copied to the claim unchanged.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(required)]
    #[api(proto = 2)]
    pub spec: PersistentVolumeClaimSpec,
}

/// What storage a claim asks for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimSpec {
    /// Access modes wanted: `ReadWriteOnce`, `ReadOnlyMany`, `ReadWriteMany`,
    /// `ReadWriteOncePod`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 1)]
    pub access_modes: Option<Vec<String>>,
    /// Labels of existing volumes that may be bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 4)]
    pub selector: Option<LabelSelector>,
    /// Minimum (and maximum) storage wanted.
    #[serde(default, deserialize_with = "null_as_default")]
    #[api(proto = 2)]
    pub resources: VolumeResourceRequirements,
    /// Bind to this PersistentVolume.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 3)]
    pub volume_name: Option<String>,
    /// StorageClass to provision from; the default class when unset, none when
    /// empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 5)]
    pub storage_class_name: Option<String>,
    /// `Filesystem` or `Block`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(default = "Filesystem", one_of("Block", "Filesystem"))]
    #[api(proto = 6)]
    pub volume_mode: Option<String>,
    /// Object to fill the volume from (a snapshot or another claim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 7)]
    pub data_source: Option<TypedLocalObjectReference>,
    /// Like `dataSource`, for any populator and other namespaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 8)]
    pub data_source_ref: Option<TypedObjectReference>,
    /// VolumeAttributesClass to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[api(proto = 9)]
    pub volume_attributes_class_name: Option<String>,
}

/// Storage amounts of a claim.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
#[api(defaults = super::defaults::round_volume_resources)]
pub struct VolumeResourceRequirements {
    /// Most storage allowed.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub limits: Option<BTreeMap<String, Quantity>>,
    /// Storage wanted, e.g. `storage: 10Gi`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub requests: Option<BTreeMap<String, Quantity>>,
}
