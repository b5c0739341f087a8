//! The core `services` resource beyond the common strategy: ClusterIPs and
//! NodePorts taken before a Service is stored and given back when it goes
//! (upstream's `pkg/registry/core/service/storage`).

mod alloc;

use async_trait::async_trait;
use kapi_api_types::core::v1::Service;
use kapi_storage::Storage;

pub use alloc::{IpRange, ServiceRanges};

use crate::api_error::{ApiError, ApiResult};
use crate::registry::hooks::{Held, KindRest, Taken};
use crate::registry::{Object, Scope};

/// Services' addresses and ports, from the ranges given at start-up.
pub struct ServiceRest {
    allocator: alloc::ServiceAllocator,
}

impl ServiceRest {
    /// Gives Services ClusterIPs and NodePorts from `ranges`.
    pub fn new(ranges: ServiceRanges) -> ServiceRest {
        ServiceRest {
            allocator: alloc::ServiceAllocator::new(ranges),
        }
    }

    fn taken(&self, held: alloc::Held) -> Taken {
        Taken::of(Release {
            allocator: self.allocator.clone(),
            held,
        })
    }
}

/// Addresses and ports to give back.
struct Release {
    allocator: alloc::ServiceAllocator,
    held: alloc::Held,
}

#[async_trait]
impl Held for Release {
    async fn release(&self, storage: &dyn Storage) {
        self.allocator.release(storage, &self.held).await;
    }
}

/// The Service an object of the hook's kind is.
fn service(object: &Object) -> ApiResult<&Service> {
    object
        .downcast_ref::<Service>()
        .ok_or_else(|| ApiError::internal("a Service of another type"))
}

fn service_mut(object: &mut Object) -> ApiResult<&mut Service> {
    object
        .downcast_mut::<Service>()
        .ok_or_else(|| ApiError::internal("a Service of another type"))
}

#[async_trait]
impl KindRest for ServiceRest {
    async fn before_create(
        &self,
        storage: &dyn Storage,
        _scope: Scope<'_>,
        object: &mut Object,
        dry_run: bool,
    ) -> ApiResult<Taken> {
        let name = object.metadata().name().to_owned();
        let held = self
            .allocator
            .allocate_create(storage, &name, service_mut(object)?, dry_run)
            .await?;
        Ok(self.taken(held))
    }

    async fn before_update(
        &self,
        storage: &dyn Storage,
        _scope: Scope<'_>,
        old: &Object,
        new: &mut Object,
        dry_run: bool,
    ) -> ApiResult<(Taken, Taken)> {
        let name = new.metadata().name().to_owned();
        let (taken, freed) = self
            .allocator
            .allocate_update(storage, &name, service(old)?, service_mut(new)?, dry_run)
            .await?;
        Ok((self.taken(taken), self.taken(freed)))
    }

    async fn after_delete(&self, storage: &dyn Storage, _scope: Scope<'_>, object: &Object) {
        match service(object) {
            Ok(service) => {
                let held = self.allocator.held(service);
                self.allocator.release(storage, &held).await;
            }
            Err(e) => tracing::warn!(error = ?e.0.message, "could not read a deleted service"),
        }
    }
}
