//! The downstream server: Kubernetes' built-in kinds plus `Widget`, with the same
//! `serve` options as `kapi` (embedded store by default, etcd on request).

use clap::Parser;
use kapi_runtime::scheme::Scheme;
use kapi_server::serve::{ServeArgs, run};

/// Serves Kubernetes' built-in kinds and the example Widget kind.
#[derive(Parser)]
#[command(version, about)]
enum Cli {
    /// Serve the API.
    Serve(ServeArgs),
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let Cli::Serve(args) = Cli::parse();
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    kapi_example_widget::install(&mut scheme);
    run(scheme, args.options()).await?;
    Ok(())
}
