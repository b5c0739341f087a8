//! Serving: storage backend, listener, kubeconfig, bootstrap namespaces,
//! compaction and a clean shutdown on Ctrl-C / SIGTERM (in-flight requests finish,
//! watches end).

mod args;
mod backend;
mod connections;
pub mod kube_apiserver;
pub mod tls;

pub use args::{AuditArgs, FrontProxyArgs, ServeArgs};
pub use backend::{Backend, COMPACTION_INTERVAL, Opened};
pub use connections::http2;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kapi_runtime::scheme::Scheme;
use kapi_storage::StorageError;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::app::app;
use crate::authn::Authenticator;
use crate::authn::service_account::Issuer;
use crate::authn::service_account::issuer::{IssuerError, IssuerFlags};
use crate::authn::token_file::TokenFile;
use crate::authn::x509::ClientCertificates;
use crate::builtin_controllers::{self, UnknownController};
use crate::controllers::{self, Controller};
use crate::extensions::Extensions;
use crate::flowcontrol::max_in_flight::MaxInFlight;
use crate::flowcontrol::{FlowControl, Limiter};
use crate::kinds::ServiceRanges;
use crate::metrics::Metrics;
use crate::pki;
use crate::registry::Registry;
use crate::state::App;
use crate::stored::StorageMediaType;

/// Namespaces every cluster has, created at start when missing.
/// The resources some of the server's own tasks read: a task whose kinds
/// the scheme does not serve (an extension server's) is not started.
const APISERVICES: (&str, &str, &str) = ("apiregistration.k8s.io", "v1", "apiservices");
const FLOW_SCHEMAS: (&str, &str, &str) = ("flowcontrol.apiserver.k8s.io", "v1", "flowschemas");
const CRDS: (&str, &str, &str) = ("apiextensions.k8s.io", "v1", "customresourcedefinitions");

/// The post-start hooks of the health checks, in kube-apiserver 1.32's
/// order, for the work this server does with upstream's names (a hook whose
/// work does not happen here, because the scheme lacks its kinds or kapi
/// has no such task, is not listed).
struct Hooks {
    checks: crate::post_start::Checks,
    admission: Option<Handle>,
    informers: Option<Handle>,
    flow_consumer: Option<Handle>,
    crd_informers: Option<Handle>,
    crd_controllers: Option<Handle>,
    crd_synced: Option<Handle>,
    namespaces: Option<Handle>,
    cluster_authentication: Option<Handle>,
    identity_lease: Option<Handle>,
    identity_lease_gc: Option<Handle>,
    legacy_token_tracking: Option<Handle>,
    service_ip_repair: Option<Handle>,
    rbac: Option<Handle>,
    priority_classes: Option<Handle>,
    flow_producer: Option<Handle>,
    bootstrap_controller: Option<Handle>,
    aggregator: Option<crate::kinds::apiservice::Ready>,
    available: Option<Handle>,
    discovery: Option<Handle>,
    openapi_v2: Option<Handle>,
    openapi_v3: Option<Handle>,
}

use crate::post_start::Handle;

impl Hooks {
    fn new(scheme: &Scheme, flow_control: bool, rbac: bool) -> Hooks {
        let mut checks = crate::post_start::Checks::default();
        let crds = serves(scheme, CRDS);
        let configmaps = serves(scheme, ("", "v1", "configmaps"));
        let apiservices = serves(scheme, APISERVICES);
        let mut hook = |on: bool, name: &str| on.then(|| checks.hook(name));
        let admission = hook(true, "start-apiserver-admission-initializer");
        let informers_hook = |checks: &mut crate::post_start::Checks, on: bool, name: &str| {
            on.then(|| checks.informers_hook(name))
        };
        let informers = informers_hook(&mut checks, true, "generic-apiserver-start-informers");
        let flow_consumer = informers_hook(
            &mut checks,
            flow_control,
            "priority-and-fairness-config-consumer",
        );
        let crd_informers = informers_hook(&mut checks, crds, "start-apiextensions-informers");
        let mut hook = |on: bool, name: &str| on.then(|| checks.hook(name));
        let crd_controllers = hook(crds, "start-apiextensions-controllers");
        let crd_synced = hook(crds, "crd-informer-synced");
        let namespaces = hook(
            serves(scheme, ("", "v1", "namespaces")),
            "start-system-namespaces-controller",
        );
        let cluster_authentication =
            hook(configmaps, "start-cluster-authentication-info-controller");
        let leases = serves(scheme, ("coordination.k8s.io", "v1", "leases"));
        let identity_lease = hook(leases, "start-kube-apiserver-identity-lease-controller");
        let identity_lease_gc = hook(
            leases,
            "start-kube-apiserver-identity-lease-garbage-collector",
        );
        let legacy_token_tracking = hook(configmaps, "start-legacy-token-tracking-controller");
        let service_ip_repair = hook(
            serves(scheme, ("", "v1", "services")),
            "start-service-ip-repair-controllers",
        );
        let rbac = hook(rbac, "rbac/bootstrap-roles");
        let priority_classes = hook(
            serves(scheme, ("scheduling.k8s.io", "v1", "priorityclasses")),
            "scheduling/bootstrap-system-priority-classes",
        );
        let flow_producer = hook(flow_control, "priority-and-fairness-config-producer");
        let bootstrap_controller = hook(
            serves(scheme, ("", "v1", "services")),
            "bootstrap-controller",
        );
        let (aggregator, available, discovery, openapi_v2, openapi_v3) = if apiservices {
            let informers = checks.informers_hook("start-kube-aggregator-informers");
            let local = checks.hook("apiservice-status-local-available-controller");
            let available = checks.hook("apiservice-status-remote-available-controller");
            let registration = checks.hook("apiservice-registration-controller");
            let discovery = checks.hook("apiservice-discovery-controller");
            let autoregistration = checks.hook("kube-apiserver-autoregistration");
            let completion = checks.check("autoregister-completion", "missing APIService");
            let openapi_v2 = checks.hook("apiservice-openapi-controller");
            let openapi_v3 = checks.hook("apiservice-openapiv3-controller");
            let ready = crate::kinds::apiservice::Ready {
                informers,
                local,
                registration,
                autoregistration,
                completion,
            };
            (
                Some(ready),
                Some(available),
                Some(discovery),
                Some(openapi_v2),
                Some(openapi_v3),
            )
        } else {
            (None, None, None, None, None)
        };
        Hooks {
            checks,
            admission,
            informers,
            flow_consumer,
            crd_informers,
            crd_controllers,
            crd_synced,
            namespaces,
            cluster_authentication,
            identity_lease,
            identity_lease_gc,
            legacy_token_tracking,
            service_ip_repair,
            rbac,
            priority_classes,
            flow_producer,
            bootstrap_controller,
            aggregator,
            available,
            discovery,
            openapi_v2,
            openapi_v3,
        }
    }
}

/// A hook no check lists (for a task whose hooks are not registered).
fn unlisted() -> Handle {
    crate::post_start::Checks::default().hook("unlisted")
}

fn done(handle: &Option<Handle>) {
    if let Some(handle) = handle {
        handle.done();
    }
}

/// Reads into the watch caches the kinds the admission plugins read (then
/// `admission` is done) and those the server's own tasks watch (then
/// `informers` is), as kube-apiserver's hooks start and sync their
/// informers.
async fn prime_caches(registry: Registry, admission: Option<Handle>, informers: Option<Handle>) {
    const ADMISSION: &[(&str, &str, &str)] = &[
        ("", "v1", "namespaces"),
        ("", "v1", "limitranges"),
        ("", "v1", "resourcequotas"),
        ("", "v1", "serviceaccounts"),
        ("scheduling.k8s.io", "v1", "priorityclasses"),
        (
            "admissionregistration.k8s.io",
            "v1",
            "mutatingwebhookconfigurations",
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "validatingadmissionpolicies",
        ),
        (
            "admissionregistration.k8s.io",
            "v1",
            "validatingadmissionpolicybindings",
        ),
    ];
    const OWN_TASKS: &[(&str, &str, &str)] = &[
        ("", "v1", "configmaps"),
        ("", "v1", "services"),
        ("", "v1", "endpoints"),
        APISERVICES,
        CRDS,
        FLOW_SCHEMAS,
        (
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "prioritylevelconfigurations",
        ),
    ];
    for (resources, handle) in [(ADMISSION, admission), (OWN_TASKS, informers)] {
        for resource in resources {
            // A kind the scheme does not serve has nothing to read.
            let _ = registry.listed_cache(*resource).await;
        }
        done(&handle);
    }
}

/// Whether `scheme` serves `resource` (group, version, plural).
fn serves(scheme: &Scheme, (group, version, plural): (&str, &str, &str)) -> bool {
    scheme.get(group, version, plural).is_some()
}

const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// What `serve` needs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address to listen on (loopback only with AlwaysAllow authorization).
    pub listen: SocketAddr,
    /// Where the kubeconfig (and the embedded store) are written.
    pub data_dir: PathBuf,
    /// The store to serve from.
    pub backend: Backend,
    /// The format objects are written in.
    pub storage_media_type: StorageMediaType,
    /// Where Service ClusterIPs and NodePorts come from.
    pub service_ranges: ServiceRanges,
    /// `--controllers`: which built-in controllers run.
    pub controllers: Vec<String>,
    /// The CA certificate to publish (default: `<data-dir>/ca.crt`, made on
    /// first start).
    pub root_ca_file: Option<PathBuf>,
    /// `--token-auth-file`.
    pub token_auth_file: Option<PathBuf>,
    /// The service account issuer and keys.
    pub service_accounts: IssuerFlags,
    /// `--anonymous-auth`.
    pub anonymous_auth: bool,
    /// `--enable-bootstrap-token-auth`.
    pub bootstrap_tokens: bool,
    /// `--authorization-mode`.
    pub authorization_modes: Vec<crate::authorizers::Mode>,
    /// `--audit-policy-file` and the log, when both are given.
    pub audit: Option<AuditFlags>,
    /// The serving certificate and client CAs, when not kapi's own.
    pub tls: pki::TlsFlags,
    /// Priority and fairness or the in-flight limits.
    pub limits: Limits,
    /// `--enable-aggregator-routing`: APIServices' requests go to an
    /// endpoint of their Service rather than to its cluster IP.
    pub aggregator_routing: bool,
    /// What is left to the cluster this server extends.
    pub delegation: Delegation,
    /// Admission plugins not to run (`kapi kube-apiserver`'s reading of
    /// `--enable-admission-plugins` and `--disable-admission-plugins`;
    /// `kapi serve` runs every one).
    pub disabled_admission_plugins: Vec<&'static str>,
    /// `--event-ttl`: how long an Event lives after its last write.
    pub event_ttl: std::time::Duration,
    /// `--advertise-address`: the address the `kubernetes` Service's
    /// endpoints name (by default the one listened on, unless loopback or
    /// unspecified).
    pub advertise_address: Option<std::net::IpAddr>,
    /// Whether this server keeps the `kubernetes` Service's endpoints
    /// (`--endpoint-reconciler-type=lease`, the default; `none` turns it off).
    pub endpoint_reconciler: bool,
}

/// An extension server's delegation of authentication and authorization to
/// the cluster it extends, as k8s.io/apiserver's delegating options.
#[derive(Clone, Debug, Default)]
pub struct Delegation {
    /// `--authentication-kubeconfig`.
    pub authentication_kubeconfig: Option<PathBuf>,
    /// `--authorization-kubeconfig`.
    pub authorization_kubeconfig: Option<PathBuf>,
}

/// What the cluster's `extension-apiserver-authentication` ConfigMap says.
#[derive(Debug, Default)]
struct ClusterTrust {
    /// `client-ca-file`.
    client_ca: Option<String>,
    /// The `requestheader-*` keys.
    request_header: Option<crate::kinds::cluster_authentication::RequestHeader>,
}

/// Reads the cluster's `kube-system/extension-apiserver-authentication`
/// ConfigMap, as k8s.io/apiserver's delegating authentication looks up
/// what it is not given.
async fn cluster_trust(api: &crate::kubeconfig::RemoteApi) -> Result<ClusterTrust, ServeError> {
    let path = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
    let (code, configmap) = api
        .json(
            hyper::Method::GET,
            path,
            None,
            std::time::Duration::from_secs(30),
        )
        .await
        .map_err(|e| ServeError::Delegation(e.0))?;
    // No ConfigMap: nothing to learn from the cluster (upstream goes on
    // without it).
    if code == 404 {
        return Ok(ClusterTrust::default());
    }
    if code != 200 {
        return Err(ServeError::Delegation(format!(
            "Unable to get configmap/extension-apiserver-authentication in kube-system ({code}: {}).  \
             Usually fixed by 'kubectl create rolebinding -n kube-system ROLEBINDING_NAME \
             --role=extension-apiserver-authentication-reader --serviceaccount=YOUR_NS:YOUR_SA'",
            configmap["message"].as_str().unwrap_or_default()
        )));
    }
    let data = &configmap["data"];
    let text = |key: &str| {
        data[key]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    let list = |key: &str| -> Result<Vec<String>, ServeError> {
        match text(key) {
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| ServeError::Delegation(format!("{key}: {e}"))),
            None => Ok(Vec::new()),
        }
    };
    let request_header = match text("requestheader-client-ca-file") {
        Some(client_ca) => Some(crate::kinds::cluster_authentication::RequestHeader {
            client_ca,
            allowed_names: list("requestheader-allowed-names")?,
            username_headers: list("requestheader-username-headers")?,
            group_headers: list("requestheader-group-headers")?,
            extra_headers_prefix: list("requestheader-extra-headers-prefix")?,
        }),
        None => None,
    };
    Ok(ClusterTrust {
        client_ca: text("client-ca-file"),
        request_header,
    })
}

/// How many requests run at once.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// API priority and fairness (else the plain limits).
    pub priority_and_fairness: bool,
    /// `--max-requests-inflight`.
    pub read_only: u32,
    /// `--max-mutating-requests-inflight`.
    pub mutating: u32,
}

impl Default for Limits {
    /// kube-apiserver's defaults.
    fn default() -> Limits {
        Limits {
            priority_and_fairness: true,
            read_only: 400,
            mutating: 200,
        }
    }
}

/// Why serving failed.
/// `--audit-policy-file` and `--audit-log-*`.
#[derive(Clone, Debug)]
pub struct AuditFlags {
    /// The policy file.
    pub policy: PathBuf,
    /// The log.
    pub log: crate::audit::LogOptions,
}

impl AuditFlags {
    /// The auditor the flags describe.
    pub fn auditor(&self) -> Result<crate::audit::Auditor, ServeError> {
        let text = std::fs::read_to_string(&self.policy)
            .map_err(|e| ServeError::Audit(format!("{}: {e}", self.policy.display())))?;
        let policy = crate::audit::Policy::parse(&text)
            .map_err(|e| ServeError::Audit(format!("{}: {e}", self.policy.display())))?;
        let log = crate::audit::Log::new(self.log.clone())
            .map_err(|e| ServeError::Audit(format!("{}: {e}", self.log.path.display())))?;
        Ok(crate::audit::Auditor::new(policy, log))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A non-loopback address was asked for while every user may do
    /// everything.
    #[error(
        "refusing to listen on {0} with --authorization-mode=AlwaysAllow (every user, anonymous \
         ones too, may do everything): use RBAC, or a loopback address (e.g. 127.0.0.1:6443)"
    )]
    NotLoopback(SocketAddr),
    /// I/O failed (bind, kubeconfig).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The store could not be opened or reached.
    #[error("storage: {0}")]
    Storage(#[from] StorageError),
    /// `--controllers` names an unknown controller.
    #[error(transparent)]
    Controllers(#[from] UnknownController),
    /// The CA certificate to publish could not be read.
    #[error("--root-ca-file: {0}")]
    RootCa(pki::PkiError),
    /// The serving certificate or the client CAs could not be read or made.
    #[error("certificates: {0}")]
    Pki(#[from] pki::PkiError),
    /// rustls refused the certificates.
    #[error("TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// The audit policy could not be read, or the log not opened.
    #[error("audit: {0}")]
    Audit(String),
    /// A service account key file could not be read.
    #[error(transparent)]
    ServiceAccountKeys(#[from] IssuerError),
    /// `--token-auth-file` could not be read.
    #[error(transparent)]
    TokenFile(#[from] crate::authn::token_file::TokenFileError),
    /// Priority and fairness has no seats to share.
    #[error("delegation to the cluster: {0}")]
    Delegation(String),
    #[error(
        "--max-requests-inflight plus --max-mutating-requests-inflight must be positive \
         with priority and fairness enabled"
    )]
    NoSeats,
}

/// Serves `scheme` from the configured backend until Ctrl-C or SIGTERM.
pub async fn run(scheme: Scheme, opts: ServeOptions) -> Result<(), ServeError> {
    run_with(scheme, opts, Extensions::default()).await
}

/// [`run`], with the admission plugins, kind hooks and controllers a server
/// binary adds beside Kubernetes' built-in ones.
pub async fn run_with(
    scheme: Scheme,
    opts: ServeOptions,
    extensions: Extensions,
) -> Result<(), ServeError> {
    // Off loopback only when requests are authorized: TLS and
    // authentication are always on.
    if !opts.listen.ip().is_loopback()
        && opts
            .authorization_modes
            .contains(&crate::authorizers::Mode::AlwaysAllow)
    {
        return Err(ServeError::NotLoopback(opts.listen));
    }
    let certificates = pki::load(
        &opts.data_dir,
        &opts.tls,
        &pki::Reachable {
            listen: opts.listen.ip(),
            service_ip: opts.service_ranges.first_ip(),
        },
    )?;
    let root_ca = match &opts.root_ca_file {
        Some(path) => pki::read_pem(path).map_err(ServeError::RootCa)?,
        None => certificates.cluster_ca_pem.clone(),
    };
    let controllers = controller_options(&opts, &root_ca, &extensions.controllers)?;
    let issuer = Arc::new(Issuer::from_flags(&opts.service_accounts)?);
    let mut trust = ClusterTrust::default();
    let mut token_review = None;
    if let Some(path) = &opts.delegation.authentication_kubeconfig {
        let api = crate::kubeconfig::RemoteApi::from_file(path)
            .map_err(|e| ServeError::Delegation(e.0))?;
        trust = cluster_trust(&api).await?;
        if opts.tls.client_ca_file.is_some() {
            trust.client_ca = None;
        }
        if opts.tls.requestheader_client_ca_file.is_some() {
            trust.request_header = None;
        }
        token_review = Some(crate::authn::webhook::TokenReview::new(api));
    }
    let mut authenticator = authenticator(&opts, &certificates, issuer.clone(), &trust)?;
    if let Some(review) = token_review {
        authenticator = authenticator.with_token_review(review);
    }
    let authenticator = Arc::new(authenticator);
    let auditor = match &opts.audit {
        Some(flags) => Some(Arc::new(flags.auditor()?)),
        None => None,
    };
    let tls = tls::server_config(&certificates, authenticator.client_certificates())?;
    let rbac = Arc::new(crate::authorizers::rbac::RbacAuthorizer::default());
    let authorizer = Arc::new(match &opts.delegation.authorization_kubeconfig {
        Some(path) => {
            let api = crate::kubeconfig::RemoteApi::from_file(path)
                .map_err(|e| ServeError::Delegation(e.0))?;
            crate::authz::Authorizer::new(vec![Arc::new(
                crate::authz::webhook::SubjectAccessReview::new(api),
            )])
        }
        None => crate::authorizers::chain(&opts.authorization_modes, &rbac),
    });
    let mut metrics = Metrics::default();
    // A server of its own kinds alone (an extension server) has no
    // flowcontrol objects to configure priority and fairness with: it limits
    // requests in flight.
    let mut limits = opts.limits;
    limits.priority_and_fairness &= serves(&scheme, FLOW_SCHEMAS);
    let limiter = limiter(limits, &metrics)?;
    let Opened { storage, compactor } = opts.backend.open().await?;
    let migrated = crate::stored::migrate::migrate(
        &*storage,
        &scheme,
        opts.storage_media_type,
        crate::kinds::SERVICE_RANGE_KEYS,
    )
    .await?;
    // Upstream's MultiCIDRServiceAllocator (off in 1.32) allocates from
    // ServiceCIDR objects; kapi does not read them.
    let cidrs = storage
        .list(
            "/registry/servicecidrs/",
            kapi_storage::ListOptions {
                limit: 1,
                ..Default::default()
            },
        )
        .await?;
    if !cidrs.items.is_empty() {
        tracing::warn!(
            "this store holds ServiceCIDRs (kube-apiserver's MultiCIDRServiceAllocator): kapi \
             allocates Service addresses from --service-cluster-ip-range and its bitmap only"
        );
    }
    if migrated.was_old {
        tracing::info!(
            moved = migrated.moved,
            rewritten = migrated.rewritten,
            "the store was migrated, once, to kube-apiserver 1.32's etcd layout (kapi before \
             this version cannot read it); the service address and port bitmaps are rebuilt \
             from the Services, and resource versions from before are compacted away"
        );
    }
    let listener = TcpListener::bind(opts.listen).await?;
    let address = listener.local_addr()?;
    let base = Arc::new(scheme);
    let registry = Registry::new(storage, base.clone())
        .with_storage_media_type(opts.storage_media_type)
        // Events, of core/v1 and events.k8s.io/v1 alike (one storage).
        .with_expiry("events", opts.event_ttl)
        .with_admission(
            crate::admission_plugins::builtin()
                .with_plugins(extensions.admission)
                .with_plugins(crate::admission_plugins::dynamic(
                    metrics.registry_mut(),
                    authorizer.clone(),
                ))
                .without(&opts.disabled_admission_plugins),
        )
        .with_hooks(
            crate::kinds::builtin(
                opts.service_ranges.clone(),
                opts.storage_media_type,
                crate::kinds::Security {
                    authenticator: authenticator.clone(),
                    authorizer: authorizer.clone(),
                    rbac,
                    issuer: issuer.clone(),
                },
            )
            .merged(extensions.hooks),
        );
    metrics.register_cache(registry.cache_metrics());
    let rbac = opts
        .authorization_modes
        .contains(&crate::authorizers::Mode::Rbac)
        && serves(&base, ("rbac.authorization.k8s.io", "v1", "clusterroles"));
    let mut hooks = Hooks::new(&base, limits.priority_and_fairness, rbac);
    bootstrap_namespaces(&registry).await;
    done(&hooks.namespaces);
    bootstrap_admission(&registry).await;
    done(&hooks.priority_classes);
    if rbac {
        crate::authorizers::bootstrap::ensure(&registry).await;
        done(&hooks.rbac);
    }
    let mut service_repair = None;
    if let Some(services) = base.get("", "v1", "services") {
        let mut repair = crate::kinds::ServiceRepair::new(
            registry.storage().clone(),
            services.clone(),
            opts.service_ranges.clone(),
            opts.storage_media_type,
        );
        // Before any Service takes an address: a bitmap rebuilt after a
        // move, or written by another server, must hold every taken one.
        let pending = match repair.run_once().await {
            Ok(()) => {
                done(&hooks.service_ip_repair);
                None
            }
            Err(e) => {
                tracing::error!(error = %e, "could not repair the service address and port bitmaps");
                hooks.service_ip_repair.take()
            }
        };
        service_repair = Some(tokio::spawn(repair.run(pending)));
    }
    bootstrap_objects(&registry, &opts.service_ranges, address.port()).await;
    done(&hooks.bootstrap_controller);
    done(&hooks.legacy_token_tracking);
    // The admission plugins' and the server's own tasks' kinds, read into
    // the watch caches before those hooks pass.
    tokio::spawn(prime_caches(
        registry.clone(),
        hooks.admission.clone(),
        hooks.informers.clone(),
    ));
    write_service_account_key(&opts.data_dir, &issuer, registry.storage().as_ref()).await?;
    // The kubeconfig trusts the serving certificate's CA; with an operator's
    // certificate that names none, the published root CA is the best guess.
    let serving_ca = certificates
        .serving_ca_pem
        .clone()
        .or_else(|| opts.root_ca_file.is_some().then(|| root_ca.clone()));
    let kubeconfig = write_kubeconfig(
        &opts.data_dir.join("kubeconfig"),
        address,
        serving_ca.as_deref(),
        certificates.admin.as_ref(),
    )?;
    // kube-controller-manager's and kube-scheduler's, as kubeadm writes them.
    for (identity, credentials) in &certificates.components {
        let path = opts.data_dir.join(format!("{}.conf", identity.file));
        write_kubeconfig(&path, address, serving_ca.as_deref(), Some(credentials))?;
    }
    let remote = Arc::new(remote_apis(&opts, &certificates, &registry, address));
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let shutdown_rx_for_controllers = shutdown_rx.clone();
    let shutdown_rx_for_custom = shutdown_rx.clone();
    let shutdown_rx_for_flow = shutdown_rx.clone();
    let shutdown_rx_for_endpoints = shutdown_rx.clone();
    let state = Arc::new(App {
        registry,
        shutdown: shutdown_rx,
        address: address.to_string(),
        metrics,
        openapi: Default::default(),
        authenticator,
        authorizer,
        limiter,
        auditor,
        remote,
        checks: Arc::new(std::mem::take(&mut hooks.checks)),
    });
    let compaction = tokio::spawn(compactor);
    tracing::info!(%address, kubeconfig = %kubeconfig.display(), "kapi is serving");
    let store = match &opts.backend {
        Backend::Embedded(dir) => format!("embedded store in {}", dir.display()),
        Backend::Etcd(etcd) => {
            format!("etcd at {} under {}", etcd.endpoints.join(","), etcd.prefix)
        }
    };
    let store = format!("{store}, objects stored as {}", opts.storage_media_type);
    println!("kapi is serving at https://{address} ({store})");
    println!(
        "use it with: kubectl --kubeconfig {} get namespaces",
        kubeconfig.display()
    );
    let router = app(state.clone());
    // Custom resources are served by every process, whatever controllers run.
    // What extension API servers read to trust this server.
    let cluster_authentication = serves(&base, ("", "v1", "configmaps")).then(|| {
        tokio::spawn(crate::kinds::cluster_authentication::run(
            crate::controllers::client::Client::of_apiserver(router.clone()),
            published(&opts.tls, &certificates),
            hooks.cluster_authentication.clone(),
            shutdown_rx_for_custom.clone(),
        ))
    });
    // The identity lease and its collector, started as upstream's hooks
    // start them.
    let identity = hooks.identity_lease.take().map(|hook| {
        hook.done();
        tokio::spawn(crate::kinds::identity_lease::renew(
            crate::controllers::client::Client::of_apiserver(router.clone()),
            shutdown_rx_for_custom.clone(),
        ))
    });
    let identity_gc = hooks.identity_lease_gc.take().map(|hook| {
        hook.done();
        tokio::spawn(crate::kinds::identity_lease::collect(
            crate::controllers::client::Client::of_apiserver(router.clone()),
            shutdown_rx_for_custom.clone(),
        ))
    });
    // kube-aggregator's registration of the local APIServices.
    let registration = hooks.aggregator.as_ref().map(|r| r.registration.clone());
    let apiservices = hooks.aggregator.take().map(|ready| {
        tokio::spawn(crate::kinds::apiservice::run(
            crate::controllers::client::Client::of_apiserver(router.clone()),
            base.clone(),
            state.remote.clone(),
            ready,
            shutdown_rx_for_custom.clone(),
        ))
    });
    let remote_discovery = tokio::spawn(crate::aggregator::discovery::run(
        state.remote.clone(),
        (
            registration,
            [&hooks.discovery, &hooks.openapi_v2, &hooks.openapi_v3]
                .into_iter()
                .flatten()
                .cloned()
                .collect(),
        ),
        shutdown_rx_for_custom.clone(),
    ));
    let availability = serves(&base, APISERVICES).then(|| {
        tokio::spawn(crate::kinds::apiservice::available::run(
            crate::controllers::client::Client::of_apiserver(router.clone()),
            state.remote.clone(),
            hooks.available.clone(),
            shutdown_rx_for_custom.clone(),
        ))
    });
    let custom = serves(&base, CRDS).then(|| {
        tokio::spawn(crate::custom::controller::run(
            state.registry.clone(),
            base,
            crate::controllers::client::Client::of_apiserver(router.clone()),
            crate::custom::controller::Ready {
                informers: hooks.crd_informers.clone().unwrap_or_else(unlisted),
                controllers: hooks.crd_controllers.clone().unwrap_or_else(unlisted),
                synced: hooks.crd_synced.clone().unwrap_or_else(unlisted),
            },
            shutdown_rx_for_custom,
        ))
    });
    let flow_control = match &state.limiter {
        Limiter::Priority(flow_control) => Some([
            tokio::spawn(crate::flowcontrol::controller::run(
                flow_control.clone(),
                crate::controllers::client::Client::of_apiserver(router.clone()),
                (hooks.flow_consumer.clone(), hooks.flow_producer.clone()),
                shutdown_rx_for_flow,
            )),
            tokio::spawn(flow_control.clone().run_borrowing()),
        ]),
        _ => None,
    };
    // The controllers reach the API through the router itself, not the socket:
    // they keep working while the listener drains, and release their lease.
    // The kubernetes Service's endpoints, when pods can reach this server.
    let advertised =
        crate::kinds::master_endpoints::advertised(opts.advertise_address, address.ip())
            .filter(|_| opts.endpoint_reconciler);
    if advertised.is_none()
        && opts.endpoint_reconciler
        && opts.advertise_address.is_none()
        && !address.ip().is_loopback()
    {
        tracing::warn!(
            "no --advertise-address: the kubernetes Service gets no endpoints from this server \
             (kube-apiserver would use the default route's address)"
        );
    }
    let master_endpoints = advertised
        .zip(state.registry.scheme().get("", "v1", "endpoints").cloned())
        .map(|(ip, endpoints)| {
            tokio::spawn(
                crate::kinds::master_endpoints::MasterEndpoints {
                    storage: state.registry.storage().clone(),
                    endpoints,
                    media_type: opts.storage_media_type,
                    ip,
                    port: address.port(),
                    client: crate::controllers::client::Client::of_apiserver(router.clone()),
                }
                .run(shutdown_rx_for_endpoints),
            )
        });
    let mut controllers = tokio::spawn(controllers::run(
        router.clone(),
        controllers,
        shutdown_rx_for_controllers,
    ));
    connections::serve(listener, tls, router, async move {
        shutdown_signal().await;
        tracing::info!("shutting down: finishing in-flight requests");
        let _ = shutdown_tx.send(true);
    })
    .await;
    if tokio::time::timeout(CONTROLLER_STOP, &mut controllers)
        .await
        .is_err()
    {
        controllers.abort();
    }
    if let Some(mut task) = master_endpoints
        && tokio::time::timeout(CONTROLLER_STOP, &mut task)
            .await
            .is_err()
    {
        task.abort();
    }
    if let Some(task) = custom {
        task.abort();
    }
    if let Some(task) = apiservices {
        task.abort();
    }
    if let Some(task) = availability {
        task.abort();
    }
    remote_discovery.abort();
    for task in [identity, identity_gc, service_repair]
        .into_iter()
        .flatten()
    {
        task.abort();
    }
    if let Some(task) = cluster_authentication {
        task.abort();
    }
    for task in flow_control.iter().flatten() {
        task.abort();
    }
    compaction.abort();
    state.registry.stop_caches();
    Ok(())
}

/// Priority and fairness over the two limits' seats, or the limits alone.
/// The aggregator's table, empty until the APIServices are read: Services
/// found through the server's own objects, kapi's front-proxy client
/// certificate presented.
fn remote_apis(
    opts: &ServeOptions,
    certificates: &pki::Certificates,
    registry: &Registry,
    address: SocketAddr,
) -> crate::aggregator::RemoteApis {
    use crate::kinds::apiservice::resolver::{Routing, ServiceResolver};
    let routing = if opts.aggregator_routing {
        Routing::Endpoints
    } else {
        Routing::ClusterIp
    };
    let own = (address.ip().to_string(), address.port());
    let resolver = ServiceResolver::new(Arc::new(registry.clone()), routing, own);
    let client = &certificates.front_proxy.client;
    crate::aggregator::RemoteApis::new(
        Arc::new(resolver),
        Some(crate::tls_client::Identity {
            cert_pem: client.cert_pem.clone(),
            key_pem: client.key_pem.clone(),
        }),
    )
}

fn limiter(limits: Limits, metrics: &Metrics) -> Result<Limiter, ServeError> {
    if !limits.priority_and_fairness {
        return Ok(Limiter::MaxInFlight(MaxInFlight::new(
            limits.read_only as usize,
            limits.mutating as usize,
        )));
    }
    let seats = limits.read_only.saturating_add(limits.mutating);
    if seats == 0 {
        return Err(ServeError::NoSeats);
    }
    Ok(Limiter::Priority(Arc::new(FlowControl::new(
        seats,
        metrics.flow.clone(),
    ))))
}

/// How long stopping controllers (releasing the lease) may delay the exit.
const CONTROLLER_STOP: std::time::Duration = std::time::Duration::from_secs(5);

/// Creates the objects admission relies on that every cluster has (the
/// system PriorityClasses), where they do not exist yet.
pub async fn bootstrap_admission(registry: &Registry) {
    for (resource, body) in crate::admission_plugins::bootstrap_objects() {
        registry.ensure(resource, body).await;
    }
}

/// The controllers `--controllers` selects, built-in and added, the root CA
/// publisher publishing `root_ca` (`--root-ca-file`, else kapi's own CA).
fn controller_options(
    opts: &ServeOptions,
    root_ca: &str,
    added: &[Arc<dyn Controller>],
) -> Result<Vec<Arc<dyn Controller>>, ServeError> {
    let names: Vec<&str> = added.iter().map(|c| c.name()).collect();
    let (enabled, chosen) = builtin_controllers::select_with(&opts.controllers, &names)?;
    let mut controllers = builtin_controllers::controllers(&enabled, root_ca);
    controllers.extend(chosen.into_iter().filter_map(|i| added.get(i).cloned()));
    Ok(controllers)
}

/// Front proxies (the `--requestheader-*` settings), client certificates
/// of the client CAs, `--token-auth-file`'s tokens, the service account
/// tokens of `issuer`, bootstrap tokens when enabled, and
/// `--anonymous-auth`.
fn authenticator(
    opts: &ServeOptions,
    certificates: &pki::Certificates,
    issuer: Arc<Issuer>,
    cluster: &ClusterTrust,
) -> Result<Authenticator, ServeError> {
    use rustls::pki_types::pem::PemObject;
    let mut client_cas = certificates.client_cas.clone();
    if let Some(pem) = &cluster.client_ca {
        client_cas.extend(
            rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes())
                .filter_map(Result::ok),
        );
    }
    let trusted = ClientCertificates::new(&client_cas)?;
    let mut authenticator = Authenticator::default();
    let proxies = match &cluster.request_header {
        Some(from_cluster) => Some(from_cluster.clone()),
        None => published(&opts.tls, certificates).request_header,
    };
    if let Some(proxies) = proxies {
        let cas: Vec<_> =
            rustls::pki_types::CertificateDer::pem_slice_iter(proxies.client_ca.as_bytes())
                .filter_map(Result::ok)
                .collect();
        authenticator =
            authenticator.with_request_header(crate::authn::request_header::RequestHeader {
                trusted: ClientCertificates::new(&cas)?,
                allowed_names: proxies.allowed_names,
                username_headers: proxies.username_headers,
                group_headers: proxies.group_headers,
                extra_headers_prefix: proxies.extra_headers_prefix,
            });
    }
    let mut authenticator = authenticator
        .with_client_certificates(trusted)
        .with_service_accounts(issuer)
        .with_bootstrap_tokens(opts.bootstrap_tokens)
        .with_anonymous(opts.anonymous_auth);
    if let Some(path) = &opts.token_auth_file {
        authenticator = authenticator.with_token_file(TokenFile::read(path)?);
    }
    Ok(authenticator)
}

/// kapi's own token signing key (when no key file replaces it) as
/// `DIR/sa.key`, and its public half as `DIR/sa.pub` (kubeadm's names): what
/// kube-controller-manager's `--service-account-private-key-file` signs
/// legacy token Secrets with, so kapi verifies them without further flags.
async fn write_service_account_key(
    dir: &Path,
    issuer: &Issuer,
    storage: &dyn kapi_storage::Storage,
) -> Result<(), ServeError> {
    let files = issuer
        .stored_key_files(storage)
        .await
        .map_err(|e| std::io::Error::other(e.0.message.unwrap_or_default()))?;
    if let Some((private, public)) = files {
        pki::write_private(&dir.join("sa.key"), private.as_bytes())?;
        std::fs::write(dir.join("sa.pub"), public)?;
    }
    Ok(())
}

/// The `extension-apiserver-authentication` ConfigMap's contents: the
/// client CAs, and the front proxy's CA with the `--requestheader-*`
/// settings (kubeadm's when none is given).
fn published(
    flags: &pki::TlsFlags,
    certificates: &pki::Certificates,
) -> crate::kinds::cluster_authentication::Published {
    use crate::kinds::cluster_authentication::{Published, RequestHeader};
    let client_ca: String = certificates
        .client_cas
        .iter()
        .map(|der| pki::pem("CERTIFICATE", der))
        .collect();
    let lists = [
        &flags.requestheader_allowed_names,
        &flags.requestheader_username_headers,
        &flags.requestheader_group_headers,
        &flags.requestheader_extra_headers_prefix,
    ];
    let request_header = certificates
        .front_proxy
        .requestheader_ca_pem
        .clone()
        .map(|ca| {
            if lists.iter().all(|l| l.is_empty()) {
                RequestHeader::kubeadm(ca)
            } else {
                RequestHeader {
                    client_ca: ca,
                    allowed_names: flags.requestheader_allowed_names.clone(),
                    username_headers: flags.requestheader_username_headers.clone(),
                    group_headers: flags.requestheader_group_headers.clone(),
                    extra_headers_prefix: flags.requestheader_extra_headers_prefix.clone(),
                }
            }
        });
    Published {
        client_ca: (!client_ca.is_empty()).then_some(client_ca),
        request_header,
    }
}

async fn bootstrap_namespaces(registry: &Registry) {
    for name in SYSTEM_NAMESPACES {
        let body = json!({ "metadata": { "name": name } });
        registry.ensure(("", "v1", "namespaces"), body).await;
    }
}

/// Objects kube-apiserver keeps from its first start: the `kubernetes`
/// Service (the range's first address, port 443 to this server's port) and
/// the ConfigMap dating the tracking of legacy service account tokens.
async fn bootstrap_objects(registry: &Registry, ranges: &ServiceRanges, port: u16) {
    let first_ip = ranges.first_ip().to_string();
    let service = json!({"metadata": {"name": "kubernetes", "namespace": "default",
        "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "clusterIP": first_ip,
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}],
            "sessionAffinity": "None"}});
    registry.ensure(("", "v1", "services"), service).await;
    let today = jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
    let tracking = json!({"metadata": {"namespace": "kube-system",
        "name": "kube-apiserver-legacy-service-account-token-tracking"},
        "data": {"since": today}});
    registry.ensure(("", "v1", "configmaps"), tracking).await;
}

/// Writes the kubeconfig `path` pointing kubectl at this server: its https
/// address (loopback when it listens on every address), the CA of its
/// serving certificate (else the system's CAs are trusted) and a client
/// certificate (the admin's for `DIR/kubeconfig`), all inline, so the file
/// works on its own wherever it is copied.
pub fn write_kubeconfig(
    path: &Path,
    address: SocketAddr,
    serving_ca: Option<&str>,
    admin: Option<&pki::Credentials>,
) -> std::io::Result<PathBuf> {
    use base64::Engine;
    let inline = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let path = path.to_path_buf();
    let mut reach = address;
    if address.ip().is_unspecified() {
        reach.set_ip(if address.is_ipv4() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            std::net::Ipv6Addr::LOCALHOST.into()
        });
    }
    let user = match admin {
        Some(admin) => format!(
            "\n    client-certificate-data: {}\n    client-key-data: {}\n",
            inline(&admin.cert_pem),
            inline(&admin.key_pem)
        ),
        None => " {}\n".to_owned(),
    };
    let ca = serving_ca.map_or_else(String::new, |ca| {
        format!("    certificate-authority-data: {}\n", inline(ca))
    });
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kapi\n  cluster:\n    server: https://{reach}\n{ca}\
         contexts:\n- name: kapi\n  context:\n    cluster: kapi\n    user: kapi\n    namespace: default\n\
         current-context: kapi\nusers:\n- name: kapi\n  user:{user}"
    );
    // The admin key is inside: the owner's alone, as the key files.
    pki::write_private(&path, text.as_bytes()).map_err(std::io::Error::other)?;
    // An absolute path, so the printed kubectl command works from anywhere.
    Ok(std::fs::canonicalize(&path).unwrap_or(path))
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
