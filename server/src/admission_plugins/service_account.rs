//! ServiceAccount (plugin/pkg/admission/serviceaccount): a pod runs as a
//! service account that exists (`default` unless it names one), and, unless
//! the pod or the account opts out, every container and init container gets
//! the account's token, CA bundle and namespace in a projected
//! `kube-api-access-<random>` volume mounted read-only at
//! [`TOKEN_MOUNT_PATH`]. The account's image pull secrets become the pod's
//! when it names none.

use serde_json::{Value, json};

use super::array_at;
use crate::admission::{Attributes, Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;
use crate::names::random_suffix;
use async_trait::async_trait;

/// Where the token volume is mounted in every container.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The prefix of the token volume's name (a random suffix follows).
const VOLUME_PREFIX: &str = "kube-api-access-";

/// A pod's token lives an hour and seven seconds: kubelets recognise the odd
/// number as the legacy default and refresh the token well before.
const TOKEN_EXPIRATION_SECONDS: i64 = 3607;

/// The annotation of a static pod's mirror, which must stay as the kubelet
/// wrote it.
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

const SERVICE_ACCOUNTS: (&str, &str, &str) = ("", "v1", "serviceaccounts");

/// The (deprecated) annotation that limits an account's pods to the secrets
/// the account lists.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";

/// Why a pod of `account` may not use a secret it names: the first secret
/// volume, env variable, envFrom or image pull secret the account does not
/// list.
fn unlisted_secret(account: &Value, spec: &Value) -> Option<String> {
    let listed = |key: &str, name: &str| {
        account[key]
            .as_array()
            .is_some_and(|secrets| secrets.iter().any(|s| s["name"] == name))
    };
    let sa = account["metadata"]["name"].as_str().unwrap_or_default();
    let refused = |what: String| {
        format!("{what} is not allowed because service account {sa} does not reference that secret")
    };
    let items = |value: &Value| value.as_array().cloned().unwrap_or_default();
    for volume in items(&spec["volumes"]) {
        if let Some(name) = volume["secret"]["secretName"].as_str()
            && !listed("secrets", name)
        {
            return Some(refused(format!("volume with secret.secretName=\"{name}\"")));
        }
    }
    for (list, what) in [
        ("initContainers", "init container"),
        ("containers", "container"),
    ] {
        for container in items(&spec[list]) {
            let container_name = container["name"].as_str().unwrap_or_default();
            for env in items(&container["env"]) {
                if let Some(name) = env["valueFrom"]["secretKeyRef"]["name"].as_str()
                    && !listed("secrets", name)
                {
                    let env_name = env["name"].as_str().unwrap_or_default();
                    return Some(refused(format!(
                        "{what} {container_name} with envVar {env_name} referencing secret.secretName=\"{name}\""
                    )));
                }
            }
            for env_from in items(&container["envFrom"]) {
                if let Some(name) = env_from["secretRef"]["name"].as_str()
                    && !listed("secrets", name)
                {
                    return Some(refused(format!(
                        "{what} {container_name} with envFrom referencing secret.secretName=\"{name}\""
                    )));
                }
            }
        }
    }
    for (i, secret) in items(&spec["imagePullSecrets"]).iter().enumerate() {
        let name = secret["name"].as_str().unwrap_or_default();
        if !listed("imagePullSecrets", name) {
            return Some(format!(
                "imagePullSecrets[{i}].name=\"{name}\" is not allowed because service account {sa} does not reference that imagePullSecret"
            ));
        }
    }
    None
}

/// Admits the create of a pod.
pub async fn admit_pod(
    objects: &dyn Loopback,
    attrs: &Attributes<'_>,
    pod: &mut Value,
) -> ApiResult<()> {
    if !objects.serves(SERVICE_ACCOUNTS) {
        return Ok(());
    }
    if !pod["metadata"]["annotations"][MIRROR_ANNOTATION].is_null() {
        return check_mirror_pod(attrs, pod);
    }
    let ns = attrs.namespace.as_deref().unwrap_or_default();
    let spec = &mut pod["spec"];
    let name = match spec["serviceAccountName"].as_str() {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => "default".to_owned(),
    };
    spec["serviceAccountName"] = json!(name);
    spec["serviceAccount"] = json!(name);
    let Some(account) = objects.read(SERVICE_ACCOUNTS, Some(ns), &name).await? else {
        return Err(attrs.forbidden(&format!(
            "error looking up service account {ns}/{name}: serviceaccount {name:?} not found"
        )));
    };
    if account["metadata"]["annotations"][ENFORCE_MOUNTABLE_SECRETS] == "true"
        && let Some(why) = unlisted_secret(&account, spec)
    {
        return Err(attrs.forbidden(&why));
    }
    if should_automount(&account, spec) {
        mount_token(spec);
    }
    let pull_secrets = &account["imagePullSecrets"];
    let pod_has_none = spec["imagePullSecrets"]
        .as_array()
        .is_none_or(|secrets| secrets.is_empty());
    if pod_has_none && pull_secrets.as_array().is_some_and(|s| !s.is_empty()) {
        spec["imagePullSecrets"] = pull_secrets.clone();
    }
    Ok(())
}

/// The pod's preference wins, then the account's; mounting is the default.
fn should_automount(account: &Value, spec: &Value) -> bool {
    spec["automountServiceAccountToken"]
        .as_bool()
        .or_else(|| account["automountServiceAccountToken"].as_bool())
        .unwrap_or(true)
}

/// Mounts the token volume in every container and init container that has
/// nothing at [`TOKEN_MOUNT_PATH`] yet, adding the volume if one needs it
/// (a pod that already has a `kube-api-access-` volume keeps it).
fn mount_token(spec: &mut Value) {
    let existing = spec["volumes"].as_array().and_then(|volumes| {
        volumes
            .iter()
            .filter_map(|v| v["name"].as_str())
            .find(|name| name.starts_with(VOLUME_PREFIX))
            .map(str::to_owned)
    });
    let volume_name = existing
        .clone()
        .unwrap_or_else(|| format!("{VOLUME_PREFIX}{}", random_suffix()));
    let mount = json!({ "name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH });
    let mut mounted = false;
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec[list].as_array_mut() else {
            continue;
        };
        for container in containers {
            let has_mount = container["volumeMounts"]
                .as_array()
                .is_some_and(|mounts| mounts.iter().any(|m| m["mountPath"] == TOKEN_MOUNT_PATH));
            if has_mount {
                continue;
            }
            if let Some(mounts) = array_at(container, "volumeMounts") {
                mounts.push(mount.clone());
                mounted = true;
            }
        }
    }
    if existing.is_none()
        && mounted
        && let Some(volumes) = array_at(spec, "volumes")
    {
        volumes.push(token_volume(&volume_name));
    }
}

/// The projected volume of a pod's token: the token itself, the cluster's CA
/// bundle (the `kube-root-ca.crt` ConfigMap every namespace gets) and the
/// pod's namespace.
fn token_volume(name: &str) -> Value {
    json!({
        "name": name,
        "projected": {
            "sources": [
                { "serviceAccountToken": { "expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token" } },
                { "configMap": { "name": "kube-root-ca.crt", "items": [{ "key": "ca.crt", "path": "ca.crt" }] } },
                { "downwardAPI": { "items": [{
                    "path": "namespace",
                    "fieldRef": { "apiVersion": "v1", "fieldPath": "metadata.namespace" }
                }] } }
            ],
            "defaultMode": 420
        }
    })
}

/// A mirror pod may not use a service account or secrets (its kubelet could
/// not honour them); it is otherwise left alone.
fn check_mirror_pod(attrs: &Attributes<'_>, pod: &Value) -> ApiResult<()> {
    let spec = &pod["spec"];
    if spec["serviceAccountName"]
        .as_str()
        .is_some_and(|name| !name.is_empty())
    {
        return Err(attrs.forbidden("a mirror pod may not reference service accounts"));
    }
    if references_secrets(spec) {
        return Err(attrs.forbidden("a mirror pod may not reference secrets"));
    }
    Ok(())
}

/// Whether a pod spec names a Secret: in a volume, a projection, an env
/// variable or envFrom, or an image pull secret.
fn references_secrets(spec: &Value) -> bool {
    let non_empty = |v: &Value| v.as_array().is_some_and(|a| !a.is_empty());
    if non_empty(&spec["imagePullSecrets"]) {
        return true;
    }
    let volumes = spec["volumes"].as_array().into_iter().flatten();
    for volume in volumes {
        if volume["secret"].is_object() {
            return true;
        }
        let sources = volume["projected"]["sources"]
            .as_array()
            .into_iter()
            .flatten();
        if sources.into_iter().any(|s| s["secret"].is_object()) {
            return true;
        }
    }
    let containers = ["initContainers", "containers", "ephemeralContainers"]
        .into_iter()
        .flat_map(|list| spec[list].as_array().into_iter().flatten());
    for container in containers {
        let env = container["env"].as_array().into_iter().flatten();
        if env
            .into_iter()
            .any(|e| e["valueFrom"]["secretKeyRef"].is_object())
        {
            return true;
        }
        let env_from = container["envFrom"].as_array().into_iter().flatten();
        if env_from.into_iter().any(|e| e["secretRef"].is_object()) {
            return true;
        }
    }
    false
}

/// ServiceAccount: a pod runs as an account that exists, with its token
/// mounted and its pull secrets.
pub struct ServiceAccount;

#[async_trait]
impl Plugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is("", "pods")
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        admit_pod(objects, &request.attrs, object).await
    }
}
