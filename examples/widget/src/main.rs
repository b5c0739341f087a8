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
    Serve(Box<ServeArgs>),
    /// Print a compiled kind (`example.kapi.dev/Widget`) as a
    /// CustomResourceDefinition manifest (YAML).
    Crd {
        /// The kind, as `group/Kind`.
        kind: String,
    },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    kapi_example_widget::install(&mut scheme);
    match Cli::parse() {
        Cli::Serve(args) => run(scheme, args.options()).await?,
        Cli::Crd { kind } => {
            let (yaml, notes) = kapi_server::custom::manifest::crd_yaml(&scheme, &kind)?;
            for note in notes {
                eprintln!("kapi-example-widget: {note}");
            }
            print!("{yaml}");
        }
    }
    Ok(())
}
