//! What this server adds beside its kinds, through kapi's extension points
//! (`kapi_server::extensions::Extensions`): an admission plugin, a kind hook
//! and a controller for widgets. Each works on the typed `Widget`, as
//! Kubernetes' built-in ones work on the typed `Pod`.

use async_trait::async_trait;
use kapi_runtime::validation::{FieldErrors, FieldPath};
use kapi_server::admission::{Operation, Plugin, Request, View};
use kapi_server::api_error::ApiResult;
use kapi_server::body::Object;
use kapi_server::controllers::Controller;
use kapi_server::controllers::client::typed;
use kapi_server::controllers::client::{Client, Resource};
use kapi_server::controllers::informer::{self, Event, Source};
use kapi_server::extensions::Extensions;
use kapi_server::loopback::Loopback;
use kapi_server::registry::hooks::KindRest;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::Widget;

/// Adds the widget plugin, hook and controller.
pub fn extend(extensions: &mut Extensions) {
    extensions
        .admission_plugin(LargeWidgetsNeedAFactory)
        .kind_hook::<Widget>(FactoryIsFixed)
        .controller(WidgetPhase);
}

/// The size from which a widget needs a factory.
pub const LARGE: i64 = 10;

/// An admission plugin: a widget of more than [`LARGE`] parts names the
/// factory that makes it, else the write is refused with a 403, the way a
/// validating plugin of kube-apiserver refuses.
pub struct LargeWidgetsNeedAFactory;

#[async_trait]
impl Plugin for LargeWidgetsNeedAFactory {
    fn name(&self) -> &'static str {
        "LargeWidgetsNeedAFactory"
    }

    fn validates(&self, request: &Request<'_>) -> bool {
        request.is_kind::<Widget>() && request.operation != Operation::Delete
    }

    async fn validate(
        &self,
        request: &Request<'_>,
        object: &View<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
        _warnings: &mut Vec<String>,
    ) -> ApiResult<()> {
        let Some(widget) = object.downcast_ref::<Widget>() else {
            return Ok(());
        };
        let size = widget.spec.size.unwrap_or(1);
        if size > LARGE
            && widget
                .spec
                .factory
                .as_deref()
                .unwrap_or_default()
                .is_empty()
        {
            return Err(request.attrs.forbidden(&format!(
                "a widget of more than {LARGE} parts needs a factory (spec.factory)"
            )));
        }
        Ok(())
    }
}

/// A kind hook: once a widget names its factory, the factory stays (a 422
/// `field is immutable` on `spec.factory`, as Kubernetes words immutable
/// fields).
pub struct FactoryIsFixed;

#[async_trait]
impl KindRest for FactoryIsFixed {
    fn validate(&self, object: &Object, old: Option<&Object>, errs: &mut FieldErrors) {
        let (Some(new), Some(old)) = (
            object.downcast_ref::<Widget>(),
            old.and_then(|o| o.downcast_ref::<Widget>()),
        ) else {
            return;
        };
        if old.spec.factory.is_some() && new.spec.factory != old.spec.factory {
            errs.invalid(
                FieldPath::new("spec").child("factory"),
                new.spec.factory.as_deref().unwrap_or_default(),
                "field is immutable",
            );
        }
    }
}

/// A controller: a widget with a factory is `Built`, one without is
/// `Pending`; the phase is written through `/status` whenever it differs.
pub struct WidgetPhase;

#[async_trait]
impl Controller for WidgetPhase {
    fn name(&self) -> &'static str {
        "widget-phase-controller"
    }

    async fn run(&self, client: Client) {
        let widgets = Resource::of::<Widget>();
        let (tx, mut events) = mpsc::channel(64);
        let mut tasks = JoinSet::new();
        informer::spawn(
            &mut tasks,
            client.clone(),
            Source::all(widgets.clone()),
            (),
            tx,
        );
        while let Some(((), event)) = events.recv().await {
            let changed = match event {
                Event::Listed(all) => all,
                Event::Applied(one) => vec![one],
                Event::Deleted(_) => continue,
            };
            for widget in changed {
                set_phase(&client, &widgets, &widget).await;
            }
        }
    }
}

/// Writes the phase `widget` should have, when it has another.
async fn set_phase(client: &Client, widgets: &Resource, widget: &Value) {
    let Ok(typed) = typed::decode::<Widget>(widget.clone()) else {
        return;
    };
    let has_factory = typed.spec.factory.as_deref().is_some_and(|f| !f.is_empty());
    let phase = if has_factory { "Built" } else { "Pending" };
    let current = typed.status.as_ref().and_then(|s| s.phase.as_deref());
    if current == Some(phase) {
        return;
    }
    let (namespace, name) = (typed.metadata.namespace.as_deref(), typed.metadata.name());
    let patch = json!({ "status": { "phase": phase } });
    // A widget deleted or changed meanwhile is seen again by the informer.
    if let Err(e) = client
        .merge_patch_status(widgets, namespace, name, &patch)
        .await
    {
        eprintln!("widget-phase-controller: cannot set the phase of {name}: {e:?}");
    }
}
