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
use crate::stored::StorageMediaType;

/// Services' addresses and ports, from the ranges given at start-up.
pub struct ServiceRest {
    allocator: alloc::ServiceAllocator,
}

impl ServiceRest {
    /// Gives Services ClusterIPs and NodePorts from `ranges`, keeping the
    /// bitmaps in `media_type`.
    pub fn new(ranges: ServiceRanges, media_type: StorageMediaType) -> ServiceRest {
        ServiceRest {
            allocator: alloc::ServiceAllocator::new(ranges)
                .with_json(media_type != StorageMediaType::Protobuf),
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

/// Where the bitmaps are kept: dropped when the store moves to the new
/// layout (kapi kept them in another bit order), then rebuilt.
pub const SERVICE_RANGE_KEYS: &[&str] = &[alloc::IPS_KEY, alloc::PORTS_KEY];

/// How often the repair runs (upstream's repairLoopInterval).
const REPAIR_EVERY: std::time::Duration = std::time::Duration::from_secs(180);

/// Upstream's service IP and node port repair controllers: both bitmaps
/// rebuilt from the stored Services, once before the server serves (the
/// `start-service-ip-repair-controllers` hook) and then every three minutes.
pub struct Repair {
    storage: std::sync::Arc<dyn Storage>,
    services: kapi_runtime::scheme::KindEntry,
    allocator: alloc::ServiceAllocator,
    leaks: alloc::Leaks,
}

impl Repair {
    /// A repair of the bitmaps over `ranges` (stored in `media_type`) from
    /// the `services` in `storage`.
    pub fn new(
        storage: std::sync::Arc<dyn Storage>,
        services: kapi_runtime::scheme::KindEntry,
        ranges: ServiceRanges,
        media_type: StorageMediaType,
    ) -> Repair {
        Repair {
            storage,
            services,
            allocator: alloc::ServiceAllocator::new(ranges)
                .with_json(media_type != StorageMediaType::Protobuf),
            leaks: alloc::Leaks::default(),
        }
    }

    /// One run.
    pub async fn run_once(&mut self) -> Result<(), String> {
        let prefix = crate::stored::keys::prefix(self.services.info, None);
        let listed = self
            .storage
            .list(&prefix, kapi_storage::ListOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        let mut services = Vec::with_capacity(listed.items.len());
        for kv in &listed.items {
            // One unreadable Service must not stop the repair of the others.
            let object = match crate::stored::decode_stored(&self.services, kv) {
                Ok(object) => object,
                Err(e) => {
                    tracing::warn!(error = %e, "a stored Service left out of the address repair");
                    continue;
                }
            };
            if let Some(service) = object.downcast_ref::<Service>() {
                services.push(service.clone());
            }
        }
        self.allocator
            .repair(&*self.storage, &services, &mut self.leaks)
            .await
    }

    /// Runs every three minutes until the process ends; every second while
    /// `pending` (the hook of a first run that failed) waits for a success.
    pub async fn run(mut self, mut pending: Option<crate::post_start::Handle>) {
        loop {
            let wait = if pending.is_some() {
                std::time::Duration::from_secs(1)
            } else {
                REPAIR_EVERY
            };
            tokio::time::sleep(wait).await;
            match self.run_once().await {
                Ok(()) => {
                    if let Some(hook) = pending.take() {
                        hook.done();
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "could not repair the service address and port bitmaps");
                }
            }
        }
    }
}
