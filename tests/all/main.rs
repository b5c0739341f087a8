//! End-to-end tests of the `kapi` binary with real clients (kubectl, kube-rs) and a real etcd.
//!
//! One test binary per crate: each integration-test binary links the whole API, so
//! one binary with a module per topic links once instead of once per file.

mod admission_policies;
mod admission_webhooks;
mod aggregation;
mod apply;
mod audit;
mod authentication;
mod autoscaling_versions;
mod conformance;
mod connections;
mod control_plane;
mod controllers;
mod custom_resources;
mod envtest;
mod etcd;
mod etcd_layout;
mod event_versions;
mod generated_fresh;
mod kube_client;
mod kubectl;
mod kubectl_protobuf;
mod node_authorization;
mod openapi;
mod priority_and_fairness;
mod rbac;
mod recorded;
mod restart;
mod scale;
mod server_side_apply;
mod service_account_keys;
mod stand_ins;
mod storage_media_type;
mod verbs;
mod watch_cache;

/// A kube-rs client of `s`, through the kubeconfig it wrote (its CA and
/// admin client certificate). Call it inside a Tokio runtime.
pub fn kube_client(s: &kapi_test_support::Server) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(s.kubeconfig()).expect("kubeconfig");
    let config = futures::executor::block_on(kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    ))
    .expect("kube config");
    kube::Client::try_from(config).expect("kube client")
}
