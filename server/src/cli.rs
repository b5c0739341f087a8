//! The command line of a server binary (`serve`, `crd`): `kapi`'s, and any
//! downstream server's that adds its own kinds. The binary hands in its name,
//! the kinds it was built with and what it adds beside them (admission
//! plugins, kind hooks, controllers: [`Extensions`]); the rest, and every generic instance the
//! command line needs (the async runtime, the log subscriber, the argument
//! parser), is compiled here. The binary's own crate is then one call, so a
//! rebuild after a kind changes recompiles the kinds and a `main` of one
//! call, not the command line as well.
//!
//! An extension API server, the way sample-apiserver extends kube-apiserver,
//! is such a binary that installs its own kinds alone; started with
//! `--authentication-kubeconfig` and `--authorization-kubeconfig`, it asks the
//! cluster it extends who its users are (TokenReview, and the front proxy's
//! trust from the cluster's `extension-apiserver-authentication` ConfigMap)
//! and what they may do (SubjectAccessReview), and the tasks that need
//! Kubernetes' own kinds (RBAC bootstrap, APIService registration, priority
//! and fairness objects) do not start. `examples/widget/src/bin/widget-apiserver.rs`
//! is one:
//!
//! ```no_run
//! use kapi_runtime::scheme::Scheme;
//! use kapi_server::cli::{Binary, main as run};
//!
//! /// The kinds served: this server's own, derived from annotated structs
//! /// (`#[derive(Resource)]`), registered by the crate that defines them.
//! fn install(scheme: &mut Scheme) {
//!     let _ = scheme; // e.g. my_kinds::install(scheme)
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     run(Binary {
//!         name: "my-apiserver",
//!         version: "0.1.0",
//!         about: "Serves my.example.com as an extension of a Kubernetes cluster",
//!         install,
//!         extend: Binary::NOTHING_ELSE,
//!     })
//! }
//! ```
//!
//! Registered in the cluster with an `APIService` naming its Service, it is
//! reached through the cluster's API server (`kapi serve` or kube-apiserver).

use std::process::ExitCode;

use crate::extensions::Extensions;
use crate::serve::{ServeArgs, run_with};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use kapi_runtime::scheme::Scheme;

/// A server binary: what its help says, and the kinds it serves.
#[derive(Clone, Copy, Debug)]
pub struct Binary {
    /// Its name, in its help and messages (`kapi`).
    pub name: &'static str,
    /// Its version (`env!("CARGO_PKG_VERSION")`).
    pub version: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// Registers the kinds it serves.
    pub install: fn(&mut Scheme),
    /// Adds its own admission plugins, kind hooks and controllers beside
    /// Kubernetes' built-in ones ([`Binary::NOTHING_ELSE`] for none).
    pub extend: fn(&mut Extensions),
}

impl Binary {
    /// An `extend` that adds nothing.
    pub const NOTHING_ELSE: fn(&mut Extensions) = |_| {};
}

/// The commands; name, version and description come from [`Binary`].
#[derive(Parser)]
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

/// The name kube-apiserver's command line answers to: the binary invoked
/// under it (a symlink or copy named `kube-apiserver`), or its subcommand.
const KUBE_APISERVER: &str = "kube-apiserver";

/// Runs `binary`'s command line.
pub fn main(binary: Binary) -> ExitCode {
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let invoked_as = argv
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .is_some_and(|name| name == KUBE_APISERVER);
    if invoked_as || argv.get(1).is_some_and(|a| a == KUBE_APISERVER) {
        if !invoked_as {
            argv.remove(0);
        }
        return kube_apiserver(binary, argv);
    }
    init_log("info");
    let command = Cli::command()
        .name(binary.name)
        .version(binary.version)
        .about(binary.about)
        .subcommand(crate::serve::kube_apiserver::command(KUBE_APISERVER));
    let cli = Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    block_on(binary, execute(cli.command, binary))
}

/// Logs to stderr at `level` unless `RUST_LOG` says otherwise.
fn init_log(level: &str) {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level)),
        )
        .with_writer(std::io::stderr)
        .init();
}

/// kube-apiserver's command line (`argv[0]` is the command's name).
fn kube_apiserver(binary: Binary, argv: Vec<std::ffi::OsString>) -> ExitCode {
    use crate::serve::kube_apiserver;
    let command = kube_apiserver::command(KUBE_APISERVER).version(binary.version);
    let matches = command.get_matches_from(argv);
    let args = kube_apiserver::parse(&matches).unwrap_or_else(|e| e.exit());
    init_log(args.log_level());
    for flag in kube_apiserver::ignored_given(&matches) {
        tracing::info!(flag = %format!("--{flag}"), "accepted and ignored");
    }
    let options = match args.options() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::FAILURE;
        }
    };
    block_on(binary, async move {
        let mut scheme = Scheme::new();
        (binary.install)(&mut scheme);
        let mut extensions = Extensions::default();
        (binary.extend)(&mut extensions);
        Ok(run_with(scheme, options, extensions).await?)
    })
}

fn block_on(
    binary: Binary,
    run: impl std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>,
) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("{}: cannot start the async runtime: {e}", binary.name);
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}: {e}", binary.name);
            ExitCode::FAILURE
        }
    }
}

async fn execute(command: Command, binary: Binary) -> Result<(), Box<dyn std::error::Error>> {
    let mut scheme = Scheme::new();
    (binary.install)(&mut scheme);
    match command {
        Command::Serve(args) => {
            let mut extensions = Extensions::default();
            (binary.extend)(&mut extensions);
            Ok(run_with(scheme, args.options(), extensions).await?)
        }
        Command::Crd { kind } => print_crd(&scheme, &kind, binary.name),
    }
}

/// Prints `kind`'s CustomResourceDefinition, its notes on stderr.
fn print_crd(scheme: &Scheme, kind: &str, name: &str) -> Result<(), Box<dyn std::error::Error>> {
    let (yaml, notes) = crate::custom::manifest::crd_yaml(scheme, kind)?;
    for note in notes {
        eprintln!("{name}: {note}");
    }
    print!("{yaml}");
    Ok(())
}
