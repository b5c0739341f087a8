//! The built-in controllers, run as `serve` runs them (leader election and
//! all) against routers over real stores, checked with real requests: the
//! `default` service account and `kube-root-ca.crt` in every namespace, the
//! garbage collector's three propagation policies, namespace deletion, an empty
//! `--controllers` selection, and two replicas on one etcd sharing one lease.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{Method, Request};
use kapi_runtime::scheme::Scheme;
use kapi_server::builtin_controllers::{BuiltIn, controllers, select};
use kapi_server::controllers::client::{Client, ClientError, ListParams, Resource};
use kapi_server::controllers::run;
use kapi_server::registry::Registry;
use kapi_server::{App, app};
use kapi_storage::Storage;
use kapi_storage::etcd::{EtcdOptions, EtcdStore};
use kapi_test_support::etcd::{EtcdCluster, etcd_available};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::common::harness;

const WAIT: Duration = Duration::from_secs(30);

fn configmaps() -> Resource {
    Resource::new("", "v1", "configmaps", true)
}
fn serviceaccounts() -> Resource {
    Resource::new("", "v1", "serviceaccounts", true)
}
fn namespaces() -> Resource {
    Resource::new("", "v1", "namespaces", false)
}
fn leases() -> Resource {
    Resource::new("coordination.k8s.io", "v1", "leases", true)
}

/// Polls `check` until it holds or [`WAIT`] passes.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn exists(client: &Client, r: Resource, ns: Option<&str>, name: &str) -> bool {
    match client.get(&r, ns, name).await {
        Ok(_) => true,
        Err(e) if e.is_not_found() => false,
        Err(e) => panic!("GET {name}: {e}"),
    }
}

/// One server's controllers, counting the writes its router receives.
struct Replica {
    client: Client,
    writes: Arc<AtomicUsize>,
    stop: watch::Sender<bool>,
    task: JoinHandle<()>,
    _app: watch::Sender<bool>,
}

impl Replica {
    /// Starts `enabled` on `router` as `serve` does.
    fn start(router: Router, app_shutdown: watch::Sender<bool>, enabled: Vec<BuiltIn>) -> Replica {
        let writes = Arc::new(AtomicUsize::new(0));
        let counter = writes.clone();
        let counted = router.clone().layer(tower::util::MapRequestLayer::new(
            move |request: Request<axum::body::Body>| {
                let lease = request.uri().path().contains("/leases");
                if request.method() != Method::GET && !lease {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
                request
            },
        ));
        let (stop, stopped) = watch::channel(false);
        let root_ca = "-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n";
        let task = tokio::spawn(run(counted, controllers(&enabled, root_ca), stopped));
        Replica {
            client: Client::new(router),
            writes,
            stop,
            task,
            _app: app_shutdown,
        }
    }

    async fn shutdown(self) {
        let _ = self.stop.send(true);
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("controllers stop on shutdown")
            .unwrap();
    }
}

/// A router over a fresh embedded store with `default` and `kube-system`.
async fn embedded() -> (Router, watch::Sender<bool>, crate::common::Harness) {
    let h = harness().await;
    let client = Client::new(h.router.clone());
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}});
    client.create(&namespaces(), None, &ns).await.unwrap();
    let (tx, _) = watch::channel(false);
    (h.router.clone(), tx, h)
}

/// A router over `storage` (a replica of the API server).
fn router_on(storage: Arc<dyn Storage>) -> (Router, watch::Sender<bool>) {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let (tx, rx) = watch::channel(false);
    let router = app(Arc::new(App {
        registry: Registry::new(storage, Arc::new(scheme))
            .with_admission(kapi_server::admission_plugins::builtin())
            .with_hooks(kapi_server::kinds::builtin(
                Default::default(),
                Default::default(),
                Default::default(),
            )),
        shutdown: rx,
        address: "127.0.0.1:0".into(),
        metrics: Default::default(),
        authenticator: Default::default(),
        authorizer: Default::default(),
        limiter: Default::default(),
        auditor: None,
        remote: Default::default(),
        checks: Default::default(),
        openapi: Default::default(),
    }));
    (router, tx)
}

async fn create_namespace(client: &Client, name: &str) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    match client.create(&namespaces(), None, &ns).await {
        Ok(_) => {}
        Err(e) if e.is_conflict() => {}
        Err(e) => panic!("create namespace {name}: {e}"),
    }
}

#[tokio::test]
async fn default_service_account_and_root_ca_are_kept_in_every_namespace() {
    let (router, app, _h) = embedded().await;
    let replica = Replica::start(router, app, BuiltIn::ALL.to_vec());
    let c = replica.client.clone();
    create_namespace(&c, "team-a").await;
    for ns in ["default", "kube-system", "team-a"] {
        eventually("the default service account", || {
            exists(&c, serviceaccounts(), Some(ns), "default")
        })
        .await;
        eventually("kube-root-ca.crt", || {
            exists(&c, configmaps(), Some(ns), "kube-root-ca.crt")
        })
        .await;
    }
    let cm = c
        .get(&configmaps(), Some("team-a"), "kube-root-ca.crt")
        .await
        .unwrap();
    assert!(
        cm["data"]["ca.crt"]
            .as_str()
            .unwrap()
            .contains("BEGIN CERTIFICATE")
    );
    assert!(
        cm["metadata"]["annotations"]["kubernetes.io/description"]
            .as_str()
            .unwrap()
            .starts_with("Contains a CA bundle")
    );

    // Deleted: both come back.
    let options = json!({});
    c.delete(&serviceaccounts(), Some("team-a"), "default", &options)
        .await
        .unwrap();
    c.delete(&configmaps(), Some("team-a"), "kube-root-ca.crt", &options)
        .await
        .unwrap();
    eventually("the service account back", || {
        exists(&c, serviceaccounts(), Some("team-a"), "default")
    })
    .await;
    eventually("the ConfigMap back", || {
        exists(&c, configmaps(), Some("team-a"), "kube-root-ca.crt")
    })
    .await;

    // Changed: the data is put back.
    let patch = json!({"data": {"ca.crt": "changed", "extra": "x"}});
    c.merge_patch(&configmaps(), Some("team-a"), "kube-root-ca.crt", &patch)
        .await
        .unwrap();
    eventually("the ConfigMap repaired", || async {
        let cm = c
            .get(&configmaps(), Some("team-a"), "kube-root-ca.crt")
            .await
            .unwrap();
        cm["data"]
            .as_object()
            .is_some_and(|d| d.len() == 1 && d["ca.crt"] != "changed")
    })
    .await;
    replica.shutdown().await;
}

fn owned_configmap(name: &str, owner: &Value, block: bool) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "blockOwnerDeletion": block,
            }],
        },
    })
}

async fn configmap(c: &Client, name: &str) -> Value {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    c.create(&configmaps(), Some("default"), &cm).await.unwrap()
}

async fn gone(c: &Client, r: &Resource, name: &str) -> bool {
    !exists(c, r.clone(), Some("default"), name).await
}

#[tokio::test]
async fn garbage_collector_follows_the_propagation_policy() {
    let (router, app, _h) = embedded().await;
    let replica = Replica::start(router, app, vec![BuiltIn::GarbageCollector]);
    let c = replica.client.clone();
    let cms = configmaps();

    // Background: dependents of a deleted owner go; a dangling reference is
    // dropped where another owner remains.
    let owner = configmap(&c, "bg-owner").await;
    let other = configmap(&c, "bg-other").await;
    c.create(
        &cms,
        Some("default"),
        &owned_configmap("bg-dep", &owner, false),
    )
    .await
    .unwrap();
    let mut two = owned_configmap("bg-two-owners", &owner, false);
    two["metadata"]["ownerReferences"]
        .as_array_mut()
        .unwrap()
        .push(json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "bg-other", "uid": other["metadata"]["uid"]}));
    c.create(&cms, Some("default"), &two).await.unwrap();
    c.delete(&cms, Some("default"), "bg-owner", &json!({}))
        .await
        .unwrap();
    eventually("the dependent collected", || gone(&c, &cms, "bg-dep")).await;
    eventually("the dangling reference dropped", || async {
        let cm = c.get(&cms, Some("default"), "bg-two-owners").await.unwrap();
        let refs = cm["metadata"]["ownerReferences"].as_array().unwrap();
        refs.len() == 1 && refs[0]["name"] == "bg-other"
    })
    .await;

    // Foreground: the owner stays until its blocking dependent is gone.
    let owner = configmap(&c, "fg-owner").await;
    c.create(
        &cms,
        Some("default"),
        &owned_configmap("fg-dep", &owner, true),
    )
    .await
    .unwrap();
    let deleted = c
        .delete(
            &cms,
            Some("default"),
            "fg-owner",
            &json!({"propagationPolicy": "Foreground"}),
        )
        .await
        .unwrap();
    assert_eq!(
        deleted["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    eventually("the dependent collected first", || gone(&c, &cms, "fg-dep")).await;
    eventually("then the owner", || gone(&c, &cms, "fg-owner")).await;

    // Orphan: the dependent stays, without the reference.
    let owner = configmap(&c, "or-owner").await;
    c.create(
        &cms,
        Some("default"),
        &owned_configmap("or-dep", &owner, true),
    )
    .await
    .unwrap();
    c.delete(
        &cms,
        Some("default"),
        "or-owner",
        &json!({"propagationPolicy": "Orphan"}),
    )
    .await
    .unwrap();
    eventually("the owner removed", || gone(&c, &cms, "or-owner")).await;
    let dep = c.get(&cms, Some("default"), "or-dep").await.unwrap();
    assert!(dep["metadata"]["ownerReferences"].is_null(), "{dep}");

    // Foreground through a cycle of blocking references: both go.
    let a = configmap(&c, "cy-a").await;
    let b = c
        .create(&cms, Some("default"), &owned_configmap("cy-b", &a, true))
        .await
        .unwrap();
    let patch = json!({"metadata": owned_configmap("cy-a", &b, true)["metadata"]});
    c.merge_patch(&cms, Some("default"), "cy-a", &patch)
        .await
        .unwrap();
    c.delete(
        &cms,
        Some("default"),
        "cy-a",
        &json!({"propagationPolicy": "Foreground"}),
    )
    .await
    .unwrap();
    eventually("both ends of the cycle collected", || async {
        gone(&c, &cms, "cy-a").await && gone(&c, &cms, "cy-b").await
    })
    .await;
    replica.shutdown().await;
}

#[tokio::test]
async fn garbage_collector_deletes_the_pods_of_a_replicaset() {
    let (router, app, _h) = embedded().await;
    let replica = Replica::start(router, app, vec![BuiltIn::GarbageCollector]);
    let c = replica.client.clone();
    let replicasets = Resource::new("apps", "v1", "replicasets", true);
    let pods = Resource::new("", "v1", "pods", true);
    let labels = json!({"app": "gc"});
    let rs = json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "gc-rs"},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    });
    let rs = c.create(&replicasets, Some("default"), &rs).await.unwrap();
    for name in ["gc-pod-1", "gc-pod-2"] {
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "labels": labels,
                "ownerReferences": [{
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "gc-rs",
                    "uid": rs["metadata"]["uid"],
                    "controller": true,
                    "blockOwnerDeletion": true,
                }],
            },
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        });
        c.create(&pods, Some("default"), &pod).await.unwrap();
    }
    c.delete(
        &replicasets,
        Some("default"),
        "gc-rs",
        &json!({"propagationPolicy": "Foreground"}),
    )
    .await
    .unwrap();
    eventually("the pods collected", || async {
        let list = c
            .list(&pods, Some("default"), &ListParams::default())
            .await
            .unwrap();
        list["items"].as_array().unwrap().is_empty()
    })
    .await;
    eventually("the ReplicaSet removed", || gone(&c, &replicasets, "gc-rs")).await;
    replica.shutdown().await;
}

/// The namespace controller's whole path: content deleted, conditions written,
/// `kubernetes` finalized away, the namespace deleted again (a finalizer of the
/// test's own first holds the namespace there, so its state can be read); then
/// a plain namespace, removed by the controller alone.
#[tokio::test]
async fn namespace_deletion_empties_finalizes_and_removes() {
    let (router, app, _h) = embedded().await;
    let replica = Replica::start(router, app, vec![BuiltIn::Namespace]);
    let c = replica.client.clone();
    let ns = json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "doomed", "finalizers": ["example.com/hold"]},
    });
    c.create(&namespaces(), None, &ns).await.unwrap();
    for name in ["a", "b"] {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        c.create(&configmaps(), Some("doomed"), &cm).await.unwrap();
    }
    c.delete(&namespaces(), None, "doomed", &json!({}))
        .await
        .unwrap();
    eventually("the namespace emptied and finalized", || async {
        let ns = c.get(&namespaces(), None, "doomed").await.unwrap();
        let left = c
            .list(&configmaps(), Some("doomed"), &ListParams::default())
            .await
            .unwrap();
        left["items"].as_array().unwrap().is_empty()
            && ns["spec"]["finalizers"]
                .as_array()
                .is_none_or(Vec::is_empty)
    })
    .await;
    let ns = c.get(&namespaces(), None, "doomed").await.unwrap();
    assert_eq!(ns["status"]["phase"], "Terminating");
    let conditions = ns["status"]["conditions"].as_array().unwrap();
    let remaining = conditions
        .iter()
        .find(|c| c["type"] == "NamespaceContentRemaining")
        .unwrap();
    assert_eq!(remaining["status"], "False");
    assert_eq!(remaining["reason"], "ContentRemoved");
    assert_eq!(conditions.len(), 5, "{conditions:?}");

    // Our finalizer goes: the namespace is removed.
    let patch = json!({"metadata": {"finalizers": null}});
    c.merge_patch(&namespaces(), None, "doomed", &patch)
        .await
        .unwrap();
    eventually("the namespace removed", || async {
        !exists(&c, namespaces(), None, "doomed").await
    })
    .await;

    // A plain namespace: DELETE marks it Terminating, the controller removes it.
    create_namespace(&c, "plain").await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    c.create(&configmaps(), Some("plain"), &cm).await.unwrap();
    c.delete(&namespaces(), None, "plain", &json!({}))
        .await
        .unwrap();
    eventually("the plain namespace removed", || async {
        !exists(&c, namespaces(), None, "plain").await
    })
    .await;
    let left = c
        .list(&configmaps(), Some("plain"), &ListParams::default())
        .await
        .unwrap();
    assert!(left["items"].as_array().unwrap().is_empty(), "{left}");
    replica.shutdown().await;
}

#[tokio::test]
async fn no_controllers_run_without_a_selection() {
    assert!(select(&["-*".to_owned()]).unwrap().is_empty());
    assert!(select(&[String::new()]).unwrap().is_empty());
    let err = select(&["bogus".to_owned()]).unwrap_err();
    assert!(
        err.to_string()
            .contains("\"bogus\" is not in the list of known controllers")
    );

    let (router, app, _h) = embedded().await;
    let replica = Replica::start(router, app, select(&["-*".to_owned()]).unwrap());
    let c = replica.client.clone();
    create_namespace(&c, "quiet").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!exists(&c, serviceaccounts(), Some("quiet"), "default").await);
    assert!(!exists(&c, leases(), Some("kube-system"), "kapi-controller-manager").await);
    assert_eq!(replica.writes.load(Ordering::SeqCst), 0);
    replica.shutdown().await;
}

async fn lease(c: &Client) -> Result<Value, ClientError> {
    c.get(&leases(), Some("kube-system"), "kapi-controller-manager")
        .await
}

#[tokio::test]
async fn two_replicas_on_one_etcd_hold_one_lease_and_one_acts() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::start(1);
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let store = EtcdStore::connect(EtcdOptions::new(etcd.endpoints().split(',')))
            .await
            .unwrap();
        let (router, app) = router_on(Arc::new(store));
        let c = Client::new(router.clone());
        for ns in ["default", "kube-system"] {
            create_namespace(&c, ns).await;
        }
        replicas.push(Replica::start(router, app, BuiltIn::ALL.to_vec()));
    }
    let c = replicas[0].client.clone();
    eventually("a leader", || async { lease(&c).await.is_ok() }).await;
    create_namespace(&c, "shared").await;
    eventually("the service account", || {
        exists(&c, serviceaccounts(), Some("shared"), "default")
    })
    .await;
    let first = lease(&c).await.unwrap();
    let holder = first["spec"]["holderIdentity"].as_str().unwrap().to_owned();
    assert_eq!(first["spec"]["leaseDurationSeconds"], 15);
    assert!(first["spec"]["renewTime"].as_str().unwrap().contains('.'));
    let writes: Vec<usize> = replicas
        .iter()
        .map(|r| r.writes.load(Ordering::SeqCst))
        .collect();
    assert!(
        writes.iter().filter(|w| **w > 0).count() == 1,
        "exactly one replica writes: {writes:?}"
    );
    let leader = writes.iter().position(|w| *w > 0).unwrap();

    // The lease is renewed, by the same holder.
    eventually("a renewal", || async {
        let now = lease(&c).await.unwrap();
        now["spec"]["renewTime"] != first["spec"]["renewTime"]
    })
    .await;
    assert_eq!(
        lease(&c).await.unwrap()["spec"]["holderIdentity"],
        holder.as_str()
    );

    // The leader stops: the other takes over and acts.
    let follower = replicas.remove(1 - leader);
    replicas.remove(0).shutdown().await;
    eventually("a new holder", || async {
        let now = lease(&follower.client).await.unwrap();
        let h = now["spec"]["holderIdentity"].as_str().unwrap_or_default();
        !h.is_empty() && h != holder
    })
    .await;
    let now = lease(&follower.client).await.unwrap();
    assert_eq!(
        now["spec"]["leaseTransitions"],
        first["spec"]["leaseTransitions"].as_i64().unwrap() + 1
    );
    follower
        .client
        .delete(&serviceaccounts(), Some("shared"), "default", &json!({}))
        .await
        .unwrap();
    eventually("the new leader re-creates the account", || {
        exists(
            &follower.client,
            serviceaccounts(),
            Some("shared"),
            "default",
        )
    })
    .await;
    follower.shutdown().await;
    drop(etcd);
}

/// A leader that finds the lease held by another (fresh) holder steps down and
/// stops its controllers; once that holder lets the lease expire, it takes the
/// lease back (one more transition) and its controllers run again.
#[tokio::test]
async fn a_leader_that_loses_the_lease_stops_until_it_is_back() {
    let (router, app, _h) = embedded().await;
    let replica = Replica::start(router, app, vec![BuiltIn::ServiceAccount]);
    let c = replica.client.clone();
    eventually("the lease taken", || async { lease(&c).await.is_ok() }).await;
    let mine = lease(&c).await.unwrap();
    let transitions = mine["spec"]["leaseTransitions"].as_i64().unwrap();

    let mut stolen = mine.clone();
    stolen["spec"]["holderIdentity"] = json!("someone-else");
    stolen["spec"]["renewTime"] = json!(kapi_runtime::meta::MicroTime::now().to_string());
    c.update(
        &leases(),
        Some("kube-system"),
        "kapi-controller-manager",
        None,
        &stolen,
    )
    .await
    .unwrap();
    // A renewal period and a half: the replica has seen the new holder.
    tokio::time::sleep(Duration::from_secs(3)).await;
    create_namespace(&c, "leaderless").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !exists(&c, serviceaccounts(), Some("leaderless"), "default").await,
        "controllers stopped with the lease"
    );

    // someone-else never renews: after leaseDurationSeconds the lease is back.
    eventually("the lease back", || async {
        let now = lease(&c).await.unwrap();
        now["spec"]["holderIdentity"] == mine["spec"]["holderIdentity"]
    })
    .await;
    let back = lease(&c).await.unwrap();
    assert_eq!(back["spec"]["leaseTransitions"], transitions + 1);
    assert_ne!(back["spec"]["acquireTime"], mine["spec"]["acquireTime"]);
    eventually("the controllers running again", || {
        exists(&c, serviceaccounts(), Some("leaderless"), "default")
    })
    .await;
    replica.shutdown().await;
}
