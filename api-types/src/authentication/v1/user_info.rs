//! The identity an authenticator derives from a credential.

use std::collections::BTreeMap;

use kapi_codegen::ApiType;
use serde::{Deserialize, Serialize};

use crate::certificates::v1::certificatesigningrequest::ExtraValue;
use crate::go_json::omitempty;

/// Who a credential belongs to: user name, UID, groups and any extra
/// attributes the authenticator attached.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct UserInfo {
    /// The user's name, unique among users, e.g.
    /// `system:serviceaccount:<namespace>:<name>`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 1)]
    pub username: Option<String>,
    /// A value unique to this user over time, telling apart a deleted user
    /// from a new one of the same name.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 2)]
    pub uid: Option<String>,
    /// Groups the user belongs to, e.g. `system:authenticated`.
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(list_type = "atomic")]
    #[api(proto = 3)]
    pub groups: Option<Vec<String>>,
    /// Further attributes from the authenticator by key, each a list of
    /// strings (e.g. `authentication.kubernetes.io/pod-name`).
    #[serde(default, skip_serializing_if = "omitempty")]
    #[api(proto = 4)]
    pub extra: Option<BTreeMap<String, ExtraValue>>,
}
