//! The checks of pkg/apis/core/validation for the core kinds other than pods
//! (those are in `pod/validation.rs`): what the field rules cannot say.

mod cluster;
mod config;
mod controller;
mod endpoints;
mod event;
mod ip_sloppy;
mod limits;
mod quota;
pub(crate) mod resource_names;
mod service;
mod service_warnings;
mod volume;
mod volume_sources;
mod volume_update;
mod warnings;

pub(crate) use cluster::{
    validate_namespace, validate_node, validate_node_update, validate_pvc, validate_pvc_spec,
    validate_pvc_update,
};
pub(crate) use config::{
    validate_config_map, validate_config_map_update, validate_secret, validate_secret_update,
};
pub(crate) use controller::validate_rc_spec;
pub(crate) use endpoints::validate_endpoint_subset;
pub(crate) use event::{validate_core_event, validate_events_v1};
pub(crate) use ip_sloppy::{parse_ip_sloppy, sloppy_cidr};
pub(crate) use limits::validate_limit_range_spec;
pub(crate) use quota::{validate_quota_spec, validate_quota_status, validate_quota_update};
pub(crate) use service::{validate_service_spec, validate_service_update};
pub(crate) use service_warnings::service_warnings;
pub(crate) use volume::validate_pv;
pub(crate) use volume_update::validate_pv_update;
pub(crate) use warnings::{
    claim_spec_warnings, node_warnings, pv_warnings, pvc_warnings, secret_warnings,
};
