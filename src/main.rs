//! `kapi`: the API server binary.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kapi_runtime::scheme::Scheme;
use kapi_server::serve::{ServeArgs, run};

/// A Kubernetes-style API server generated from annotated Rust structs.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API: on the embedded, persistent store by default, on etcd with
    /// `--etcd-servers`.
    Serve(Box<ServeArgs>),
    /// Print a compiled kind as a CustomResourceDefinition manifest (YAML).
    Crd {
        /// The kind, as `group/Kind` (`core/Kind` or `Kind` for the core group).
        kind: String,
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
        Command::Serve(args) => {
            let mut scheme = Scheme::new();
            kapi_api_types::install(&mut scheme);
            run(scheme, args.options()).await?;
            Ok(())
        }
        Command::Crd { kind } => {
            let mut scheme = Scheme::new();
            kapi_api_types::install(&mut scheme);
            print_crd(&scheme, &kind)
        }
    }
}

/// Prints `kind`'s CustomResourceDefinition, its notes on stderr.
fn print_crd(scheme: &Scheme, kind: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (yaml, notes) = kapi_server::custom::manifest::crd_yaml(scheme, kind)?;
    for note in notes {
        eprintln!("kapi: {note}");
    }
    print!("{yaml}");
    Ok(())
}
