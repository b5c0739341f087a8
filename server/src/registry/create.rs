//! CREATE: decode -> type and namespace checks -> generateName -> PrepareForCreate
//! -> admit -> namespace must exist -> storage create.

use serde_json::Value;

use super::{Object, Registry, Scope, WriteOptions, Written, decode, keys, strategy};
use crate::api_error::{ApiError, ApiResult};

impl Registry {
    /// Creates an object from a decoded body.
    pub async fn create(
        &self,
        scope: Scope<'_>,
        body: Value,
        opts: WriteOptions,
    ) -> ApiResult<Written> {
        let mut object = Object::from_value(body).map_err(ApiError::bad_request)?;
        strategy::check_type(scope, &mut object)?;
        strategy::check_namespace(scope, &mut object.metadata)?;
        strategy::generate_name(&mut object.metadata);
        strategy::prepare_create(scope, &mut object);
        let mut warnings = Vec::new();
        let object = strategy::admit(scope, object, opts.field_validation, &mut warnings)?;
        let namespace = object.metadata.namespace.clone();
        if let Some(ns) = namespace.as_deref() {
            self.require_namespace(ns).await?;
        }
        if opts.dry_run {
            return Ok(Written { object, warnings });
        }
        let name = object.metadata.name().to_owned();
        let key = keys::object(scope.info(), namespace.as_deref(), &name);
        let bytes = self
            .media_type
            .encode(scope.entry, &object)
            .map_err(ApiError::internal)?;
        let kv = self
            .storage
            .create(&key, bytes)
            .await
            .map_err(|e| ApiError::from_storage(e, scope.target(&name)))?;
        Ok(Written {
            object: decode(scope.entry, &kv)?,
            warnings,
        })
    }
}
