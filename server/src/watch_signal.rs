//! The signal that a watch has sent its initial events (upstream's
//! `WatchInitializationSignal` of k8s.io/apiserver's request package): priority
//! and fairness holds a watch's seats until then, and the one who serves the
//! watch fires it. A leaf, so that the watch's server and the filter need not
//! know each other.

use std::future::Future;

use tokio::sync::oneshot;

tokio::task_local! {
    /// The signal of the watch being served in this task.
    static WATCH_STARTING: std::cell::RefCell<Option<WatchStarted>>;
}

/// Tells priority and fairness that a watch has sent its initial events,
/// so its seats go back (upstream's watch initialization signal); dropping
/// it says the same.
pub struct WatchStarted(oneshot::Sender<()>);

impl WatchStarted {
    /// The initial events are sent.
    pub fn fire(self) {
        let _ = self.0.send(());
    }
}

/// The signal of the watch this request serves, taken by the one who sends
/// its initial events; `None` outside priority and fairness.
pub fn watch_started() -> Option<WatchStarted> {
    WATCH_STARTING
        .try_with(|starting| starting.borrow_mut().take())
        .ok()
        .flatten()
}

/// Runs `serving` with a signal to fire; answers its result and the
/// receiver that learns when the signal fired (or was dropped).
pub async fn serve<T>(serving: impl Future<Output = T>) -> (T, oneshot::Receiver<()>) {
    let (started, initialised) = oneshot::channel();
    let starting = std::cell::RefCell::new(Some(WatchStarted(started)));
    (WATCH_STARTING.scope(starting, serving).await, initialised)
}
