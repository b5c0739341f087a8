//! The downstream server: Kubernetes' built-in kinds plus `Widget`, with the same
//! commands and `serve` options as `kapi` (embedded store by default, etcd on
//! request).

use std::process::ExitCode;

use kapi_runtime::scheme::Scheme;
use kapi_server::cli::{Binary, main as run};

/// The kinds this server serves: Kubernetes' and the example's.
fn install(scheme: &mut Scheme) {
    kapi_api_types::install(scheme);
    kapi_example_widget::install(scheme);
}

fn main() -> ExitCode {
    run(Binary {
        name: "kapi-example-widget",
        version: env!("CARGO_PKG_VERSION"),
        about: "Serves Kubernetes' built-in kinds and the example Widget kind",
        install,
        extend: kapi_example_widget::extend,
    })
}
