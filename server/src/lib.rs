//! The kapi API server: one request path for every kind in the scheme.
//!
//! A request reads in one pass: the first of the [`filters`] parses it once
//! into a [`request_info::RequestInfo`], [`endpoints`] has one handler per
//! verb, the [`registry`] applies the kind's strategy, hooks and [`admission`]
//! chain, the [`store`] (the watch cache as a storage layer, over [`cache`]
//! and [`stored`]) keeps the data in front of
//! `kapi_storage`, and [`api_error`] is the one place where failures become a
//! Kubernetes `Status`.
//!
//! The modules form layers; each imports only the ones below it (a test,
//! `tests/all/layers.rs`, keeps it so):
//!
//! - **values**: [`user`], [`request_info`], [`options`], [`recorder`], [`api_error`],
//!   [`selectors`], [`body`], [`names`], [`go_duration`], [`loopback`] (the
//!   server's client to itself), [`watch_signal`], [`pki`], [`webhook_client`]
//!   (calls to webhooks), [`post_start`] (what the server does once it
//!   serves, as health checks), [`tls_client`] (a client of another HTTPS
//!   server), [`kubeconfig`] (another cluster to ask), and the wire forms ([`negotiation`], [`protobuf`], [`table`], [`strategic_merge`]);
//! - **storage**: [`stored`] (keys and codec), [`cache`] (the watch cache),
//!   [`store`] (`CachedStore`: get, list, watch and an update's reads, from the
//!   cache or the backend);
//! - **registry**: [`admission`] (the generic chain), [`field_manager`],
//!   [`registry`] (strategies and kind hooks), [`custom`] (kinds defined at
//!   run time), [`controllers`] (the in-process client, informers, the work
//!   queue, the leader lease, and the runner of controllers);
//! - **filters**: [`authn`], [`authz`] (the authorizer chain), [`audit`],
//!   [`flowcontrol`] and [`filters`] (each filter with its own state);
//! - **Kubernetes' built-in behaviour**, on typed kinds: [`admission_plugins`],
//!   [`kinds`] (the kinds' hooks), [`authorizers`] (Node and RBAC, with the
//!   bootstrap policy) and [`builtin_controllers`], which the generic layers
//!   never name;
//! - **server**: [`aggregator`] (group versions other servers serve),
//!   [`endpoints`], [`discovery`], [`openapi`], [`health`], [`metrics`], [`state`], [`app`](mod@app), [`serve`], [`extensions`] and [`cli`].

#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod admission;
pub mod admission_plugins;
pub mod aggregator;
pub mod api_error;
pub mod app;
pub mod audit;
pub mod authn;
pub mod authorizers;
pub mod authz;
pub mod body;
pub mod builtin_controllers;
pub mod cache;
pub mod cli;
pub mod controllers;
pub mod custom;
pub mod discovery;
pub mod endpoints;
pub mod extensions;
pub mod field_manager;
pub mod filters;
pub mod flowcontrol;
pub mod go_duration;
pub mod health;
pub mod jsonpath;
pub mod kinds;
pub mod kubeconfig;
pub mod loopback;
pub mod memory;
pub mod metrics;
pub mod names;
pub mod negotiation;
pub mod openapi;
pub mod options;
pub mod pki;
pub mod post_start;
pub mod protobuf;
pub mod recorder;
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
pub mod tls_client;
pub mod user;
pub mod watch_signal;
pub mod webhook_client;

pub use app::app;
pub use state::App;
