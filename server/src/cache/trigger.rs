//! Watchers whose field selector pins an indexed field to one value (a
//! kubelet's `spec.nodeName=<node>`) listen on a channel of that value: an
//! event goes to the channels of its object's values before and after the
//! change, not to every watcher to filter (upstream's cacher triggers).
//! Without that, each pod event would wake every kubelet's watch.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::broadcast;

use super::cached::Event;
use super::index::value;
use crate::selectors::field::FieldSelector;

/// Events a triggered watcher may fall behind before it is closed: it sees
/// only its value's events (upstream gives such watchers 10).
const TRIGGERED_BUFFER: usize = 64;

/// Channels kept at least before a sweep of unused ones.
const SWEEP_AT: usize = 64;

/// The channels of triggered watchers, by indexed field and value.
pub struct Triggers {
    fields: &'static [&'static str],
    /// Per field (in `fields`' order), the channel of each value watched.
    channels: Vec<HashMap<Arc<str>, broadcast::Sender<Arc<Event>>>>,
    /// How many channels may exist before those nobody listens on are
    /// dropped (a channel is also dropped at its value's next event).
    sweep_at: usize,
}

impl Triggers {
    /// No watcher yet of `fields` (the kind's indexed fields).
    pub fn new(fields: &'static [&'static str]) -> Triggers {
        Triggers {
            fields,
            channels: fields.iter().map(|_| HashMap::new()).collect(),
            sweep_at: SWEEP_AT,
        }
    }

    /// A receiver of the events of the objects holding (or that held) the
    /// value `fields` pins an indexed field to; `None` when it pins none.
    pub fn subscribe(&mut self, fields: &FieldSelector) -> Option<broadcast::Receiver<Arc<Event>>> {
        let (at, value) = self
            .fields
            .iter()
            .enumerate()
            .find_map(|(at, field)| Some((at, fields.exact_value(field)?)))?;
        let channels = &mut self.channels[at];
        if let Some(channel) = channels.get(value) {
            return Some(channel.subscribe());
        }
        if channels.len() >= self.sweep_at {
            channels.retain(|_, channel| channel.receiver_count() > 0);
            self.sweep_at = (channels.len() * 2).max(SWEEP_AT);
        }
        let (channel, receiver) = broadcast::channel(TRIGGERED_BUFFER);
        channels.insert(Arc::from(value), channel);
        Some(receiver)
    }

    /// Sends `event` to the watchers of its object's values before and
    /// after the change.
    pub fn send(&mut self, event: &Arc<Event>) {
        for (field, channels) in self.fields.iter().zip(&mut self.channels) {
            if channels.is_empty() {
                continue;
            }
            let now = value(&*event.object, field);
            let before = event.prev.as_ref().map(|p| value(&**p, field));
            let moved = before.filter(|before| *before != now);
            for value in std::iter::once(now).chain(moved) {
                let Some(channel) = channels.get(value.as_str()) else {
                    continue;
                };
                if channel.send(event.clone()).is_err() {
                    // Nobody listens any more.
                    channels.remove(value.as_str());
                }
            }
        }
    }

    /// Ends every triggered watch (the cache lists again; they resume).
    pub fn clear(&mut self) {
        self.channels.iter_mut().for_each(HashMap::clear);
    }
}
