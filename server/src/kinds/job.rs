//! Jobs beyond the common strategy: batch/v1 orphans a Job's pods by default,
//! and kube-apiserver's job storage warns about it on delete.

use kapi_runtime::ResourceInfo;
use kapi_runtime::meta::DeleteOptions;

use crate::registry::hooks::KindRest;

/// The `batch` `jobs` resource.
pub struct JobRest;

impl KindRest for JobRest {
    /// A delete naming no propagation policy leaves the pods behind (in a
    /// version that orphans by default): say so.
    fn delete_warning(&self, info: &ResourceInfo, options: &DeleteOptions) -> Option<&'static str> {
        let orphans = info.orphan_dependents
            && options.propagation_policy.is_none()
            && options.orphan_dependents.is_none();
        orphans.then_some(
            "child pods are preserved by default when jobs are deleted; \
             set propagationPolicy=Background to remove them or set \
             propagationPolicy=Orphan to suppress this warning",
        )
    }
}
