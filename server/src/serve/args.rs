//! The command-line options of `serve`, shared by every binary built on kapi
//! (the `kapi` binary and downstream servers such as `examples/widget`).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use kapi_storage::etcd::{EtcdOptions, EtcdTls};

use super::{AuditFlags, Backend, Limits, ServeOptions};
use crate::kinds::{IpRange, ServiceRanges};
use crate::pki::TlsFlags;
use crate::stored::StorageMediaType;

/// Options of `serve`; etcd flags are named as kube-apiserver's.
#[derive(Args, Clone, Debug)]
pub struct ServeArgs {
    /// Directory of the embedded store and of the kubeconfig written for kubectl.
    #[arg(long, default_value = "./kapi-data")]
    pub data_dir: PathBuf,
    /// Address to listen on, over TLS (any address; loopback only with
    /// --authorization-mode=AlwaysAllow).
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Serve from these etcd members (comma-separated URLs) instead of the
    /// embedded store.
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// Where kapi's keys live in etcd.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// CA certificate (PEM) of the etcd members.
    #[arg(long)]
    pub etcd_cafile: Option<PathBuf>,
    /// Client certificate (PEM) for etcd.
    #[arg(long, requires_all = ["etcd_keyfile", "etcd_cafile"])]
    pub etcd_certfile: Option<PathBuf>,
    /// Key (PEM) of the etcd client certificate.
    #[arg(long, requires = "etcd_certfile")]
    pub etcd_keyfile: Option<PathBuf>,
    /// The format objects are written in, on either backend: application/json,
    /// application/yaml or application/vnd.kubernetes.protobuf (kinds without a
    /// protobuf message stay JSON). Objects already stored stay readable in
    /// whatever format they were written.
    #[arg(long, default_value_t = StorageMediaType::default())]
    pub storage_media_type: StorageMediaType,
    /// The network Service ClusterIPs are allocated from; its first address
    /// is the `kubernetes` Service's.
    #[arg(long, default_value = "10.96.0.0/12")]
    pub service_cluster_ip_range: IpRange,
    /// The ports Services of type NodePort and LoadBalancer are given
    /// (`first-last`).
    #[arg(long, default_value = "30000-32767", value_parser = parse_port_range)]
    pub service_node_port_range: (u16, u16),
    /// The controllers to run (the built-in ones and any the binary adds), as
    /// kube-controller-manager's flag: `*`
    /// enables all, `foo` enables `foo`, `-foo` disables it; `-*` runs none (for
    /// a real kube-controller-manager beside kapi). Names:
    /// namespace-controller, serviceaccount-controller,
    /// root-ca-certificate-publisher-controller, garbage-collector-controller,
    /// clusterrole-aggregation-controller,
    /// validatingadmissionpolicy-status-controller.
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub controllers: Vec<String>,
    /// CA certificate (PEM) published in every namespace as the ConfigMap
    /// kube-root-ca.crt; by default `<data-dir>/ca.crt`, the cluster CA kapi
    /// makes on first start.
    #[arg(long)]
    pub root_ca_file: Option<PathBuf>,
    /// Bearer tokens and their users, as kube-apiserver's flag: CSV records
    /// `token,user,uid[,"group1,group2"]`.
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
    /// The service account token issuer (`iss`), as kube-apiserver's flag:
    /// repeated, the first names the tokens kapi issues and tokens of every
    /// one are accepted (default `https://kubernetes.default.svc.cluster.local`).
    #[arg(long = "service-account-issuer")]
    pub service_account_issuer: Vec<String>,
    /// The private key (PEM: RSA, or EC on P-256 or P-384) service account
    /// tokens are signed with, instead of the P-256 key kapi keeps in its
    /// store (and writes to `<data-dir>/sa.key` for kube-controller-manager).
    #[arg(long)]
    pub service_account_signing_key_file: Option<PathBuf>,
    /// Further keys (PEM public or private keys, or certificates; repeated)
    /// service account tokens are verified with, e.g. the key
    /// kube-controller-manager signs legacy token Secrets with.
    #[arg(long = "service-account-key-file")]
    pub service_account_key_file: Vec<PathBuf>,
    /// The audiences of the API server (comma-separated or repeated): a
    /// token for any of them is good here (default: the issuers).
    #[arg(long, value_delimiter = ',')]
    pub api_audiences: Vec<String>,
    /// The authorizers to ask, in order (comma-separated): Node (kubelets:
    /// the objects of their own node), RBAC (the roles and bindings of
    /// rbac.authorization.k8s.io), AlwaysAllow. Members of system:masters
    /// may do anything whatever the modes.
    #[arg(long, value_delimiter = ',', default_value = "Node,RBAC")]
    pub authorization_mode: Vec<crate::authorizers::Mode>,
    /// Authenticate bootstrap tokens (`<id>.<secret>`, checked against the
    /// kube-system Secret `bootstrap-token-<id>`), as kube-apiserver's flag.
    #[arg(long)]
    pub enable_bootstrap_token_auth: bool,
    /// Audit logging.
    #[command(flatten)]
    pub audit: AuditArgs,
    /// Serve requests without credentials as `system:anonymous` (false: answer
    /// them 401 Unauthorized).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub anonymous_auth: bool,
    /// The serving certificate (PEM, leaf first) instead of the one kapi signs
    /// with its CA on every start (`<data-dir>/apiserver.crt`).
    #[arg(long, requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,
    /// The key of --tls-cert-file (PEM).
    #[arg(long, requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,
    /// CAs (PEM) whose client certificates authenticate users (CN the user, O
    /// the groups), instead of kapi's own CA; the kubeconfig then carries no
    /// admin certificate.
    #[arg(long)]
    pub client_ca_file: Option<PathBuf>,
    /// Further DNS names or IP addresses of the serving certificate kapi makes
    /// (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    pub tls_san: Vec<String>,
    /// The front proxy: what extension API servers are told to trust.
    #[command(flatten)]
    pub front_proxy: FrontProxyArgs,
    /// A kubeconfig of the cluster this server extends: tokens it does not
    /// know are reviewed there (TokenReview), and the client CA and
    /// front-proxy settings are read from its
    /// kube-system/extension-apiserver-authentication ConfigMap, unless
    /// --client-ca-file or --requestheader-client-ca-file are given.
    #[arg(long)]
    pub authentication_kubeconfig: Option<PathBuf>,
    /// A kubeconfig of the cluster this server extends: what users may do
    /// is asked there (SubjectAccessReview) instead of --authorization-mode;
    /// /healthz, /readyz and /livez are open to all.
    #[arg(long)]
    pub authorization_kubeconfig: Option<PathBuf>,
    /// The address the `kubernetes` Service's endpoints name, which pods
    /// reach this server at (not loopback); by default the --listen address
    /// when it is neither loopback nor unspecified, else none are written.
    #[arg(long)]
    pub advertise_address: Option<std::net::IpAddr>,
    /// How long an Event is kept after it was last written (an etcd lease,
    /// or the embedded store's expiry), as kube-apiserver's flag.
    #[arg(long, default_value = "1h0m0s", value_parser = crate::go_duration::positive_flag)]
    pub event_ttl: std::time::Duration,
    /// Send requests for APIServices' group versions to one of their
    /// Service's endpoints instead of its cluster IP (kapi runs no kube-proxy:
    /// turn this on unless something routes cluster IPs on this machine).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    pub enable_aggregator_routing: bool,
    /// API priority and fairness: classify requests by FlowSchema and share
    /// the seats of --max-requests-inflight plus
    /// --max-mutating-requests-inflight among priority levels. When false,
    /// those two flags limit reads and writes directly.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub enable_priority_and_fairness: bool,
    /// Reads (get, list, watch) in flight at once; with priority and fairness,
    /// part of the seats shared among levels (0: unlimited).
    #[arg(long, default_value_t = 400)]
    pub max_requests_inflight: u32,
    /// Writes in flight at once; with priority and fairness, part of the
    /// seats shared among levels (0: unlimited).
    #[arg(long, default_value_t = 200)]
    pub max_mutating_requests_inflight: u32,
}

/// Audit logging, as kube-apiserver's flags (`serve` and `kube-apiserver`).
#[derive(Args, Clone, Debug, Default)]
pub struct AuditArgs {
    /// The audit policy (an audit.k8s.io/v1 Policy, YAML or JSON): which
    /// requests are written to --audit-log-path, at what level.
    #[arg(long)]
    pub audit_policy_file: Option<PathBuf>,
    /// Where audit events go, one JSON line each (`-`: standard output).
    #[arg(long)]
    pub audit_log_path: Option<PathBuf>,
    /// Megabytes the audit log grows to before it is rotated (0: never).
    #[arg(long = "audit-log-maxsize", default_value_t = 0)]
    pub audit_log_maxsize: u64,
    /// Rotated audit logs kept (0: all).
    #[arg(long = "audit-log-maxbackup", default_value_t = 0)]
    pub audit_log_maxbackup: usize,
    /// Days a rotated audit log is kept (0: forever).
    #[arg(long = "audit-log-maxage", default_value_t = 0)]
    pub audit_log_maxage: u64,
}

impl AuditArgs {
    /// The policy and the log, when both are given.
    pub fn flags(&self) -> Option<AuditFlags> {
        self.audit_policy_file
            .clone()
            .zip(self.audit_log_path.clone())
            .map(|(policy, path)| AuditFlags {
                policy,
                log: crate::audit::LogOptions {
                    path,
                    max_size_mb: self.audit_log_maxsize,
                    max_backups: self.audit_log_maxbackup,
                    max_age_days: self.audit_log_maxage,
                },
            })
    }
}

/// The front proxy, as kube-apiserver's flags (`serve` and
/// `kube-apiserver`): the client certificate presented to extension API
/// servers and what they are told to trust.
#[derive(Args, Clone, Debug, Default)]
pub struct FrontProxyArgs {
    /// The client certificate (PEM) kapi presents to extension API servers,
    /// instead of the one it signs with a front-proxy CA of its own
    /// (`<data-dir>/front-proxy-client.crt`).
    #[arg(long, requires = "proxy_client_key_file")]
    pub proxy_client_cert_file: Option<PathBuf>,
    /// The key of --proxy-client-cert-file (PEM).
    #[arg(long, requires = "proxy_client_cert_file")]
    pub proxy_client_key_file: Option<PathBuf>,
    /// The CA (PEM) of front proxies' client certificates, which extension
    /// API servers are told to trust (kapi's own front-proxy CA by default).
    #[arg(long)]
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// The common names a front proxy's client certificate may have
    /// (comma-separated; with none of the four --requestheader-* lists,
    /// kubeadm's: front-proxy-client).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_allowed_names: Vec<String>,
    /// The headers a front proxy names the user in (kubeadm's:
    /// X-Remote-User).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_username_headers: Vec<String>,
    /// The headers a front proxy names the groups in (kubeadm's:
    /// X-Remote-Group).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_group_headers: Vec<String>,
    /// The prefixes of the headers a front proxy gives extra user
    /// information in (kubeadm's: X-Remote-Extra-).
    #[arg(long, value_delimiter = ',')]
    pub requestheader_extra_headers_prefix: Vec<String>,
}

impl FrontProxyArgs {
    /// These flags' part of the TLS settings (the serving ones left unset).
    fn tls_flags(&self) -> TlsFlags {
        TlsFlags {
            proxy_client_cert_file: self.proxy_client_cert_file.clone(),
            proxy_client_key_file: self.proxy_client_key_file.clone(),
            requestheader_client_ca_file: self.requestheader_client_ca_file.clone(),
            requestheader_allowed_names: self.requestheader_allowed_names.clone(),
            requestheader_username_headers: self.requestheader_username_headers.clone(),
            requestheader_group_headers: self.requestheader_group_headers.clone(),
            requestheader_extra_headers_prefix: self.requestheader_extra_headers_prefix.clone(),
            ..TlsFlags::default()
        }
    }
}

/// `30000-32767`.
pub(super) fn parse_port_range(text: &str) -> Result<(u16, u16), String> {
    let invalid = || format!("{text:?} is not a port range (e.g. 30000-32767)");
    let (first, last) = text.split_once('-').ok_or_else(invalid)?;
    let first: u16 = first.trim().parse().map_err(|_| invalid())?;
    let last: u16 = last.trim().parse().map_err(|_| invalid())?;
    if first == 0 || last < first {
        return Err(invalid());
    }
    Ok((first, last))
}

impl ServeArgs {
    /// The serve options these arguments describe.
    pub fn options(&self) -> ServeOptions {
        let backend = if self.etcd_servers.is_empty() {
            Backend::Embedded(self.data_dir.clone())
        } else {
            let mut etcd = EtcdOptions::new(self.etcd_servers.iter().cloned());
            etcd.prefix = self.etcd_prefix.clone();
            etcd.tls = self.etcd_cafile.as_ref().map(|ca| EtcdTls {
                ca_file: ca.clone(),
                cert_file: self.etcd_certfile.clone(),
                key_file: self.etcd_keyfile.clone(),
            });
            Backend::Etcd(etcd)
        };
        ServeOptions {
            listen: self.listen,
            data_dir: self.data_dir.clone(),
            backend,
            storage_media_type: self.storage_media_type,
            service_ranges: ServiceRanges {
                cluster_ips: self.service_cluster_ip_range,
                node_ports: self.service_node_port_range,
            },
            controllers: self.controllers.clone(),
            root_ca_file: self.root_ca_file.clone(),
            token_auth_file: self.token_auth_file.clone(),
            service_accounts: crate::authn::service_account::issuer::IssuerFlags {
                issuers: self.service_account_issuer.clone(),
                api_audiences: self.api_audiences.clone(),
                signing_key_file: self.service_account_signing_key_file.clone(),
                key_files: self.service_account_key_file.clone(),
            },
            anonymous_auth: self.anonymous_auth,
            bootstrap_tokens: self.enable_bootstrap_token_auth,
            authorization_modes: self.authorization_mode.clone(),
            audit: self.audit.flags(),
            tls: TlsFlags {
                cert_file: self.tls_cert_file.clone(),
                key_file: self.tls_private_key_file.clone(),
                client_ca_file: self.client_ca_file.clone(),
                sans: self.tls_san.clone(),
                ..self.front_proxy.tls_flags()
            },
            aggregator_routing: self.enable_aggregator_routing,
            delegation: super::Delegation {
                authentication_kubeconfig: self.authentication_kubeconfig.clone(),
                authorization_kubeconfig: self.authorization_kubeconfig.clone(),
            },
            limits: Limits {
                priority_and_fairness: self.enable_priority_and_fairness,
                read_only: self.max_requests_inflight,
                mutating: self.max_mutating_requests_inflight,
            },
            disabled_admission_plugins: Vec::new(),
            event_ttl: self.event_ttl,
            advertise_address: self.advertise_address,
            endpoint_reconciler: true,
        }
    }
}
