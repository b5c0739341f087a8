//! What a server binary adds to the generic server beside its kinds:
//! admission plugins, kind hooks and controllers, handed to
//! [`crate::cli::Binary::extend`] (or to `crate::serve::run_with`). Kubernetes'
//! built-in plugins, hooks and controllers come first; the added ones join
//! them:
//!
//! - an admission plugin runs after the built-in ones (before the quota
//!   stage), in the order added;
//! - a kind's hooks ([`KindRest`]) are the registry's fixed points for that
//!   kind, replacing built-in ones for the same resource;
//! - a controller runs beside the built-in ones while the server leads, and
//!   `--controllers` names it like them.
//!
//! ```ignore
//! fn extend(extensions: &mut Extensions) {
//!     extensions
//!         .admission_plugin(WidgetSizeLimit)
//!         .kind_hook::<Widget>(WidgetRest)
//!         .controller(WidgetStatus);
//! }
//! ```

use std::sync::Arc;

use kapi_runtime::Resource;

use crate::admission::Plugin;
use crate::controllers::Controller;
use crate::registry::Hooks;
use crate::registry::hooks::{Action, KindRest};

/// The additions, collected by the binary's `extend` function.
#[derive(Default)]
pub struct Extensions {
    pub(crate) admission: Vec<Box<dyn Plugin>>,
    pub(crate) hooks: Hooks,
    pub(crate) controllers: Vec<Arc<dyn Controller>>,
}

impl Extensions {
    /// Runs `plugin` on every write, after Kubernetes' built-in plugins.
    pub fn admission_plugin(&mut self, plugin: impl Plugin + 'static) -> &mut Self {
        self.admission.push(Box::new(plugin));
        self
    }

    /// Calls `rest` at the registry's fixed points for the kind `K` (all its
    /// served versions: the hooks are found by group and resource).
    pub fn kind_hook<K: Resource>(&mut self, rest: impl KindRest + 'static) -> &mut Self {
        let info = K::INFO;
        self.hooks = std::mem::take(&mut self.hooks).with_rest((info.group, info.plural), rest);
        self
    }

    /// Answers POSTs to `subresource` of the kind `K`'s objects with
    /// `action` (an empty `subresource`: every create of the resource).
    pub fn action<K: Resource>(
        &mut self,
        subresource: &'static str,
        action: impl Action + 'static,
    ) -> &mut Self {
        let info = K::INFO;
        self.hooks = std::mem::take(&mut self.hooks)
            .with_action((info.group, info.plural, subresource), Arc::new(action));
        self
    }

    /// Runs `controller` beside the built-in controllers.
    pub fn controller(&mut self, controller: impl Controller + 'static) -> &mut Self {
        self.controllers.push(Arc::new(controller));
        self
    }
}
