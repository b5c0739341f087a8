//! The query parameters of resource requests (metav1.ListOptions, GetOptions,
//! CreateOptions, DeleteOptions, PatchOptions in URL form).

use std::sync::Arc;
use std::time::Duration;

use kapi_runtime::validation::{FieldErrors, FieldPath};

use crate::api_error::{ApiError, ApiResult};
use crate::registry::ListOptions;
pub use crate::request_info::Query;
use crate::selectors::field::FieldSelector;
use crate::selectors::label::LabelSelector;

/// A boolean parameter as metav1's query conversion reads it: absent, `0` and
/// `false` (any case) are false; anything else, even an empty value, is true.
fn flag(value: Option<&str>) -> bool {
    value.is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// An integer parameter; a value that does not parse is a 400 in Go's words.
fn integer(value: Option<&str>) -> ApiResult<Option<i64>> {
    value
        .map(|v| {
            v.parse::<i64>().map_err(|e| {
                let why = match e.kind() {
                    std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                        "value out of range"
                    }
                    _ => "invalid syntax",
                };
                ApiError::bad_request(format!("strconv.ParseInt: parsing {v:?}: {why}"))
            })
        })
        .transpose()
}

impl Query {
    /// `watch=true`.
    pub fn watch(&self) -> ApiResult<bool> {
        Ok(flag(self.watch.as_deref()))
    }

    /// `force=true`.
    pub fn force(&self) -> bool {
        flag(self.force.as_deref())
    }

    /// `dryRun=All`.
    pub fn dry_run(&self) -> ApiResult<bool> {
        match self.dry_run.as_slice() {
            [] => Ok(false),
            [only] if only.is_empty() => Ok(false),
            // Each value of the list must be `All`: `dryRun=&dryRun=All`
            // is refused, never taken for a real write.
            values => match values.iter().find(|v| *v != "All") {
                Some(other) => Err(ApiError::bad_request(format!(
                    "dryRun: Unsupported value: {other:?}: supported values: \"All\""
                ))),
                None => Ok(true),
            },
        }
    }

    /// `allowWatchBookmarks`.
    pub fn allow_bookmarks(&self) -> ApiResult<bool> {
        Ok(flag(self.allow_watch_bookmarks.as_deref()))
    }

    /// `sendInitialEvents`, `None` when not given.
    pub fn send_initial_events(&self) -> ApiResult<Option<bool>> {
        Ok(self.send_initial_events.as_deref().map(|v| flag(Some(v))))
    }

    /// `timeoutSeconds`.
    pub fn timeout(&self) -> ApiResult<Option<Duration>> {
        Ok(integer(self.timeout_seconds.as_deref())?.map(|s| Duration::from_secs(s.max(0) as u64)))
    }

    /// `gracePeriodSeconds`.
    pub fn grace_period_seconds(&self) -> ApiResult<Option<i64>> {
        integer(self.grace_period_seconds.as_deref())
    }

    /// `orphanDependents`.
    pub fn orphan_dependents(&self) -> ApiResult<Option<bool>> {
        Ok(self.orphan_dependents.as_deref().map(|v| flag(Some(v))))
    }

    /// The list options of a list, watch (`watch`) or deletecollection:
    /// decoded first (a parameter that does not parse is a 400), then checked
    /// as upstream's `ValidateListOptions` checks them (a 422).
    pub fn checked_list_options(&self, watch: bool) -> ApiResult<ListOptions> {
        let options = self.list_options()?;
        self.timeout()?;
        self.validate_list(watch)?;
        Ok(options)
    }

    /// Checks the list options of a list, watch or deletecollection as
    /// upstream's `ValidateListOptions` does: a 422 `ListOptions` Status.
    fn validate_list(&self, watch: bool) -> ApiResult<()> {
        let mut errors = FieldErrors::default();
        let rv = self.resource_version.as_deref().unwrap_or_default();
        let matching = self.resource_version_match.as_deref().unwrap_or_default();
        let continues = self
            .continue_token
            .as_deref()
            .is_some_and(|c| !c.is_empty());
        let initial_events = self.send_initial_events.is_some();
        let path = || FieldPath::root().child("resourceVersionMatch");
        if watch {
            if initial_events && matching != "NotOlderThan" {
                errors.forbidden(
                    path(),
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                );
            }
            if !matching.is_empty() {
                if !initial_events {
                    errors.forbidden(
                        path(),
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    );
                }
                if matching != "NotOlderThan" {
                    errors.not_supported(path(), matching, &["NotOlderThan"]);
                }
                if continues {
                    errors.forbidden(
                        path(),
                        "resourceVersionMatch is forbidden when continue is provided",
                    );
                }
            }
        } else {
            if !matching.is_empty() {
                if rv.is_empty() {
                    errors.forbidden(
                        path(),
                        "resourceVersionMatch is forbidden unless resourceVersion is provided",
                    );
                }
                if continues {
                    errors.forbidden(
                        path(),
                        "resourceVersionMatch is forbidden when continue is provided",
                    );
                }
                if matching != "Exact" && matching != "NotOlderThan" {
                    errors.not_supported(path(), matching, &["Exact", "NotOlderThan", ""]);
                }
                if matching == "Exact" && rv == "0" {
                    errors.forbidden(
                        path(),
                        "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                    );
                }
            }
            if initial_events {
                errors.forbidden(
                    FieldPath::root().child("sendInitialEvents"),
                    "sendInitialEvents is forbidden for list",
                );
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", &errors))
        }
    }

    /// The request's `timeout`: `None` when absent or empty; a value that is no
    /// Go duration is a 400 in upstream's words.
    pub fn request_timeout(&self) -> ApiResult<Option<Duration>> {
        crate::go_duration::request_timeout(self.timeout.as_deref())
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
        let limit = integer(self.limit.as_deref())?.unwrap_or(0);
        Ok(ListOptions {
            labels: Arc::new(labels),
            fields: Arc::new(fields),
            limit: usize::try_from(limit).unwrap_or(0),
            continue_token: self.continue_token.clone().filter(|c| !c.is_empty()),
            resource_version: self.resource_version.clone(),
            resource_version_match: self
                .resource_version_match
                .clone()
                .filter(|m| !m.is_empty()),
        })
    }
}
