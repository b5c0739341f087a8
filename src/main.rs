//! `kapi`: the API server binary.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use kapi_runtime::scheme::Scheme;
use kapi_server::serve::{ServeOptions, run};
use kapi_storage::embedded::EmbeddedStore;

/// A Kubernetes-style API server generated from annotated Rust structs.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API on the embedded, persistent store.
    Serve {
        /// Directory of the store and of the kubeconfig written for kubectl.
        #[arg(long, default_value = "./kapi-data")]
        data_dir: PathBuf,
        /// Address to listen on (loopback only until TLS and authentication exist).
        #[arg(long, default_value = "127.0.0.1:6443")]
        listen: SocketAddr,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("kapi: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(execute(cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kapi: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn execute(command: Command) -> Result<(), Box<dyn std::error::Error>> {
    match command {
        Command::Serve { data_dir, listen } => {
            let store = EmbeddedStore::open(&data_dir)?;
            let mut scheme = Scheme::new();
            kapi_api_types::install(&mut scheme);
            run(scheme, Arc::new(store), ServeOptions { listen, data_dir }).await?;
            Ok(())
        }
    }
}
