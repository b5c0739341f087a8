//! CertificateSigningRequests record who asked: the requester's name, uid,
//! groups and extras replace whatever the client put in the spec, as
//! upstream's CSR strategy injects them from the request's user.

use kapi_api_types::certificates::v1::CertificateSigningRequest;
use kapi_api_types::certificates::v1::certificatesigningrequest::ExtraValue;

use crate::api_error::{ApiError, ApiResult};
use crate::registry::hooks::KindRest;
use crate::registry::{Object, Scope};
use crate::user::UserInfo;

/// `certificatesigningrequests`.
pub struct CsrRest;

#[async_trait::async_trait]
impl KindRest for CsrRest {
    fn prepare_create_for(
        &self,
        _scope: Scope<'_>,
        object: &mut Object,
        user: &UserInfo,
    ) -> ApiResult<()> {
        let request = object
            .downcast_mut::<CertificateSigningRequest>()
            .ok_or_else(|| ApiError::internal("a CertificateSigningRequest of another type"))?;
        let spec = &mut request.spec;
        spec.username = Some(user.name.clone());
        spec.uid = (!user.uid.is_empty()).then(|| user.uid.clone());
        spec.groups = Some(user.groups.clone());
        spec.extra = (!user.extra.is_empty()).then(|| {
            let extra = user.extra.iter();
            extra
                .map(|(k, v)| (k.clone(), ExtraValue { items: v.clone() }))
                .collect()
        });
        Ok(())
    }
}
