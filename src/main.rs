//! `kapi`: the API server binary, built with the Kubernetes API's kinds.

use std::process::ExitCode;

use kapi_server::cli::{Binary, main as run};

fn main() -> ExitCode {
    run(Binary {
        name: "kapi",
        version: env!("CARGO_PKG_VERSION"),
        about: env!("CARGO_PKG_DESCRIPTION"),
        install: kapi_api_types::install,
        extend: Binary::NOTHING_ELSE,
    })
}
