//! A work queue of keys, as client-go's rate-limited queue: a key is queued
//! once however often it is added, failed keys come back after a growing delay,
//! and keys can be scheduled for later.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::time::{Duration, Instant};

/// The longest delay before a failed key is retried.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(30);

/// Keys waiting to be processed.
#[derive(Debug)]
pub struct WorkQueue<K> {
    ready: VecDeque<K>,
    queued: HashSet<K>,
    delayed: BTreeMap<Instant, Vec<K>>,
    /// When each delayed key is due: a key waits once, for the earliest time
    /// it was asked for (entries of `delayed` at other times are stale).
    waiting: HashMap<K, Instant>,
    failures: HashMap<K, u32>,
}

impl<K> Default for WorkQueue<K> {
    fn default() -> Self {
        WorkQueue {
            ready: VecDeque::new(),
            queued: HashSet::new(),
            delayed: BTreeMap::new(),
            waiting: HashMap::new(),
            failures: HashMap::new(),
        }
    }
}

impl<K: Clone + Eq + Hash> WorkQueue<K> {
    /// Queues `key` now (once).
    pub fn add(&mut self, key: K) {
        if self.queued.insert(key.clone()) {
            self.ready.push_back(key);
        }
    }

    /// Queues `key` after `delay`, unless it is queued already or waits for
    /// an earlier time (client-go's delaying queue).
    pub fn add_after(&mut self, key: K, delay: Duration) {
        if self.queued.contains(&key) {
            return;
        }
        let due = Instant::now() + delay;
        if self.waiting.get(&key).is_some_and(|at| *at <= due) {
            return;
        }
        self.waiting.insert(key.clone(), due);
        self.delayed.entry(due).or_default().push(key);
    }

    /// Queues a key whose processing failed, after 200 ms doubling per failure
    /// up to `MAX_RETRY_DELAY`.
    pub fn retry(&mut self, key: K) {
        let failures = self.failures.entry(key.clone()).or_insert(0);
        let delay = Duration::from_millis(200u64.saturating_mul(1 << (*failures).min(8)));
        *failures = failures.saturating_add(1);
        self.add_after(key, delay.min(MAX_RETRY_DELAY));
    }

    /// The key was processed: its failure count starts over.
    pub fn forget(&mut self, key: &K) {
        self.failures.remove(key);
    }

    /// The next key to process, if one is due.
    pub fn pop(&mut self) -> Option<K> {
        let now = Instant::now();
        while let Some(entry) = self.delayed.first_entry() {
            if *entry.key() > now {
                break;
            }
            let due = *entry.key();
            for key in entry.remove() {
                if self.waiting.get(&key) == Some(&due) {
                    self.waiting.remove(&key);
                    self.add(key);
                }
            }
        }
        let key = self.ready.pop_front()?;
        self.queued.remove(&key);
        Some(key)
    }

    /// When the earliest delayed key is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.delayed.keys().next().copied()
    }

    /// Sleeps until the earliest delayed key is due (forever when none is).
    pub async fn wait_due(&self) {
        match self.next_due() {
            Some(due) => tokio::time::sleep_until(due.into()).await,
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_queued_once_and_delays_wait() {
        let mut queue = WorkQueue::default();
        queue.add("a");
        queue.add("a");
        queue.add_after("b", Duration::from_secs(60));
        assert_eq!(queue.pop(), Some("a"));
        assert_eq!(queue.pop(), None);
        assert!(queue.next_due().is_some());
    }

    #[test]
    fn a_key_waits_once_for_its_earliest_time() {
        let mut queue = WorkQueue::default();
        queue.add_after("a", Duration::from_secs(60));
        queue.add_after("a", Duration::from_secs(60));
        queue.add_after("a", Duration::ZERO);
        queue.add_after("a", Duration::from_secs(60));
        assert_eq!(queue.pop(), Some("a"));
        assert_eq!(queue.pop(), None, "the later entries were merged into it");
        assert_eq!(queue.waiting.len(), 0);
        queue.add("b");
        queue.add_after("b", Duration::ZERO);
        assert_eq!(queue.pop(), Some("b"));
        assert_eq!(queue.pop(), None, "a queued key is not scheduled again");
    }
}
