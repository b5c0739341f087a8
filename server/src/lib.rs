//! The thin kapi API server: one request path for every kind in the scheme.
//!
//! A request reads in one pass: [`request_info`] names it, [`endpoints`] has one
//! handler per verb, the [`registry`] applies the kind's strategy and metadata
//! rules, `kapi_storage` keeps the data, and [`api_error`] is the one place where
//! failures become a Kubernetes `Status`.

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod admission;
pub mod admission_plugins;
pub mod api_error;
pub mod app;
pub mod audit;
pub mod authn;
pub mod authz;
pub mod body;
pub mod cache;
pub mod cli;
pub mod controllers;
pub mod custom;
pub mod discovery;
pub mod endpoints;
pub mod field_manager;
pub mod filters;
pub mod flowcontrol;
pub mod go_duration;
pub mod health;
pub mod jsonpath;
pub mod kinds;
pub mod loopback;
pub mod memory;
pub mod metrics;
pub mod names;
pub mod negotiation;
pub mod openapi;
pub mod options;
pub mod pki;
pub mod protobuf;
pub mod registry;
pub mod request_info;
pub mod scope;
pub mod selectors;
pub mod serve;
pub mod state;
pub mod store;
pub mod stored;
pub mod strategic_merge;
pub mod table;
pub mod user;
pub mod watch_signal;

pub use app::app;
pub use state::App;
