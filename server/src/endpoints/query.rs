//! The query parameters of resource requests (metav1.ListOptions, GetOptions,
//! CreateOptions, DeleteOptions, PatchOptions in URL form).

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::api_error::{ApiError, ApiResult};
use crate::registry::ListOptions;
use crate::selectors::field::FieldSelector;
use crate::selectors::label::LabelSelector;

/// Query parameters; unknown ones are ignored, as Kubernetes does.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Query {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `limit`.
    pub limit: Option<String>,
    /// `continue`.
    #[serde(rename = "continue")]
    pub continue_: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
    /// `watch`.
    pub watch: Option<String>,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: Option<String>,
    /// `sendInitialEvents`.
    pub send_initial_events: Option<String>,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<String>,
    /// `dryRun`.
    pub dry_run: Option<String>,
    /// `fieldValidation`.
    pub field_validation: Option<String>,
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<String>,
    /// `propagationPolicy`.
    pub propagation_policy: Option<String>,
    /// `orphanDependents`.
    pub orphan_dependents: Option<String>,
    /// `includeObject`.
    pub include_object: Option<String>,
}

fn flag(name: &str, value: Option<&str>) -> ApiResult<bool> {
    match value {
        None | Some("") | Some("false") | Some("0") | Some("False") => Ok(false),
        Some("true") | Some("1") | Some("True") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "{name}: invalid boolean value {other:?}"
        ))),
    }
}

fn integer(name: &str, value: Option<&str>) -> ApiResult<Option<i64>> {
    value
        .filter(|v| !v.is_empty())
        .map(|v| {
            v.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("{name}: invalid integer value {v:?}")))
        })
        .transpose()
}

impl Query {
    /// Parses a query string.
    pub fn parse(query: Option<&str>) -> ApiResult<Query> {
        serde_urlencoded::from_str(query.unwrap_or_default())
            .map_err(|e| ApiError::bad_request(format!("invalid query parameters: {e}")))
    }

    /// `watch=true`.
    pub fn watch(&self) -> ApiResult<bool> {
        flag("watch", self.watch.as_deref())
    }

    /// `dryRun=All`.
    pub fn dry_run(&self) -> ApiResult<bool> {
        match self.dry_run.as_deref() {
            None | Some("") => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(ApiError::bad_request(format!(
                "dryRun: Unsupported value: {other:?}: supported values: \"All\""
            ))),
        }
    }

    /// `allowWatchBookmarks`.
    pub fn allow_bookmarks(&self) -> ApiResult<bool> {
        flag("allowWatchBookmarks", self.allow_watch_bookmarks.as_deref())
    }

    /// `sendInitialEvents`.
    pub fn send_initial_events(&self) -> ApiResult<bool> {
        flag("sendInitialEvents", self.send_initial_events.as_deref())
    }

    /// `timeoutSeconds`.
    pub fn timeout(&self) -> ApiResult<Option<Duration>> {
        Ok(integer("timeoutSeconds", self.timeout_seconds.as_deref())?
            .map(|s| Duration::from_secs(s.max(0) as u64)))
    }

    /// `gracePeriodSeconds`.
    pub fn grace_period_seconds(&self) -> ApiResult<Option<i64>> {
        integer("gracePeriodSeconds", self.grace_period_seconds.as_deref())
    }

    /// `orphanDependents`.
    pub fn orphan_dependents(&self) -> ApiResult<Option<bool>> {
        self.orphan_dependents
            .as_deref()
            .map(|v| flag("orphanDependents", Some(v)))
            .transpose()
    }

    /// The list options: parsed selectors, limit, continue, resourceVersion.
    pub fn list_options(&self) -> ApiResult<ListOptions> {
        let labels = match self.label_selector.as_deref() {
            Some(text) => LabelSelector::parse(text).map_err(ApiError::bad_request)?,
            None => LabelSelector::everything(),
        };
        let fields = match self.field_selector.as_deref() {
            Some(text) => FieldSelector::parse(text).map_err(ApiError::bad_request)?,
            None => FieldSelector::everything(),
        };
        let limit = integer("limit", self.limit.as_deref())?.unwrap_or(0);
        Ok(ListOptions {
            labels: Arc::new(labels),
            fields: Arc::new(fields),
            limit: usize::try_from(limit).unwrap_or(0),
            continue_token: self.continue_.clone().filter(|c| !c.is_empty()),
            resource_version: self.resource_version.clone(),
            resource_version_match: self
                .resource_version_match
                .clone()
                .filter(|m| !m.is_empty()),
        })
    }
}
