//! Controllers inside the server, the generic part: an in-process API
//! client ([`client`]), informers ([`informer`]), a work queue ([`queue`]),
//! discovery as client-go reads it ([`discovery`]), and the leader lease
//! ([`leader`]) under which [`run`] runs the [`Controller`]s it is given, as
//! kube-controller-manager runs its controllers beside kube-apiserver.
//! Kubernetes' own controllers are in `crate::builtin_controllers`; a server
//! binary adds its own through `crate::extensions::Extensions::controller`.
//!
//! A controller is an ordinary API client inside the process: every read and
//! write is an HTTP request through the server's own router, so it sees and
//! does exactly what any other client would. Controllers run only while this
//! process holds the leader lease, so replicas sharing one store run them
//! once.

pub mod client;
pub mod discovery;
pub mod informer;
pub mod leader;
pub mod queue;
pub mod resolver;

use std::sync::Arc;

use axum::Router;
use tokio::sync::watch;
use tokio::task::JoinSet;

use client::Client;

/// A controller the server runs: Kubernetes' own ones
/// (`crate::builtin_controllers`) and those a server binary adds
/// (`crate::extensions::Extensions::controller`). It runs while this server
/// holds the controllers' lease, as an ordinary API client of the server
/// itself, and `--controllers` enables or disables it by its name (`*`
/// includes it).
#[async_trait::async_trait]
pub trait Controller: Send + Sync {
    /// Its name, in `--controllers` and in the logs.
    fn name(&self) -> &'static str;

    /// The service account (in `kube-system`) it acts as, as
    /// kube-controller-manager's controllers do with
    /// `--use-service-account-credentials`; `None` acts with the loopback
    /// identity (`system:apiserver`: trusted code in the server's own
    /// process).
    fn service_account(&self) -> Option<&'static str> {
        None
    }

    /// Works until done; its task is stopped when the server stops leading
    /// or shuts down.
    async fn run(&self, client: Client);
}

/// Campaigns for the leader lease and runs `controllers` while leading,
/// until `shutdown` flips to `true`.
pub async fn run(
    router: Router,
    controllers: Vec<Arc<dyn Controller>>,
    shutdown: watch::Receiver<bool>,
) {
    if controllers.is_empty() {
        return;
    }
    // The lease is the server's own (kapi-controller-manager, beside any
    // real kube-controller-manager's), taken with the server's identity;
    // each controller then acts as its own user.
    let elector = leader::Elector::new(Client::of_apiserver(router.clone()), leader::identity());
    let client = Client::new(router);
    elector.run(shutdown, || start(&client, &controllers)).await;
}

fn start(client: &Client, controllers: &[Arc<dyn Controller>]) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    for controller in controllers {
        let client = match controller.service_account() {
            Some(account) => client.as_service_account(account),
            None => client.as_apiserver(),
        };
        let controller = controller.clone();
        let name = controller.name();
        tasks.spawn(async move { controller.run(client).await });
        tracing::info!(controller = name, "started controller");
    }
    tasks
}
