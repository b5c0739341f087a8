//! The `kapi` command line (`serve`, `crd`). The binary hands in the kinds it
//! was built with; the rest, and every generic instance the command line
//! needs (the async runtime, the log subscriber, the argument parser), is
//! compiled here. The binary's own crate is then one call, so a rebuild after
//! a kind changes recompiles the API types and a `main` of one line, not the
//! command line as well.

use std::process::ExitCode;

use crate::serve::{ServeArgs, run};
use clap::{Parser, Subcommand};
use kapi_runtime::scheme::Scheme;

/// The binary's name and description (this crate's own would show otherwise).
#[derive(Parser)]
#[command(
    name = "kapi",
    version,
    about = "A Kubernetes-style API server generated from annotated Rust structs"
)]
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

/// Runs the command line with the kinds `install` registers.
pub fn main(install: fn(&mut Scheme)) -> ExitCode {
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
    match runtime.block_on(execute(cli.command, install)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kapi: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn execute(
    command: Command,
    install: fn(&mut Scheme),
) -> Result<(), Box<dyn std::error::Error>> {
    match command {
        Command::Serve(args) => {
            let mut scheme = Scheme::new();
            install(&mut scheme);
            run(scheme, args.options()).await?;
            Ok(())
        }
        Command::Crd { kind } => {
            let mut scheme = Scheme::new();
            install(&mut scheme);
            print_crd(&scheme, &kind)
        }
    }
}

/// Prints `kind`'s CustomResourceDefinition, its notes on stderr.
fn print_crd(scheme: &Scheme, kind: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (yaml, notes) = crate::custom::manifest::crd_yaml(scheme, kind)?;
    for note in notes {
        eprintln!("kapi: {note}");
    }
    print!("{yaml}");
    Ok(())
}
