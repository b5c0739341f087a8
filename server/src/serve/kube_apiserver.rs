//! kube-apiserver 1.32's command line: `kapi kube-apiserver ...`, or the
//! binary invoked as `kube-apiserver` (a symlink or a copy), so that kubeadm's
//! static pod manifest and controller-runtime's envtest start kapi where they
//! start kube-apiserver.
//!
//! Flags are read as kube-apiserver's (pflag) reads them: `--name=value` or
//! `--name value`, booleans as `--name`, `--name=true` or `--name=false`,
//! lists comma-separated or repeated. Defaults are kube-apiserver's, not
//! `kapi serve`'s: AlwaysAllow authorization, `10.0.0.0/24` for Service
//! addresses, the serving pair in `--cert-dir`, no controllers of
//! kube-controller-manager (a kube-apiserver runs none; kubeadm runs a real
//! kube-controller-manager, envtest none). A flag kapi does not implement is
//! refused by name; a few that only tune what kapi has no counterpart for
//! are accepted and ignored, and `--help` lists them as such. Nothing that
//! changes security is ignored.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use super::ServeOptions;
use super::args::{AuditArgs, FrontProxyArgs, ServeArgs};
use crate::authorizers::Mode;
use crate::kinds::IpRange;
use crate::stored::StorageMediaType;

/// kube-apiserver's flags kapi implements.
#[derive(Args, Clone, Debug)]
pub struct KubeApiserverArgs {
    /// The address to listen on for HTTPS (0.0.0.0: every IPv4 address).
    #[arg(long, default_value = "0.0.0.0")]
    pub bind_address: IpAddr,
    /// The HTTPS port.
    #[arg(long, default_value_t = 6443, value_parser = clap::value_parser!(u16).range(1..))]
    pub secure_port: u16,
    /// The directory of the serving pair `apiserver.crt` and `apiserver.key`
    /// when --tls-cert-file is not given (written there when absent), and of
    /// what kapi keeps beside them (its CA, the admin kubeconfig).
    #[arg(long, default_value = "/var/run/kubernetes")]
    pub cert_dir: PathBuf,
    /// The serving certificate (PEM, leaf first).
    #[arg(long)]
    pub tls_cert_file: Option<PathBuf>,
    /// The key of --tls-cert-file (PEM: PKCS#1, SEC1 or PKCS#8).
    #[arg(long)]
    pub tls_private_key_file: Option<PathBuf>,
    /// CAs (PEM) whose client certificates authenticate users (CN the user,
    /// O the groups).
    #[arg(long)]
    pub client_ca_file: Option<PathBuf>,
    /// The etcd members (comma-separated URLs). Required.
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// Where the keys live in etcd.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// CA certificate (PEM) of the etcd members.
    #[arg(long)]
    pub etcd_cafile: Option<PathBuf>,
    /// Client certificate (PEM) for etcd.
    #[arg(long)]
    pub etcd_certfile: Option<PathBuf>,
    /// Key (PEM) of --etcd-certfile.
    #[arg(long)]
    pub etcd_keyfile: Option<PathBuf>,
    /// The format objects are written in.
    #[arg(long, default_value_t = StorageMediaType::default())]
    pub storage_media_type: StorageMediaType,
    /// The network Service ClusterIPs come from (one CIDR: kapi is
    /// single-stack).
    #[arg(long, default_value = "10.0.0.0/24")]
    pub service_cluster_ip_range: String,
    /// The ports of NodePort Services (`first-last`).
    #[arg(long, default_value = "30000-32767")]
    pub service_node_port_range: String,
    /// The authorizers, in order: Node, RBAC, AlwaysAllow.
    #[arg(long, value_delimiter = ',', default_value = "AlwaysAllow")]
    pub authorization_mode: Vec<String>,
    /// Allow privileged containers. kapi always allows them, so only true
    /// is accepted.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set)]
    pub allow_privileged: bool,
    /// Serve requests without credentials as `system:anonymous`.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = true, action = ArgAction::Set)]
    pub anonymous_auth: bool,
    /// Authenticate bootstrap tokens.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set)]
    pub enable_bootstrap_token_auth: bool,
    /// Bearer tokens and their users (CSV `token,user,uid[,"groups"]`).
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
    /// The service account token issuers: the first names issued tokens,
    /// tokens of every one are accepted. Required.
    #[arg(long, value_delimiter = ',')]
    pub service_account_issuer: Vec<String>,
    /// Keys or certificates (PEM) service account tokens are verified with.
    #[arg(long, value_delimiter = ',')]
    pub service_account_key_file: Vec<PathBuf>,
    /// The private key service account tokens are signed with. Required.
    #[arg(long)]
    pub service_account_signing_key_file: Option<PathBuf>,
    /// The audiences a token must name (default: the issuers).
    #[arg(long, value_delimiter = ',')]
    pub api_audiences: Vec<String>,
    /// Admission plugins to run besides those on by default.
    #[arg(long, value_delimiter = ',')]
    pub enable_admission_plugins: Vec<String>,
    /// Admission plugins not to run, though on by default.
    #[arg(long, value_delimiter = ',')]
    pub disable_admission_plugins: Vec<String>,
    /// The front proxy (kube-apiserver's `--requestheader-*` and
    /// `--proxy-client-*`).
    #[command(flatten)]
    pub front_proxy: FrontProxyArgs,
    /// Audit logging (kube-apiserver's `--audit-*`).
    #[command(flatten)]
    pub audit: AuditArgs,
    /// Send APIService requests to an endpoint rather than the cluster IP.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = false, action = ArgAction::Set)]
    pub enable_aggregator_routing: bool,
    /// API priority and fairness.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          default_value_t = true, action = ArgAction::Set)]
    pub enable_priority_and_fairness: bool,
    /// Reads in flight at once.
    #[arg(long, default_value_t = 400)]
    pub max_requests_inflight: u32,
    /// Writes in flight at once.
    #[arg(long, default_value_t = 200)]
    pub max_mutating_requests_inflight: u32,
    /// Feature gates (`Name=true,Other=false`): only a gate set to its 1.32
    /// default is accepted, as kapi implements 1.32's defaults.
    #[arg(long, value_delimiter = ',')]
    pub feature_gates: Vec<String>,
    /// How long an Event is kept after it was last written.
    #[arg(long, default_value = "1h0m0s", value_parser = crate::go_duration::positive_flag)]
    pub event_ttl: std::time::Duration,
    /// The address the `kubernetes` Service's endpoints name (default: the
    /// bind address, unless loopback or unspecified).
    #[arg(long)]
    pub advertise_address: Option<IpAddr>,
    /// Who keeps the `kubernetes` Service's endpoints: `lease` (each server
    /// holds a lease) or `none`.
    #[arg(long, default_value = "lease")]
    pub endpoint_reconciler_type: String,
    /// Log verbosity, as klog's: 0-3 info, 4-5 debug, 6 and more trace.
    #[arg(short = 'v', long = "v", default_value_t = 0)]
    pub verbosity: u8,
}

/// Flags accepted and ignored: each only tunes something kapi has no
/// counterpart for. (name, why).
pub const IGNORED: &[(&str, &str)] = &[
    (
        "kubelet-client-certificate",
        "kapi does not reach kubelets (logs, exec, port-forward)",
    ),
    (
        "kubelet-client-key",
        "kapi does not reach kubelets (logs, exec, port-forward)",
    ),
    (
        "kubelet-certificate-authority",
        "kapi does not reach kubelets (logs, exec, port-forward)",
    ),
    (
        "kubelet-preferred-address-types",
        "kapi does not reach kubelets (logs, exec, port-forward)",
    ),
    (
        "kubelet-timeout",
        "kapi does not reach kubelets (logs, exec, port-forward)",
    ),
    ("profiling", "kapi serves no pprof endpoints"),
    ("contention-profiling", "kapi serves no pprof endpoints"),
    ("logging-format", "kapi logs text"),
    ("log-flush-frequency", "kapi writes each log line at once"),
    ("vmodule", "kapi has one verbosity (--v)"),
    ("watch-cache", "kapi's watch cache is always on"),
    (
        "default-watch-cache-size",
        "kapi's watch cache keeps its own window",
    ),
    (
        "watch-cache-sizes",
        "kapi's watch cache keeps its own window",
    ),
    (
        "delete-collection-workers",
        "kapi deletes collections in one task",
    ),
    (
        "enable-garbage-collector",
        "kube-controller-manager's garbage collector is not kapi's",
    ),
    (
        "goaway-chance",
        "kapi does not send HTTP/2 GOAWAY at random",
    ),
    ("shutdown-delay-duration", "kapi stops at once on SIGTERM"),
    ("shutdown-send-retry-after", "kapi stops at once on SIGTERM"),
    ("livez-grace-period", "kapi's /livez has no grace period"),
    (
        "etcd-compaction-interval",
        "kapi replicas compact every 5 minutes",
    ),
    (
        "etcd-count-metric-poll-period",
        "kapi counts objects in its watch cache",
    ),
    (
        "etcd-healthcheck-timeout",
        "kapi checks etcd within its request timeout",
    ),
    (
        "etcd-readycheck-timeout",
        "kapi checks etcd within its request timeout",
    ),
    (
        "http2-max-streams-per-connection",
        "kapi's HTTP/2 limits are its own",
    ),
];

/// The feature gates kapi accepts: 1.32's default of each gate it
/// implements as 1.32 does (a gate set to anything else is refused).
const GATES: &[(&str, bool)] = &[
    ("MultiCIDRServiceAllocator", false),
    ("DisableAllocatorDualWrite", false),
    ("SidecarContainers", true),
    ("InPlacePodVerticalScaling", false),
];

/// kube-apiserver 1.32's admission plugins, in its order.
const KNOWN_PLUGINS: &[&str] = &[
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

/// Those kube-apiserver runs unless disabled.
const DEFAULT_ON: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "TaintNodesByCondition",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
];

/// The plugins kapi runs as plugins of its admission chain (the others
/// on by default upstream are checks kapi makes elsewhere and keeps).
const KAPI_PLUGINS: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "PodSecurity",
    "Priority",
    "DefaultTolerationSeconds",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "DefaultIngressClass",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
];

/// kube-apiserver's command: its implemented flags, then those accepted and
/// ignored.
pub fn command(name: &'static str) -> Command {
    let mut command = KubeApiserverArgs::augment_args(
        Command::new(name)
            .about("kube-apiserver 1.32's command line, served by kapi")
            // A flag given again replaces its value, as pflag's do.
            .args_override_self(true)
            .after_help(
                "Flags marked \"accepted and ignored\" only tune something kapi has no \
                 counterpart for; any other flag kube-apiserver has and kapi does not \
                 is refused by name.",
            ),
    );
    for (flag, why) in IGNORED {
        command = command.arg(
            Arg::new(*flag)
                .long(*flag)
                .num_args(0..=1)
                .require_equals(false)
                .action(ArgAction::Append)
                .help(format!("Accepted and ignored: {why}.")),
        );
    }
    command
}

/// The arguments of a parsed [`command`].
pub fn parse(matches: &ArgMatches) -> Result<KubeApiserverArgs, clap::Error> {
    KubeApiserverArgs::from_arg_matches(matches)
}

/// The flags of [`IGNORED`] that were given (each logged once at start).
pub fn ignored_given(matches: &ArgMatches) -> Vec<&'static str> {
    IGNORED
        .iter()
        .map(|(flag, _)| *flag)
        .filter(|flag| matches.contains_id(flag) && matches.value_source(flag).is_some())
        .collect()
}

impl KubeApiserverArgs {
    /// The log filter of `--v`.
    pub fn log_level(&self) -> &'static str {
        match self.verbosity {
            0..=3 => "info",
            4..=5 => "debug",
            _ => "trace",
        }
    }

    /// The serve options these flags describe, checked as kube-apiserver
    /// checks them (its messages where it has one).
    pub fn options(&self) -> Result<ServeOptions, String> {
        let mut errors = Vec::new();
        if self.etcd_servers.is_empty() {
            errors.push("--etcd-servers must be specified".to_owned());
        }
        if self.service_account_issuer.is_empty() {
            errors.push("service-account-issuer is a required flag".to_owned());
        }
        if self.service_account_signing_key_file.is_none() {
            errors.push(
                "--service-account-signing-key-file and --service-account-issuer are required flags"
                    .to_owned(),
            );
        }
        if self.etcd_certfile.is_some() != self.etcd_keyfile.is_some() {
            errors.push("--etcd-certfile and --etcd-keyfile must be given together".to_owned());
        }
        if self.etcd_certfile.is_some() && self.etcd_cafile.is_none() {
            errors.push(
                "--etcd-certfile needs --etcd-cafile: kapi does not trust the system's CAs for etcd"
                    .to_owned(),
            );
        }
        match self.endpoint_reconciler_type.as_str() {
            "lease" | "none" => {}
            "master-count" => errors.push(
                "--endpoint-reconciler-type=master-count is not implemented by kapi (lease and \
                 none are)"
                    .to_owned(),
            ),
            // Upstream's createEndpointReconciler's words for any other.
            other => errors.push(format!("Reconciler not implemented: {other}")),
        }
        if !self.allow_privileged {
            errors.push(
                "--allow-privileged=false is not implemented: kapi always allows privileged \
                 containers, so pass --allow-privileged=true (as kubeadm and envtest do)"
                    .to_owned(),
            );
        }
        let ranges: Vec<&str> = self.service_cluster_ip_range.split(',').collect();
        if ranges.len() > 1 {
            errors.push(format!(
                "--service-cluster-ip-range={}: kapi serves one IP family (dual-stack is not \
                 implemented)",
                self.service_cluster_ip_range
            ));
        }
        let cluster_ips: Option<IpRange> = match ranges[0].parse() {
            Ok(range) => Some(range),
            Err(e) => {
                errors.push(format!("--service-cluster-ip-range: {e}"));
                None
            }
        };
        let node_ports = match super::args::parse_port_range(&self.service_node_port_range) {
            Ok(range) => Some(range),
            Err(e) => {
                errors.push(format!("--service-node-port-range: {e}"));
                None
            }
        };
        let modes = self.authorization_modes(&mut errors);
        let disabled = self.disabled_plugins(&mut errors);
        self.check_gates(&mut errors);
        let (Some(cluster_ips), Some(node_ports), true) =
            (cluster_ips, node_ports, errors.is_empty())
        else {
            return Err(errors.join("\n"));
        };
        let mut anonymous_auth = self.anonymous_auth;
        if anonymous_auth && modes.contains(&Mode::AlwaysAllow) {
            tracing::warn!(
                "AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting \
                 AnonymousAuth to false. You should use a different authorizer"
            );
            anonymous_auth = false;
        }
        let (tls_cert_file, tls_private_key_file) = self.serving_pair();
        let serve = ServeArgs {
            data_dir: self.cert_dir.clone(),
            listen: SocketAddr::new(self.bind_address, self.secure_port),
            etcd_servers: self.etcd_servers.clone(),
            etcd_prefix: self.etcd_prefix.clone(),
            etcd_cafile: self.etcd_cafile.clone(),
            etcd_certfile: self.etcd_certfile.clone(),
            etcd_keyfile: self.etcd_keyfile.clone(),
            storage_media_type: self.storage_media_type,
            service_cluster_ip_range: cluster_ips,
            service_node_port_range: node_ports,
            // A kube-apiserver runs no controller of kube-controller-manager.
            controllers: vec!["-*".to_owned()],
            root_ca_file: None,
            token_auth_file: self.token_auth_file.clone(),
            service_account_issuer: self.service_account_issuer.clone(),
            service_account_signing_key_file: self.service_account_signing_key_file.clone(),
            service_account_key_file: self.service_account_key_file.clone(),
            api_audiences: self.api_audiences.clone(),
            authorization_mode: modes,
            enable_bootstrap_token_auth: self.enable_bootstrap_token_auth,
            audit: self.audit.clone(),
            anonymous_auth,
            tls_cert_file,
            tls_private_key_file,
            client_ca_file: self.client_ca_file.clone(),
            tls_san: Vec::new(),
            front_proxy: self.front_proxy.clone(),
            authentication_kubeconfig: None,
            authorization_kubeconfig: None,
            enable_aggregator_routing: self.enable_aggregator_routing,
            enable_priority_and_fairness: self.enable_priority_and_fairness,
            max_requests_inflight: self.max_requests_inflight,
            max_mutating_requests_inflight: self.max_mutating_requests_inflight,
            event_ttl: self.event_ttl,
            advertise_address: self.advertise_address,
        };
        let mut options = serve.options();
        options.disabled_admission_plugins = disabled;
        options.endpoint_reconciler = self.endpoint_reconciler_type == "lease";
        Ok(options)
    }

    /// The serving pair: the flags', else `--cert-dir`'s `apiserver.crt`
    /// and `apiserver.key` when both are there (else kapi makes them there),
    /// as kube-apiserver's MaybeDefaultWithSelfSignedCerts.
    fn serving_pair(&self) -> (Option<PathBuf>, Option<PathBuf>) {
        if self.tls_cert_file.is_some() || self.tls_private_key_file.is_some() {
            return (
                self.tls_cert_file.clone(),
                self.tls_private_key_file.clone(),
            );
        }
        let cert = self.cert_dir.join(crate::pki::SERVING_CERT_FILE);
        let key = self.cert_dir.join(crate::pki::SERVING_KEY_FILE);
        if is_file(&cert) && is_file(&key) {
            (Some(cert), Some(key))
        } else {
            (None, None)
        }
    }

    fn authorization_modes(&self, errors: &mut Vec<String>) -> Vec<Mode> {
        let mut modes = Vec::new();
        for name in &self.authorization_mode {
            match name.as_str() {
                "Webhook" | "ABAC" | "AlwaysDeny" => errors.push(format!(
                    "--authorization-mode={name} is not implemented by kapi (Node, RBAC and \
                     AlwaysAllow are)"
                )),
                other => match other.parse() {
                    Ok(mode) => modes.push(mode),
                    Err(_) => {
                        errors.push(format!("authorization-mode {other:?} is not a valid mode"))
                    }
                },
            }
        }
        modes
    }

    /// The plugins of kapi's chain not to run, by kube-apiserver's rule:
    /// those on by default unless disabled, and those enabled.
    fn disabled_plugins(&self, errors: &mut Vec<String>) -> Vec<&'static str> {
        for (flag, names) in [
            ("enable-admission-plugins", &self.enable_admission_plugins),
            ("disable-admission-plugins", &self.disable_admission_plugins),
        ] {
            for name in names
                .iter()
                .filter(|n| !KNOWN_PLUGINS.contains(&n.as_str()))
            {
                errors.push(format!("{flag} plugin {name:?} is unknown"));
            }
        }
        // Go's `%v` of the sorted set: `[A B]`.
        let mut overlapped: Vec<&str> = self
            .enable_admission_plugins
            .iter()
            .filter(|n| self.disable_admission_plugins.contains(n))
            .map(String::as_str)
            .collect();
        overlapped.sort_unstable();
        overlapped.dedup();
        if !overlapped.is_empty() {
            errors.push(format!(
                "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
                overlapped.join(" ")
            ));
        }
        for name in &self.enable_admission_plugins {
            let known = KNOWN_PLUGINS.contains(&name.as_str());
            if known
                && !KAPI_PLUGINS.contains(&name.as_str())
                && !DEFAULT_ON.contains(&name.as_str())
            {
                errors.push(format!(
                    "enable-admission-plugins: kapi does not implement the admission plugin {name}"
                ));
            }
        }
        for name in &self.disable_admission_plugins {
            let kept =
                DEFAULT_ON.contains(&name.as_str()) && !KAPI_PLUGINS.contains(&name.as_str());
            if kept {
                tracing::warn!(
                    plugin = %name,
                    "kapi makes this plugin's checks outside its admission chain and keeps them"
                );
            }
        }
        let enabled = |name: &str| {
            let asked = self.enable_admission_plugins.iter().any(|n| n == name);
            let refused = self.disable_admission_plugins.iter().any(|n| n == name);
            asked || (DEFAULT_ON.contains(&name) && !refused)
        };
        KAPI_PLUGINS
            .iter()
            .copied()
            .filter(|name| !enabled(name))
            .collect()
    }

    fn check_gates(&self, errors: &mut Vec<String>) {
        for gate in &self.feature_gates {
            let Some((name, value)) = gate.split_once('=') else {
                errors.push(format!("--feature-gates: missing bool value for {gate}"));
                continue;
            };
            let Ok(value) = value.trim().parse::<bool>() else {
                errors.push(format!("--feature-gates: invalid value of {name}={value}"));
                continue;
            };
            match GATES.iter().find(|(known, _)| *known == name.trim()) {
                Some((_, default)) if *default == value => {}
                Some(_) => errors.push(format!(
                    "--feature-gates: kapi implements {name} at 1.32's default only"
                )),
                None => errors.push(format!(
                    "--feature-gates: kapi does not implement the feature gate {name}"
                )),
            }
        }
    }
}

fn is_file(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn parse_args(args: &[&str]) -> Result<KubeApiserverArgs, String> {
        let matches = command("kube-apiserver")
            .try_get_matches_from(std::iter::once("kube-apiserver").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        parse(&matches).map_err(|e| e.to_string())
    }

    const ENVTEST: &[&str] = &[
        "--allow-privileged=true",
        "--authorization-mode=RBAC",
        "--bind-address=127.0.0.1",
        "--cert-dir=/tmp/k8s_test_framework_1",
        "--client-ca-file=/tmp/k8s_test_framework_1/client-cert-auth-ca.crt",
        "--disable-admission-plugins=ServiceAccount",
        "--etcd-servers=http://127.0.0.1:2379",
        "--secure-port=34567",
        "--service-account-issuer=https://127.0.0.1:34567/",
        "--service-account-key-file=/tmp/k8s_test_framework_1/sa-signer.crt",
        "--service-account-signing-key-file=/tmp/k8s_test_framework_1/sa-signer.key",
        "--service-cluster-ip-range=10.0.0.0/24",
    ];

    #[test]
    fn envtests_command_line_is_taken() {
        let args = parse_args(ENVTEST).unwrap();
        let options = args.options().unwrap();
        assert_eq!(options.listen, "127.0.0.1:34567".parse().unwrap());
        assert_eq!(options.authorization_modes, vec![Mode::Rbac]);
        assert_eq!(options.controllers, vec!["-*".to_owned()]);
        assert!(
            options
                .disabled_admission_plugins
                .contains(&"ServiceAccount")
        );
        assert!(
            options
                .disabled_admission_plugins
                .contains(&"NodeRestriction")
        );
        assert!(!options.disabled_admission_plugins.contains(&"LimitRanger"));
        assert_eq!(options.service_ranges.first_ip().to_string(), "10.0.0.1");
    }

    #[test]
    fn booleans_and_lists_read_as_pflag_reads_them() {
        let mut args: Vec<&str> = ENVTEST.to_vec();
        args.extend([
            "--anonymous-auth",
            "--enable-bootstrap-token-auth=true",
            "--v=4",
        ]);
        args.extend([
            "--enable-admission-plugins=NodeRestriction",
            "--kubelet-preferred-address-types=InternalIP,Hostname",
        ]);
        let parsed = parse_args(&args).unwrap();
        assert!(parsed.anonymous_auth && parsed.enable_bootstrap_token_auth);
        assert_eq!(parsed.log_level(), "debug");
        let options = parsed.options().unwrap();
        assert!(
            !options
                .disabled_admission_plugins
                .contains(&"NodeRestriction")
        );
        // `--flag value` is not a boolean's form.
        assert!(parse_args(&["--anonymous-auth", "false"]).is_err());
    }

    /// kubeadm 1.32's static pod manifest for a plain `kubeadm init`.
    #[test]
    fn kubeadms_command_line_is_taken() {
        let p = "/etc/kubernetes/pki";
        let args = [
            "--advertise-address=192.168.1.10".to_owned(),
            "--allow-privileged=true".to_owned(),
            "--authorization-mode=Node,RBAC".to_owned(),
            format!("--client-ca-file={p}/ca.crt"),
            "--enable-admission-plugins=NodeRestriction".to_owned(),
            "--enable-bootstrap-token-auth=true".to_owned(),
            format!("--etcd-cafile={p}/etcd/ca.crt"),
            format!("--etcd-certfile={p}/apiserver-etcd-client.crt"),
            format!("--etcd-keyfile={p}/apiserver-etcd-client.key"),
            "--etcd-servers=https://127.0.0.1:2379".to_owned(),
            format!("--kubelet-client-certificate={p}/apiserver-kubelet-client.crt"),
            format!("--kubelet-client-key={p}/apiserver-kubelet-client.key"),
            "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname".to_owned(),
            format!("--proxy-client-cert-file={p}/front-proxy-client.crt"),
            format!("--proxy-client-key-file={p}/front-proxy-client.key"),
            "--requestheader-allowed-names=front-proxy-client".to_owned(),
            format!("--requestheader-client-ca-file={p}/front-proxy-ca.crt"),
            "--requestheader-extra-headers-prefix=X-Remote-Extra-".to_owned(),
            "--requestheader-group-headers=X-Remote-Group".to_owned(),
            "--requestheader-username-headers=X-Remote-User".to_owned(),
            "--secure-port=6443".to_owned(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_owned(),
            format!("--service-account-key-file={p}/sa.pub"),
            format!("--service-account-signing-key-file={p}/sa.key"),
            "--service-cluster-ip-range=10.96.0.0/12".to_owned(),
            format!("--tls-cert-file={p}/apiserver.crt"),
            format!("--tls-private-key-file={p}/apiserver.key"),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let matches = command("kube-apiserver")
            .try_get_matches_from(std::iter::once("kube-apiserver").chain(args.iter().copied()))
            .unwrap();
        let ignored = ignored_given(&matches);
        assert!(ignored.contains(&"kubelet-client-key"));
        let options = parse(&matches).unwrap().options().unwrap();
        assert_eq!(options.listen, "0.0.0.0:6443".parse().unwrap());
        assert_eq!(options.authorization_modes, vec![Mode::Node, Mode::Rbac]);
        assert!(options.bootstrap_tokens);
        assert_eq!(
            options.advertise_address,
            Some("192.168.1.10".parse().unwrap())
        );
        assert!(
            !options
                .disabled_admission_plugins
                .contains(&"NodeRestriction")
        );
        assert_eq!(
            options.tls.cert_file.as_deref(),
            Some(Path::new("/etc/kubernetes/pki/apiserver.crt"))
        );
        assert!(
            matches!(&options.backend, super::super::Backend::Etcd(etcd) if etcd.tls.is_some())
        );
    }

    #[test]
    fn what_kapi_does_not_implement_is_refused_by_name() {
        for (flag, words) in [
            ("--insecure-port=0", "insecure-port"),
            ("--authorization-mode=Webhook", "Webhook"),
            (
                "--enable-admission-plugins=AlwaysPullImages",
                "AlwaysPullImages",
            ),
            (
                "--enable-admission-plugins=Nonsense",
                "\"Nonsense\" is unknown",
            ),
            ("--feature-gates=WatchList=false", "WatchList"),
            (
                "--service-cluster-ip-range=10.0.0.0/24,fd00::/108",
                "dual-stack",
            ),
            ("--allow-privileged=false", "allow-privileged"),
            (
                "--enable-admission-plugins=ServiceAccount",
                "[ServiceAccount] in enable-admission-plugins and disable-admission-plugins overlapped",
            ),
            ("--endpoint-reconciler-type=master-count", "master-count"),
            (
                "--lease-reuse-duration-seconds=30",
                "lease-reuse-duration-seconds",
            ),
            ("--etcd-certfile=/c", "--etcd-keyfile"),
        ] {
            let mut args: Vec<&str> = ENVTEST.to_vec();
            args.push(flag);
            let error = parse_args(&args).and_then(|a| a.options().map(|_| ()));
            let error = error.expect_err(flag);
            assert!(error.contains(words), "{flag}: {error}");
        }
        let missing = parse_args(&["--allow-privileged"])
            .unwrap()
            .options()
            .unwrap_err();
        assert!(
            missing.contains("--etcd-servers must be specified"),
            "{missing}"
        );
        assert!(
            missing.contains("service-account-issuer is a required flag"),
            "{missing}"
        );
        assert!(
            missing.contains(
                "--service-account-signing-key-file and --service-account-issuer are required flags"
            ),
            "{missing}"
        );
    }

    #[test]
    fn help_lists_the_flags_and_leaves_out_the_removed_ones() {
        let help = command("kube-apiserver").render_long_help().to_string();
        assert!(help.contains("--cert-dir"));
        assert!(help.contains("--kubelet-client-certificate"));
        assert!(help.contains("Accepted and ignored"));
        // envtest probes `^\s*--insecure-port\b` to decide whether to pass it.
        assert!(
            !help
                .lines()
                .any(|l| l.trim_start().starts_with("--insecure-port"))
        );
    }
}
