//! WATCH: the kind's field label conversion, then the store's watch.

use tokio::sync::{mpsc, watch};

use super::list::check_fields;
use super::{Registry, Scope};
use crate::api_error::ApiResult;
use crate::store::{WatchOptions, WatchStart};

impl Registry {
    /// Starts a watch; frames arrive on the returned channel until it closes.
    pub async fn watch(
        &self,
        scope: Scope<'_>,
        opts: WatchOptions,
        shutdown: watch::Receiver<bool>,
    ) -> ApiResult<mpsc::Receiver<WatchStart>> {
        check_fields(scope, &opts.list.fields)?;
        // Priority and fairness keeps the watch's seats until its initial
        // events are on their way.
        let started = crate::watch_signal::watch_started();
        self.store.watch(scope, opts, shutdown, started).await
    }
}
