//! `kapi`: the API server binary, built with the Kubernetes API's kinds.

use std::process::ExitCode;

fn main() -> ExitCode {
    kapi_server::cli::main(kapi_api_types::install)
}
