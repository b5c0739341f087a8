//! CREATE: decode -> type and namespace checks -> mutating admission (the
//! namespace must exist and not be terminating) -> generateName ->
//! PrepareForCreate -> defaults and validation -> validating admission ->
//! the kind's own completion (a Service's addresses) -> quota charge ->
//! storage create.

use super::{
    Endpoint, Input, Object, Registry, Scope, WriteOptions, Written, hooks::Taken, strategy,
};
use serde_json::Value;

use crate::admission::{Operation, Request};
use crate::api_error::{ApiError, ApiResult};
use crate::field_manager::Writer;
use crate::user::UserInfo;

impl Registry {
    /// Creates an object from a decoded body.
    pub async fn create(
        &self,
        scope: Scope<'_>,
        input: Input,
        opts: WriteOptions<'_>,
    ) -> ApiResult<Written> {
        let mut warnings = Vec::new();
        strategy::check_field_issues(
            &input,
            opts.field_validation,
            &mut warnings,
            strategy::body_refusal(scope),
        )?;
        let mut object = scope.to_storage(input.object)?;
        if !scope.info().serves("get") {
            return self.answer(scope, object, warnings, opts.user).await;
        }
        // Upstream's decoder defaults the object, and the creator owns what
        // it holds then, defaults included (not what admission adds).
        object.typed_mut().apply_defaults();
        let scheme = self.scheme();
        let writer = Writer::new(scope, Endpoint::Main, &opts);
        self.field_manager(&scheme)
            .update(writer, None, &mut object);
        self.create_object(scope, object, warnings, opts).await
    }

    /// Creates `object` (in the storage version, its managedFields set):
    /// the steps of a create after decoding, also those of an apply that
    /// finds no object.
    pub(super) async fn create_object(
        &self,
        scope: Scope<'_>,
        mut object: Object,
        mut warnings: Vec<String>,
        opts: WriteOptions<'_>,
    ) -> ApiResult<Written> {
        strategy::check_namespace(scope, object.metadata_mut())?;
        if let Some(rest) = self.hooks.rest(scope.info()) {
            rest.authorize_write(self, scope, &object, None, opts.user)
                .await?;
        }
        let request = Request::new(
            Operation::Create,
            Endpoint::Main,
            scope,
            object.metadata(),
            &opts,
        );
        self.admission.judge(&request, self).await?;
        self.admission
            .admit(&request, &mut object, None, self)
            .await?;
        strategy::generate_name(object.metadata_mut());
        strategy::prepare_create(scope, &mut object);
        if let Some(rest) = self.hooks.rest(scope.info()) {
            rest.prepare_create_for(scope, &mut object, opts.user)?;
        }
        strategy::admit(scope, self.hooks.rest(scope.info()), &mut object, None)
            .map_err(|e| e.with_warnings(&warnings))?;
        warnings.extend(object.typed().warnings(None));
        // Errors of the validating plugins give the generated name.
        let request = Request::new(
            Operation::Create,
            Endpoint::Main,
            scope,
            object.metadata(),
            &opts,
        );
        self.admission
            .validate(&request, &object, None, self, &mut warnings)
            .await?;
        let quota = self
            .admission
            .quota(self, scope, &object, opts.dry_run)
            .await?;
        let namespace = object.metadata().namespace.clone();
        let name = object.metadata().name().to_owned();
        let storage = self.store.backend().as_ref();
        let held = match self.hooks.rest(scope.info()) {
            Some(rest) => {
                rest.before_create(storage, scope, &mut object, opts.dry_run)
                    .await?
            }
            None => Taken::nothing(),
        };
        if opts.dry_run {
            let object = scope.to_served(object)?;
            return Ok(Written::new(object, warnings));
        }
        if let Some(charge) = &quota
            && let Err(e) = charge.charge(self).await
        {
            held.release(storage).await;
            return Err(e);
        }
        let at = Scope {
            namespace: namespace.as_deref(),
            ..scope
        };
        let stored = match self.store.create(at, &name, object).await {
            Ok(stored) => stored,
            Err(e) => {
                // A failed create gives back what it took: the quota charge
                // and what the kind took (a Service's addresses).
                if let Some(charge) = &quota {
                    charge.refund(self).await;
                }
                held.release(storage).await;
                return Err(e);
            }
        };
        // The answer is the object stored, with its revision.
        Ok(Written::shared(scope.to_served_cached(&stored)?, warnings))
    }
}

impl Registry {
    /// Creates an object the server itself keeps (a system namespace, the
    /// `kubernetes` Service, a system PriorityClass) unless it exists: one
    /// made before is kept as it is. Failures are logged; start-up goes on.
    pub async fn ensure(&self, (group, version, plural): (&str, &str, &str), body: Value) {
        let Some(entry) = self.scheme().get(group, version, plural).cloned() else {
            return;
        };
        let meta = &body["metadata"];
        let name = meta["name"].as_str().unwrap_or_default().to_owned();
        let namespace = meta["namespace"].as_str().map(str::to_owned);
        let scope = Scope::new(&entry, namespace.as_deref());
        if self.get(scope, &name).await.is_ok() {
            return;
        }
        let created = match Input::from_value(&entry, body) {
            // Upstream's bootstrap controllers create these through the
            // loopback client: kube-apiserver owns them.
            Ok(input) => {
                let opts = WriteOptions {
                    manager: "kube-apiserver",
                    ..WriteOptions::default()
                };
                self.create(scope, input, opts).await
            }
            Err(e) => Err(e),
        };
        let (kind, namespace) = (entry.info.kind, namespace.unwrap_or_default());
        match created {
            Ok(_) => tracing::info!(kind, %namespace, %name, "created"),
            Err(e) if e.code() == 409 => {}
            Err(e) => {
                tracing::warn!(kind, %namespace, %name, error = ?e.0.message, "could not create")
            }
        }
    }
}

impl Registry {
    /// A create of a kind that is never stored (TokenReview,
    /// SubjectAccessReview...): defaulted and validated like any object, then
    /// answered by the kind's hooks for `user`; no name is needed and nothing
    /// is written, as kube-apiserver's review endpoints do.
    async fn answer(
        &self,
        scope: Scope<'_>,
        mut object: Object,
        warnings: Vec<String>,
        user: &UserInfo,
    ) -> ApiResult<Written> {
        strategy::check_namespace(scope, object.metadata_mut())?;
        let errors = object.typed_mut().admit();
        if !errors.is_empty() {
            let info = scope.info();
            return Err(ApiError::invalid(
                info.group,
                info.kind,
                object.metadata().name(),
                &errors,
            ));
        }
        match self.hooks.rest(scope.info()) {
            Some(rest) => rest.answer(self, scope, &mut object, user).await?,
            None => object.typed_mut().answer(),
        }
        let object = scope.to_served(object)?;
        Ok(Written::new(object, warnings))
    }
}
