//! List-then-watch ("informer") tasks: each lists a resource, then watches it
//! from the list's resourceVersion, re-watching when a watch ends and listing
//! again when the server says the version is too old (410 Gone). Events go to
//! the controller through a bounded channel, so a slow controller slows the
//! informer instead of growing a queue.

use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::client::{Client, ListParams, Resource};

/// How long one watch request lasts before it is renewed.
const WATCH_SECONDS: u64 = 300;

/// A watch that ends sooner than this was not healthy: wait before the next.
const SHORT_WATCH: Duration = Duration::from_secs(1);

/// What an informer reports, about objects as JSON or as a compiled kind
/// `O` (decoded once, as they come off the wire; one that does not decode
/// is skipped and logged).
#[derive(Debug)]
pub enum Event<O = Value> {
    /// A (re)list: these are all the objects there are now; anything not among
    /// them is gone.
    Listed(Vec<O>),
    /// An object was added or changed.
    Applied(O),
    /// An object was deleted (its last state).
    Deleted(O),
}

/// Exponential backoff between failed attempts: 200 ms doubling to 10 s.
#[derive(Debug, Default)]
pub struct Backoff {
    failures: u32,
}

impl Backoff {
    /// The delay before the next attempt after one more failure.
    pub fn next_delay(&mut self) -> Duration {
        let delay = Duration::from_millis(200u64.saturating_mul(1 << self.failures.min(6)));
        self.failures = self.failures.saturating_add(1);
        delay.min(Duration::from_secs(10))
    }

    /// Sleeps for the next delay.
    pub async fn wait(&mut self) {
        tokio::time::sleep(self.next_delay()).await;
    }

    /// Back to the shortest delay after a success.
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

/// What to inform about: a resource, optionally one namespace, list options.
#[derive(Clone, Debug)]
pub struct Source {
    /// The resource.
    pub resource: Resource,
    /// Only this namespace (all when `None`).
    pub namespace: Option<String>,
    /// Selectors and the metadata-only form.
    pub params: ListParams,
}

impl Source {
    /// Every object of `resource`, whole.
    pub fn all(resource: Resource) -> Source {
        Source {
            resource,
            namespace: None,
            params: ListParams::default(),
        }
    }
}

/// Spawns an informer on `tasks`; its events go to `events` tagged with `tag`.
/// It ends when the receiver is dropped (or with `tasks`, or through the
/// handle returned).
pub fn spawn<T, O>(
    tasks: &mut JoinSet<()>,
    client: Client,
    source: Source,
    tag: T,
    events: mpsc::Sender<(T, Event<O>)>,
) -> tokio::task::AbortHandle
where
    T: Clone + Send + Sync + 'static,
    O: DeserializeOwned + Send + 'static,
{
    tasks.spawn(async move {
        let mut informer = Informer {
            client,
            source,
            tag,
            events,
        };
        informer.run().await;
    })
}

struct Informer<T, O> {
    client: Client,
    source: Source,
    tag: T,
    events: mpsc::Sender<(T, Event<O>)>,
}

/// Why a watch loop stopped.
enum Stop {
    /// The controller is gone.
    Closed,
    /// The resourceVersion is too old: list again.
    Relist,
}

impl<T: Clone + Send + Sync + 'static, O: DeserializeOwned + Send + 'static> Informer<T, O> {
    async fn run(&mut self) {
        let mut backoff = Backoff::default();
        // Lists again after a watch that ended at once wait too: a watch
        // refused right away must not turn into back-to-back lists.
        let mut relists = Backoff::default();
        loop {
            let cycle = Instant::now();
            let namespace = self.source.namespace.as_deref();
            let listed = self
                .client
                .list(&self.source.resource, namespace, &self.source.params)
                .await;
            let mut list = match listed {
                Ok(list) => list,
                Err(e) => {
                    tracing::debug!(resource = %self.source.resource.plural, error = %e, "list failed");
                    backoff.wait().await;
                    continue;
                }
            };
            backoff.reset();
            let version = list["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or("0")
                .to_owned();
            let items = match list.get_mut("items").map(Value::take) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            };
            let items = items.into_iter().filter_map(|o| self.decode(o)).collect();
            if !self.send(Event::Listed(items)).await {
                return;
            }
            match self.watch_from(version).await {
                Stop::Closed => return,
                Stop::Relist if cycle.elapsed() < SHORT_WATCH => relists.wait().await,
                Stop::Relist => relists.reset(),
            }
        }
    }

    /// Watches from `version` until the version expires or the controller ends.
    async fn watch_from(&mut self, mut version: String) -> Stop {
        let mut backoff = Backoff::default();
        loop {
            let started = Instant::now();
            let namespace = self.source.namespace.as_deref();
            let watch = self
                .client
                .watch(
                    &self.source.resource,
                    namespace,
                    &self.source.params,
                    &version,
                    WATCH_SECONDS,
                )
                .await;
            let mut stream = match watch {
                Ok(stream) => stream,
                Err(e) if e.code() == Some(410) => return Stop::Relist,
                Err(e) => {
                    tracing::debug!(resource = %self.source.resource.plural, error = %e, "watch failed");
                    backoff.wait().await;
                    continue;
                }
            };
            while let Some(event) = stream.next().await {
                let event = match event {
                    Ok(event) => event,
                    Err(_) => break,
                };
                if let Some(v) = event.object["metadata"]["resourceVersion"].as_str() {
                    version = v.to_owned();
                }
                let sent = match event.kind.as_str() {
                    "ERROR" => return stop_for(&event.object),
                    kind @ ("ADDED" | "MODIFIED" | "DELETED") => match self.decode(event.object) {
                        Some(object) if kind == "DELETED" => {
                            self.send(Event::Deleted(object)).await
                        }
                        Some(object) => self.send(Event::Applied(object)).await,
                        None => true,
                    },
                    _ => true,
                };
                if !sent {
                    return Stop::Closed;
                }
            }
            if self.events.is_closed() {
                return Stop::Closed;
            }
            if started.elapsed() < SHORT_WATCH {
                backoff.wait().await;
            } else {
                backoff.reset();
            }
        }
    }

    async fn send(&self, event: Event<O>) -> bool {
        self.events.send((self.tag.clone(), event)).await.is_ok()
    }

    /// An object off the wire as `O`.
    fn decode(&self, object: Value) -> Option<O> {
        match serde_json::from_value(object) {
            Ok(object) => Some(object),
            Err(e) => {
                tracing::warn!(resource = %self.source.resource.plural, error = %e, "informer cannot read an object");
                None
            }
        }
    }
}

/// An ERROR event: a 410 asks for a new list; anything else is treated the same
/// way, since the watch cannot go on from where it was.
fn stop_for(status: &Value) -> Stop {
    tracing::debug!(
        code = %status["code"],
        message = %status["message"],
        "watch ended with an error event"
    );
    Stop::Relist
}
