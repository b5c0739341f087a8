//! `widget-server`: the built-in kinds plus `Widget`, on the embedded store.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use kapi_runtime::scheme::Scheme;
use kapi_server::serve::{ServeOptions, run};
use kapi_storage::embedded::EmbeddedStore;

/// Serves Kubernetes' built-in kinds and the example Widget kind.
#[derive(Parser)]
#[command(version, about)]
enum Cli {
    /// Serve on the embedded store.
    Serve {
        /// Directory of the store and the kubeconfig.
        #[arg(long, default_value = "./widget-data")]
        data_dir: PathBuf,
        /// Loopback address to listen on.
        #[arg(long, default_value = "127.0.0.1:6443")]
        listen: SocketAddr,
    },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let Cli::Serve { data_dir, listen } = Cli::parse();
    let store = EmbeddedStore::open(&data_dir)?;
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    kapi_example_widget::install(&mut scheme);
    run(scheme, Arc::new(store), ServeOptions { listen, data_dir }).await?;
    Ok(())
}
