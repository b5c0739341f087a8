//! Who a request acts for: the user every layer after authentication decides
//! on (k8s.io/apiserver's `pkg/authentication/user`). A leaf: it imports
//! nothing of the server.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::Request;

/// The group of every authenticated user.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group of anonymous requests.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The extra key naming the credential a user authenticated with.
pub const CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";
/// The group whose members may do anything (and are exempt from priority and
/// fairness).
pub const MASTERS: &str = "system:masters";
/// The group of the kubelets.
pub const NODES: &str = "system:nodes";

/// An authenticated (or anonymous) user, as k8s.io/apiserver's user.Info.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name (`system:serviceaccount:<namespace>:<name>` for service
    /// accounts).
    pub name: String,
    /// A unique id, where the authenticator knows one.
    pub uid: String,
    /// The groups the user is in.
    pub groups: Vec<String>,
    /// Further attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user of `groups`.
    pub fn new(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.to_owned(),
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
            ..UserInfo::default()
        }
    }

    /// `system:anonymous`.
    pub fn anonymous() -> UserInfo {
        UserInfo::new("system:anonymous", &[UNAUTHENTICATED])
    }

    /// kube-apiserver's own loopback identity, which its in-process
    /// controllers use.
    pub fn apiserver() -> UserInfo {
        UserInfo::new("system:apiserver", &[MASTERS, AUTHENTICATED])
    }

    /// The identity of the controllers kube-controller-manager runs upstream
    /// (without `--use-service-account-credentials`).
    pub fn controller_manager() -> UserInfo {
        UserInfo::new("system:kube-controller-manager", &[AUTHENTICATED])
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// The node a kubelet's user is (upstream's NodeIdentity): for a
    /// `system:node:<name>` user in the `system:nodes` group, the name
    /// (empty when the user name ends at the prefix); `None` for anyone
    /// else.
    pub fn node_name(&self) -> Option<&str> {
        let name = self.name.strip_prefix("system:node:")?;
        self.in_group(NODES).then_some(name)
    }

    /// The namespace and name of a service account user
    /// (`system:serviceaccount:<namespace>:<name>`).
    pub fn service_account(&self) -> Option<(&str, &str)> {
        let rest = self.name.strip_prefix("system:serviceaccount:")?;
        let (namespace, name) = rest.split_once(':')?;
        (!namespace.is_empty() && !name.is_empty() && !name.contains(':'))
            .then_some((namespace, name))
    }
}

/// Adds `system:authenticated` to an authenticated user's groups, as
/// upstream's authenticated group adder (unless it is already there, or the
/// user is anonymous).
pub fn add_authenticated(user: &mut UserInfo) {
    if user.name != "system:anonymous"
        && !user.in_group(AUTHENTICATED)
        && !user.in_group(UNAUTHENTICATED)
    {
        user.groups.push(AUTHENTICATED.to_owned());
    }
}

/// The one shared `system:anonymous` user.
pub fn anonymous() -> Arc<UserInfo> {
    static ANONYMOUS: std::sync::OnceLock<Arc<UserInfo>> = std::sync::OnceLock::new();
    ANONYMOUS
        .get_or_init(|| Arc::new(UserInfo::anonymous()))
        .clone()
}

/// The user of a request that went through the authentication filter (anonymous if it
/// did not).
pub fn user_of(request: &Request) -> Arc<UserInfo> {
    request
        .extensions()
        .get::<Arc<UserInfo>>()
        .cloned()
        .unwrap_or_else(anonymous)
}
