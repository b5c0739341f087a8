//! ServiceAccount (plugin/pkg/admission/serviceaccount): a pod runs as a
//! service account that exists (`default` unless it names one), and, unless
//! the pod or the account opts out, every container and init container gets
//! the account's token, CA bundle and namespace in a projected
//! `kube-api-access-<random>` volume mounted read-only at
//! [`TOKEN_MOUNT_PATH`]. The account's image pull secrets become the pod's
//! when it names none.

use kapi_api_types::core::v1::Pod;
use kapi_api_types::core::v1::ServiceAccount as Account;
use kapi_api_types::core::v1::pod::container::VolumeMount;
use kapi_api_types::core::v1::pod::env::ObjectFieldSelector;
use kapi_api_types::core::v1::pod::projected::{
    ConfigMapProjection, DownwardAPIProjection, DownwardAPIVolumeFile, ProjectedVolumeSource,
    ServiceAccountTokenProjection, VolumeProjection,
};
use kapi_api_types::core::v1::pod::spec::PodSpec;
use kapi_api_types::core::v1::pod::volume::{KeyToPath, Volume};

use crate::admission::{Attributes, Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::{self, Loopback};
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

/// The (deprecated) annotation that limits an account's pods to the secrets
/// the account lists.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";

/// A name Go leaves out when empty (`omitempty`): `None` when empty.
fn named(name: Option<&String>) -> Option<&str> {
    name.map(String::as_str).filter(|name| !name.is_empty())
}

/// Why a pod of `account` may not use a secret it names: the first secret
/// volume, env variable, envFrom or image pull secret the account does not
/// list.
fn unlisted_secret(account: &Account, spec: &PodSpec) -> Option<String> {
    let listed_secret = |name: &str| {
        account
            .secrets
            .iter()
            .flatten()
            .any(|s| s.name.as_deref() == Some(name))
    };
    let listed_pull_secret = |name: &str| {
        account
            .image_pull_secrets
            .iter()
            .flatten()
            .any(|s| s.name.as_deref() == Some(name))
    };
    let sa = account.metadata.name();
    let refused = |what: String| {
        format!("{what} is not allowed because service account {sa} does not reference that secret")
    };
    for volume in spec.volumes.iter().flatten() {
        let secret = volume.secret.as_ref();
        if let Some(name) = named(secret.and_then(|s| s.secret_name.as_ref()))
            && !listed_secret(name)
        {
            return Some(refused(format!("volume with secret.secretName=\"{name}\"")));
        }
    }
    for (containers, what) in [
        (
            spec.init_containers.as_deref().unwrap_or_default(),
            "init container",
        ),
        (spec.containers.as_slice(), "container"),
    ] {
        for container in containers {
            let container_name = &container.name;
            for env in container.env.iter().flatten() {
                let secret = env
                    .value_from
                    .as_ref()
                    .and_then(|v| v.secret_key_ref.as_ref());
                if let Some(name) = named(secret.and_then(|s| s.name.as_ref()))
                    && !listed_secret(name)
                {
                    let env_name = &env.name;
                    return Some(refused(format!(
                        "{what} {container_name} with envVar {env_name} referencing secret.secretName=\"{name}\""
                    )));
                }
            }
            for env_from in container.env_from.iter().flatten() {
                let secret = env_from.secret_ref.as_ref();
                if let Some(name) = named(secret.and_then(|s| s.name.as_ref()))
                    && !listed_secret(name)
                {
                    return Some(refused(format!(
                        "{what} {container_name} with envFrom referencing secret.secretName=\"{name}\""
                    )));
                }
            }
        }
    }
    for (i, secret) in spec.image_pull_secrets.iter().flatten().enumerate() {
        let name = secret.name.as_deref().unwrap_or_default();
        if !listed_pull_secret(name) {
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
    pod: &mut Pod,
) -> ApiResult<()> {
    if !loopback::serves::<Account>(objects) {
        return Ok(());
    }
    let annotations = pod.metadata.annotations.as_ref();
    if annotations.is_some_and(|a| a.contains_key(MIRROR_ANNOTATION)) {
        return check_mirror_pod(attrs, &pod.spec);
    }
    let ns = attrs.namespace.as_deref().unwrap_or_default();
    let spec = &mut pod.spec;
    let name = named(spec.service_account_name.as_ref())
        .unwrap_or("default")
        .to_owned();
    spec.service_account_name = Some(name.clone());
    spec.service_account = Some(name.clone());
    let Some(account) = loopback::get::<Account>(objects, Some(ns), &name).await? else {
        return Err(attrs.forbidden(&format!(
            "error looking up service account {ns}/{name}: serviceaccount {name:?} not found"
        )));
    };
    let enforced = account
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(ENFORCE_MOUNTABLE_SECRETS))
        .is_some_and(|value| value == "true");
    if enforced && let Some(why) = unlisted_secret(&account, spec) {
        return Err(attrs.forbidden(&why));
    }
    if should_automount(&account, spec) {
        mount_token(spec);
    }
    let pod_has_none = spec.image_pull_secrets.as_ref().is_none_or(Vec::is_empty);
    if let Some(pull_secrets) = account.image_pull_secrets.filter(|s| !s.is_empty())
        && pod_has_none
    {
        spec.image_pull_secrets = Some(pull_secrets);
    }
    Ok(())
}

/// The pod's preference wins, then the account's; mounting is the default.
fn should_automount(account: &Account, spec: &PodSpec) -> bool {
    spec.automount_service_account_token
        .or(account.automount_service_account_token)
        .unwrap_or(true)
}

/// Mounts the token volume in every container and init container that has
/// nothing at [`TOKEN_MOUNT_PATH`] yet, adding the volume if one needs it
/// (a pod that already has a `kube-api-access-` volume keeps it).
fn mount_token(spec: &mut PodSpec) {
    let existing = spec
        .volumes
        .iter()
        .flatten()
        .map(|v| v.name.as_str())
        .find(|name| name.starts_with(VOLUME_PREFIX))
        .map(str::to_owned);
    let volume_name = existing
        .clone()
        .unwrap_or_else(|| format!("{VOLUME_PREFIX}{}", random_suffix()));
    let mount = VolumeMount {
        name: volume_name.clone(),
        read_only: Some(true),
        mount_path: TOKEN_MOUNT_PATH.to_owned(),
        ..VolumeMount::default()
    };
    let mut mounted = false;
    let containers = spec
        .init_containers
        .iter_mut()
        .flatten()
        .chain(spec.containers.iter_mut());
    for container in containers {
        let mounts = container.volume_mounts.get_or_insert_with(Vec::new);
        if mounts.iter().any(|m| m.mount_path == TOKEN_MOUNT_PATH) {
            continue;
        }
        mounts.push(mount.clone());
        mounted = true;
    }
    if existing.is_none() && mounted {
        let volumes = spec.volumes.get_or_insert_with(Vec::new);
        volumes.push(token_volume(&volume_name));
    }
}

/// The projected volume of a pod's token: the token itself, the cluster's CA
/// bundle (the `kube-root-ca.crt` ConfigMap every namespace gets) and the
/// pod's namespace.
fn token_volume(name: &str) -> Volume {
    let token = ServiceAccountTokenProjection {
        expiration_seconds: Some(TOKEN_EXPIRATION_SECONDS),
        path: "token".to_owned(),
        ..ServiceAccountTokenProjection::default()
    };
    let ca = ConfigMapProjection {
        name: Some("kube-root-ca.crt".to_owned()),
        items: Some(vec![KeyToPath {
            key: "ca.crt".to_owned(),
            path: "ca.crt".to_owned(),
            ..KeyToPath::default()
        }]),
        ..ConfigMapProjection::default()
    };
    let namespace = DownwardAPIProjection {
        items: Some(vec![DownwardAPIVolumeFile {
            path: "namespace".to_owned(),
            field_ref: Some(ObjectFieldSelector {
                api_version: Some("v1".to_owned()),
                field_path: "metadata.namespace".to_owned(),
            }),
            ..DownwardAPIVolumeFile::default()
        }]),
    };
    let sources = vec![
        VolumeProjection {
            service_account_token: Some(Box::new(token)),
            ..VolumeProjection::default()
        },
        VolumeProjection {
            config_map: Some(Box::new(ca)),
            ..VolumeProjection::default()
        },
        VolumeProjection {
            downward_api: Some(Box::new(namespace)),
            ..VolumeProjection::default()
        },
    ];
    Volume {
        name: name.to_owned(),
        projected: Some(Box::new(ProjectedVolumeSource {
            sources,
            default_mode: Some(420),
        })),
        ..Volume::default()
    }
}

/// A mirror pod may not use a service account or secrets (its kubelet could
/// not honour them); it is otherwise left alone.
fn check_mirror_pod(attrs: &Attributes<'_>, spec: &PodSpec) -> ApiResult<()> {
    if named(spec.service_account_name.as_ref()).is_some() {
        return Err(attrs.forbidden("a mirror pod may not reference service accounts"));
    }
    if references_secrets(spec) {
        return Err(attrs.forbidden("a mirror pod may not reference secrets"));
    }
    Ok(())
}

/// Whether a pod spec names a Secret: in a volume, a projection, an env
/// variable or envFrom, or an image pull secret.
fn references_secrets(spec: &PodSpec) -> bool {
    if spec
        .image_pull_secrets
        .as_ref()
        .is_some_and(|s| !s.is_empty())
    {
        return true;
    }
    for volume in spec.volumes.iter().flatten() {
        if volume.secret.is_some() {
            return true;
        }
        let mut sources = volume.projected.iter().flat_map(|p| &p.sources);
        if sources.any(|s| s.secret.is_some()) {
            return true;
        }
    }
    let containers = spec
        .init_containers
        .iter()
        .flatten()
        .chain(&spec.containers);
    let ephemeral = spec.ephemeral_containers.iter().flatten();
    let envs = containers
        .map(|c| (&c.env, &c.env_from))
        .chain(ephemeral.map(|c| (&c.env, &c.env_from)));
    for (env, env_from) in envs {
        let mut env = env.iter().flatten();
        if env.any(|e| {
            e.value_from
                .as_ref()
                .is_some_and(|v| v.secret_key_ref.is_some())
        }) {
            return true;
        }
        if env_from.iter().flatten().any(|e| e.secret_ref.is_some()) {
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
        request.operation == Operation::Create && request.is_kind::<Pod>()
    }

    async fn admit(
        &self,
        request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        objects: &dyn Loopback,
    ) -> ApiResult<()> {
        match object.downcast_mut::<Pod>()? {
            Some(pod) => admit_pod(objects, &request.attrs, pod).await,
            None => Ok(()),
        }
    }
}
