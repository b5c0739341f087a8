//! The core `services` resource beyond the common strategy: ClusterIPs and
//! NodePorts taken before a Service is stored and given back when it goes
//! (upstream's `pkg/registry/core/service/storage`).

mod alloc;

use async_trait::async_trait;
use kapi_storage::Storage;

pub use alloc::{IpRange, ServiceRanges};

use crate::api_error::{ApiError, ApiResult};
use crate::registry::hooks::{Held, KindRest, Taken};
use crate::registry::{Input, Object, Scope};

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

#[async_trait]
impl KindRest for ServiceRest {
    async fn before_create(
        &self,
        storage: &dyn Storage,
        scope: Scope<'_>,
        object: &mut Object,
        dry_run: bool,
    ) -> ApiResult<Taken> {
        let name = object.metadata().name().to_owned();
        let mut value = object.to_value().map_err(ApiError::internal)?;
        let held = self
            .allocator
            .allocate_create(storage, &name, &mut value, dry_run)
            .await?;
        match Input::from_value(scope.entry, value) {
            Ok(input) => {
                *object = input.object;
                Ok(self.taken(held))
            }
            Err(e) => {
                self.allocator.release(storage, &held).await;
                Err(e)
            }
        }
    }

    async fn before_update(
        &self,
        storage: &dyn Storage,
        scope: Scope<'_>,
        old: &Object,
        new: &mut Object,
        dry_run: bool,
    ) -> ApiResult<(Taken, Taken)> {
        let name = new.metadata().name().to_owned();
        let old = old.to_value().map_err(ApiError::internal)?;
        let mut value = new.to_value().map_err(ApiError::internal)?;
        let (taken, freed) = self
            .allocator
            .allocate_update(storage, &name, &old, &mut value, dry_run)
            .await?;
        match Input::from_value(scope.entry, value) {
            Ok(input) => {
                *new = input.object;
                Ok((self.taken(taken), self.taken(freed)))
            }
            Err(e) => {
                // What this attempt took goes back (nothing, for a dry run).
                self.allocator.release(storage, &taken).await;
                Err(e)
            }
        }
    }

    async fn after_delete(&self, storage: &dyn Storage, _scope: Scope<'_>, object: &Object) {
        match object.to_value() {
            Ok(value) => {
                let held = self.allocator.held(&value);
                self.allocator.release(storage, &held).await;
            }
            Err(e) => tracing::warn!(error = %e, "could not read a deleted service"),
        }
    }
}
