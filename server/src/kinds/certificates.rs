//! CertificateSigningRequests record who asked: the requester's name, uid,
//! groups and extras replace whatever the client put in the spec, as
//! upstream's CSR strategy injects them from the request's user.

use crate::api_error::{ApiError, ApiResult};
use crate::body::Input;
use crate::registry::hooks::KindRest;
use crate::registry::{Object, Scope};
use crate::user::UserInfo;
use serde_json::json;

/// `certificatesigningrequests`.
pub struct CsrRest;

#[async_trait::async_trait]
impl KindRest for CsrRest {
    fn prepare_create_for(
        &self,
        scope: Scope<'_>,
        object: &mut Object,
        user: &UserInfo,
    ) -> ApiResult<()> {
        let mut value = object.to_value().map_err(ApiError::internal)?;
        let spec = &mut value["spec"];
        spec["username"] = json!(user.name);
        spec["uid"] = if user.uid.is_empty() {
            serde_json::Value::Null
        } else {
            json!(user.uid)
        };
        spec["groups"] = json!(user.groups);
        spec["extra"] = if user.extra.is_empty() {
            serde_json::Value::Null
        } else {
            json!(user.extra)
        };
        *object = Input::from_value(scope.entry, value)?.object;
        Ok(())
    }
}
