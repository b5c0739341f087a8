//! LIST: the kind's field label conversion (which fields it selects on), a
//! kind served from elsewhere than storage, and the store's list for every
//! other kind.

use super::{Registry, Scope};
use crate::api_error::{ApiError, ApiResult};
use crate::selectors::field::FieldSelector;
use crate::store::{Cached, ListOptions, ListPage};

impl Registry {
    /// Lists objects of a kind, in one namespace or all.
    pub async fn list(&self, scope: Scope<'_>, opts: ListOptions) -> ApiResult<ListPage> {
        check_fields(scope, &opts.fields)?;
        if let Some(rest) = self.hooks.rest(scope.info())
            && let Some(all) = rest.read_all(self.store.backend().as_ref(), scope).await
        {
            // A kind served from elsewhere than storage.
            return Ok(ListPage {
                items: all?.into_iter().map(Cached::new).collect(),
                revision: 0,
                continue_token: None,
                remaining: None,
            });
        }
        self.store.list(scope, opts).await
    }
}

/// Rejects field selectors on fields the kind does not select on, in
/// upstream's words: a kind with fields of its own lists them in its field
/// label conversion (which names `metadata.namespace` only for namespaced
/// kinds); any other kind takes the object meta fields of
/// `DefaultMetaV1FieldSelectorConversion`.
pub fn check_fields(scope: Scope<'_>, fields: &FieldSelector) -> ApiResult<()> {
    let info = scope.served.info;
    let selectable = info.selectable_fields;
    for field in fields.fields() {
        let known = match field {
            "metadata.name" => true,
            "metadata.namespace" => selectable.is_empty() || info.namespaced,
            _ => selectable.contains(&field),
        };
        if known {
            continue;
        }
        return Err(ApiError::bad_request(if selectable.is_empty() {
            format!(
                "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )
        } else {
            format!("field label not supported: {field}")
        }));
    }
    Ok(())
}
