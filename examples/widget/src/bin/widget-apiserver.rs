//! The widget as an extension API server, the way sample-apiserver extends
//! kube-apiserver: it serves `example.kapi.dev` alone, on its own store, and
//! leaves who the user is and what the user may do to the cluster it is
//! registered with (`--authentication-kubeconfig`,
//! `--authorization-kubeconfig`, and the front proxy's headers checked
//! against the cluster's `extension-apiserver-authentication` ConfigMap).
//! An APIService for `v1.example.kapi.dev` in that cluster sends the
//! group's requests here.

use std::process::ExitCode;

use kapi_runtime::scheme::Scheme;
use kapi_server::cli::{Binary, main as run};

/// The kinds this server serves: the widget's alone.
fn install(scheme: &mut Scheme) {
    kapi_example_widget::install(scheme);
}

fn main() -> ExitCode {
    run(Binary {
        name: "widget-apiserver",
        version: env!("CARGO_PKG_VERSION"),
        about: "Serves the example Widget kind as an extension of a Kubernetes API server",
        install,
        extend: kapi_example_widget::extend,
    })
}
