//! One priority level's seats and queues: k8s.io/apiserver's fair queuing
//! (fairqueuing/queueset) in Rust terms.
//!
//! - A request asks for seats (its work estimate). An exempt level counts
//!   them and never waits; a `Reject` level serves a request at once if its
//!   seats are free and refuses it otherwise.
//! - A `Queue` level shuffle-shards each flow onto a hand of its queues (the
//!   flow's hash deals the hand) and puts the request on the hand's queue with
//!   the least waiting work. It is refused only when every seat is taken and
//!   that queue is full.
//! - Seats go to the waiting request with the smallest virtual finish time:
//!   each queue advances in virtual time (R, seat-seconds per active queue) by
//!   the work it was given, so a flow that sends more waits longer, and one
//!   flow's flood cannot starve another's requests.
//! - A request that waits longer than its limit (a quarter of its deadline)
//!   leaves its queue and is refused; one whose client went away leaves too.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::borrowing::{DemandStats, Integrator};

/// The work a request is assumed to take per seat until it finishes
/// (upstream's `estimatedServiceDuration`); corrected to the real time then.
const ESTIMATED_SERVICE: f64 = 0.003;

/// How a level answers requests it cannot serve at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// Never limited.
    Exempt,
    /// Refused when the seats are taken.
    Reject,
    /// Queued: `queues` queues, hands of `hand_size`, at most
    /// `queue_length_limit` requests waiting per queue.
    Queue {
        /// Number of queues.
        queues: usize,
        /// Queues dealt to a flow.
        hand_size: usize,
        /// Requests a queue holds.
        queue_length_limit: usize,
    },
}

/// Why a request was refused (the `reason` label upstream's metrics use).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Its queue was full and every seat taken.
    QueueFull,
    /// A `Reject` level had no free seats.
    ConcurrencyLimit,
    /// It waited longer than its limit (or its client left).
    TimeOut,
}

impl Refusal {
    /// The metric label.
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::QueueFull => "queue-full",
            Refusal::ConcurrencyLimit => "concurrency-limit",
            Refusal::TimeOut => "time-out",
        }
    }
}

/// What one level's counters say, for metrics and the debug dump.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests waiting.
    pub waiting: usize,
    /// Requests executing.
    pub executing: usize,
    /// Seats taken.
    pub seats_in_use: u32,
    /// Requests dispatched since the level began.
    pub dispatched: u64,
    /// Requests refused.
    pub rejected: u64,
    /// Requests that left their queue (timed out or cancelled).
    pub cancelled: u64,
    /// Queues with a request waiting.
    pub active_queues: usize,
}

/// A priority level's queue set.
pub struct QueueSet {
    state: Mutex<State>,
}

struct State {
    shape: Dispatch,
    /// Seats that may be in use at once.
    limit: u32,
    queues: Vec<Queue>,
    /// Bumped when the queues are rebuilt: a permit of an earlier
    /// generation no longer accounts to a queue.
    generation: u64,
    seats_in_use: u32,
    executing: usize,
    waiting: usize,
    /// The seats of the requests waiting, over all queues.
    waiting_seats: u32,
    /// Seats in use plus seats waiting, over time (borrowing's demand).
    demand: Integrator,
    /// The demand over the periods so far.
    stats: DemandStats,
    /// Virtual time, in seat-seconds per active queue.
    r: f64,
    synced: Instant,
    /// Enqueues so far: rotates where the scan of a hand starts.
    enqueues: u64,
    /// The queue dispatched last: the search for the next starts after it.
    robin: usize,
    next_id: u64,
    counts: Counts,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Waiter>,
    /// Virtual time at which this queue's next request starts.
    next_dispatch_r: f64,
    seats_in_use: u32,
    executing: usize,
    /// The work of the requests waiting.
    waiting_work: f64,
    /// The seats of the requests waiting.
    waiting_seats: u32,
}

struct Waiter {
    id: u64,
    seats: u32,
    work: f64,
    arrival_r: f64,
    flow: u64,
    tx: oneshot::Sender<Dispatched>,
}

/// Where a waiting request's seats were taken.
#[derive(Clone, Copy, Debug)]
struct Dispatched {
    queue: usize,
    generation: u64,
    /// When its seats were given: its execution counts from here (a busy
    /// runtime may wake the request later; its queue's virtual time must
    /// still account for the seats from the moment they were taken).
    at: Instant,
}

/// Seats held by a request while it executes; released when dropped.
pub struct Permit {
    set: Arc<QueueSet>,
    /// The queue it came from (`None`: exempt or `Reject`).
    queue: Option<usize>,
    generation: u64,
    seats: u32,
    started: Instant,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let elapsed = self.started.elapsed().as_secs_f64();
        let mut state = self.set.lock();
        state.finish(self.queue, self.generation, self.seats, elapsed);
    }
}

/// A request in a queue; leaving it (dropped) takes it off the queue, or
/// gives back the seats it was given meanwhile.
struct Waiting<'a> {
    set: &'a Arc<QueueSet>,
    id: u64,
    seats: u32,
    rx: Option<oneshot::Receiver<Dispatched>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else { return };
        let mut state = self.set.lock();
        if state.remove(self.id) {
            state.counts.cancelled += 1;
            state.note_demand();
            return;
        }
        // Dispatched after all (under the lock, so the seats are in the
        // channel now): give them back.
        if let Ok(at) = rx.try_recv() {
            state.finish(
                Some(at.queue),
                at.generation,
                self.seats,
                at.at.elapsed().as_secs_f64(),
            );
        }
    }
}

impl QueueSet {
    /// A level of `shape` with `limit` seats.
    pub fn new(shape: Dispatch, limit: u32) -> Arc<QueueSet> {
        let queues = queue_count(&shape);
        Arc::new(QueueSet {
            state: Mutex::new(State {
                queues: (0..queues).map(|_| Queue::default()).collect(),
                shape,
                limit,
                generation: 0,
                seats_in_use: 0,
                executing: 0,
                waiting: 0,
                waiting_seats: 0,
                demand: Integrator::new(Instant::now()),
                stats: DemandStats::default(),
                r: 0.0,
                synced: Instant::now(),
                enqueues: 0,
                robin: 0,
                next_id: 0,
                counts: Counts::default(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a new configuration: requests waiting are dealt onto the new
    /// queues in their order of arrival; those executing keep their seats.
    pub fn reconfigure(&self, shape: Dispatch, limit: u32) {
        let mut state = self.lock();
        state.sync_time();
        state.limit = limit;
        if state.shape != shape {
            let mut waiters: Vec<Waiter> = state
                .queues
                .iter_mut()
                .flat_map(|q| q.waiting.drain(..))
                .collect();
            waiters.sort_by_key(|w| w.id);
            state.queues = (0..queue_count(&shape)).map(|_| Queue::default()).collect();
            state.shape = shape;
            state.generation += 1;
            state.waiting = 0;
            state.waiting_seats = 0;
            state.robin = 0;
            for waiter in waiters {
                // When the level stopped queuing, the request is refused as
                // its wait ends (its sender is dropped here).
                if let Some(queue) = state.choose_queue(waiter.flow) {
                    state.push(queue, waiter);
                }
            }
        }
        state.dispatch();
        state.note_demand();
    }

    /// The seats the level may use now (borrowing moves it).
    pub fn limit(&self) -> u32 {
        self.lock().limit
    }

    /// Lets the level use `limit` seats; requests waiting get any new ones.
    pub fn set_limit(&self, limit: u32) {
        let mut state = self.lock();
        state.sync_time();
        state.limit = limit;
        state.dispatch();
        state.note_demand();
    }

    /// Ends the current demand period, and returns the demand statistics
    /// with it taken in.
    pub fn observe_demand(&self) -> DemandStats {
        let mut state = self.lock();
        state.note_demand();
        let observed = state.demand.reset(Instant::now());
        state.stats.update(observed);
        state.stats
    }

    /// Seats for a request of `seats` seats in `flow` (its hash), waiting at
    /// most `wait`.
    pub async fn acquire(
        self: &Arc<Self>,
        flow: u64,
        seats: u32,
        wait: Duration,
    ) -> Result<Permit, Refusal> {
        let seats = seats.max(1);
        let (id, rx) = {
            let mut state = self.lock();
            state.sync_time();
            match state.shape {
                Dispatch::Exempt => return Ok(self.start(&mut state, None, seats)),
                Dispatch::Reject => {
                    if state.can_accommodate(seats) {
                        return Ok(self.start(&mut state, None, seats));
                    }
                    state.counts.rejected += 1;
                    return Err(Refusal::ConcurrencyLimit);
                }
                Dispatch::Queue {
                    queue_length_limit, ..
                } => {
                    let Some(queue) = state.choose_queue(flow) else {
                        state.counts.rejected += 1;
                        return Err(Refusal::QueueFull);
                    };
                    if state.seats_in_use >= state.limit
                        && state.queues[queue].waiting.len() >= queue_length_limit
                    {
                        state.counts.rejected += 1;
                        return Err(Refusal::QueueFull);
                    }
                    let (tx, rx) = oneshot::channel();
                    let id = state.next_id;
                    state.next_id += 1;
                    let waiter = Waiter {
                        id,
                        seats,
                        work: f64::from(seats) * ESTIMATED_SERVICE,
                        arrival_r: state.r,
                        flow,
                        tx,
                    };
                    state.push(queue, waiter);
                    state.dispatch();
                    state.note_demand();
                    (id, rx)
                }
            }
        };
        let mut waiting = Waiting {
            set: self,
            id,
            seats,
            rx: Some(rx),
        };
        let Some(rx) = waiting.rx.as_mut() else {
            return Err(Refusal::TimeOut);
        };
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(at)) => {
                waiting.rx = None;
                Ok(Permit {
                    set: self.clone(),
                    queue: Some(at.queue),
                    generation: at.generation,
                    seats,
                    started: at.at,
                })
            }
            // Timed out, or the level stopped queuing: `waiting` leaves the
            // queue (or gives back seats that came too late) as it drops.
            Ok(Err(_)) | Err(_) => {
                drop(waiting);
                self.lock().counts.rejected += 1;
                Err(Refusal::TimeOut)
            }
        }
    }

    /// Starts a request that does not queue.
    fn start(self: &Arc<Self>, state: &mut State, queue: Option<usize>, seats: u32) -> Permit {
        state.seats_in_use += seats;
        state.executing += 1;
        state.counts.dispatched += 1;
        state.note_demand();
        Permit {
            set: self.clone(),
            queue,
            generation: state.generation,
            seats,
            started: Instant::now(),
        }
    }

    /// The level's counters now.
    pub fn counts(&self) -> Counts {
        let mut state = self.lock();
        state.sync_time();
        let mut counts = state.counts.clone();
        counts.waiting = state.waiting;
        counts.executing = state.executing;
        counts.seats_in_use = state.seats_in_use;
        counts.active_queues = state
            .queues
            .iter()
            .filter(|q| !q.waiting.is_empty())
            .count();
        counts
    }

    /// Per queue: requests waiting, executing, seats in use, and its next
    /// dispatch in virtual time (the debug dump).
    pub fn queues(&self) -> Vec<(usize, usize, u32, f64)> {
        let state = self.lock();
        state
            .queues
            .iter()
            .map(|q| {
                (
                    q.waiting.len(),
                    q.executing,
                    q.seats_in_use,
                    q.next_dispatch_r,
                )
            })
            .collect()
    }
}

fn queue_count(shape: &Dispatch) -> usize {
    match shape {
        Dispatch::Queue { queues, .. } => *queues,
        _ => 0,
    }
}

impl State {
    /// Advances virtual time: seats requested (capped at the limit) shared
    /// among the queues that have work.
    fn sync_time(&mut self) {
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(self.synced).as_secs_f64();
        self.synced = now;
        let mut active = 0usize;
        let mut requested = 0u64;
        for q in &self.queues {
            if !q.waiting.is_empty() || q.executing > 0 {
                active += 1;
                requested += u64::from(q.seats_in_use) + u64::from(q.waiting_seats);
            }
        }
        if active > 0 {
            let rate = requested.min(u64::from(self.limit)) as f64 / active as f64;
            self.r += elapsed * rate;
        }
    }

    fn can_accommodate(&self, seats: u32) -> bool {
        if self.shape == Dispatch::Exempt {
            return true;
        }
        if seats > self.limit {
            return self.executing == 0;
        }
        self.seats_in_use + seats <= self.limit
    }

    /// The queue of `flow`'s hand with the least waiting work, the scan
    /// starting at a rotating offset.
    fn choose_queue(&mut self, flow: u64) -> Option<usize> {
        let Dispatch::Queue {
            queues, hand_size, ..
        } = self.shape
        else {
            return None;
        };
        let hand = deal(flow, queues, hand_size)?;
        let offset = (self.enqueues % hand.len() as u64) as usize;
        self.enqueues += 1;
        let mut best: Option<usize> = None;
        for i in 0..hand.len() {
            let candidate = hand[(offset + i) % hand.len()];
            let better = match best {
                None => true,
                Some(b) => self.queues[candidate].waiting_work < self.queues[b].waiting_work,
            };
            if better {
                best = Some(candidate);
            }
        }
        best
    }

    fn push(&mut self, queue: usize, waiter: Waiter) {
        let r = self.r;
        let q = &mut self.queues[queue];
        if q.waiting.is_empty() && q.executing == 0 {
            q.next_dispatch_r = r;
        }
        q.waiting_work += waiter.work;
        q.waiting_seats += waiter.seats;
        self.waiting_seats += waiter.seats;
        q.waiting.push_back(waiter);
        self.waiting += 1;
    }

    /// Gives free seats to waiting requests, smallest virtual finish first,
    /// while the next one fits.
    fn dispatch(&mut self) {
        while self.waiting > 0 && self.seats_in_use < self.limit {
            let Some(index) = self.next_queue() else {
                return;
            };
            let q = &mut self.queues[index];
            let Some(seats) = q.waiting.front().map(|w| w.seats) else {
                return;
            };
            if !self.can_accommodate(seats) {
                return;
            }
            let q = &mut self.queues[index];
            let Some(waiter) = q.waiting.pop_front() else {
                return;
            };
            q.waiting_work -= waiter.work;
            q.waiting_seats -= waiter.seats;
            self.waiting_seats = self.waiting_seats.saturating_sub(waiter.seats);
            q.next_dispatch_r += waiter.work;
            if let Some(oldest) = q.waiting.front() {
                q.next_dispatch_r = q.next_dispatch_r.max(oldest.arrival_r);
            }
            self.waiting -= 1;
            self.robin = index;
            let at = Dispatched {
                queue: index,
                generation: self.generation,
                at: Instant::now(),
            };
            if waiter.tx.send(at).is_ok() {
                let q = &mut self.queues[index];
                q.seats_in_use += waiter.seats;
                q.executing += 1;
                self.seats_in_use += waiter.seats;
                self.executing += 1;
                self.counts.dispatched += 1;
            }
            // A receiver already gone (its request left) takes nothing.
        }
    }

    /// The queue whose oldest request finishes first in virtual time,
    /// searching round-robin after the last one served.
    fn next_queue(&self) -> Option<usize> {
        let n = self.queues.len();
        let mut best: Option<(usize, f64)> = None;
        for i in 1..=n {
            let index = (self.robin + i) % n;
            let q = &self.queues[index];
            let Some(oldest) = q.waiting.front() else {
                continue;
            };
            let finish = q.next_dispatch_r + oldest.work;
            if best.is_none_or(|(_, f)| finish < f) {
                best = Some((index, finish));
            }
        }
        best.map(|(index, _)| index)
    }

    /// Takes waiter `id` off its queue; false when it is in none.
    fn remove(&mut self, id: u64) -> bool {
        for q in &mut self.queues {
            if let Some(at) = q.waiting.iter().position(|w| w.id == id) {
                if let Some(waiter) = q.waiting.remove(at) {
                    q.waiting_work -= waiter.work;
                    q.waiting_seats -= waiter.seats;
                    self.waiting_seats = self.waiting_seats.saturating_sub(waiter.seats);
                }
                self.waiting -= 1;
                return true;
            }
        }
        false
    }

    /// A request's seats come back: its queue's virtual time is corrected
    /// from the estimate to the real duration, and waiting requests get the
    /// seats.
    fn finish(&mut self, queue: Option<usize>, generation: u64, seats: u32, elapsed: f64) {
        self.sync_time();
        self.seats_in_use = self.seats_in_use.saturating_sub(seats);
        self.executing = self.executing.saturating_sub(1);
        if let Some(index) = queue
            && generation == self.generation
            && let Some(q) = self.queues.get_mut(index)
        {
            q.seats_in_use = q.seats_in_use.saturating_sub(seats);
            q.executing = q.executing.saturating_sub(1);
            q.next_dispatch_r -= f64::from(seats) * (ESTIMATED_SERVICE - elapsed);
            if let Some(oldest) = q.waiting.front() {
                q.next_dispatch_r = q.next_dispatch_r.max(oldest.arrival_r);
            }
        }
        self.dispatch();
        self.note_demand();
    }

    /// Records the demand as it is now: seats in use plus seats waiting.
    fn note_demand(&mut self) {
        let demand = f64::from(self.seats_in_use) + f64::from(self.waiting_seats);
        self.demand.set(Instant::now(), demand);
    }
}

/// The hand of `hand_size` distinct queues out of `deck` that `hash` deals
/// (upstream's shuffle-sharding dealer); `None` for a configuration it
/// refuses.
pub fn deal(mut hash: u64, deck: usize, hand_size: usize) -> Option<Vec<usize>> {
    if deck == 0 || hand_size == 0 || hand_size > deck || deck > 1 << 26 {
        return None;
    }
    let bits = (deck as f64).log2() * hand_size as f64;
    if bits.ceil() > 60.0 {
        return None;
    }
    let mut picks = Vec::with_capacity(hand_size);
    for i in 0..hand_size {
        let remaining = (deck - i) as u64;
        picks.push((hash % remaining) as usize);
        hash /= remaining;
    }
    let mut hand = Vec::with_capacity(hand_size);
    for i in 0..hand_size {
        let mut card = picks[i];
        for j in (1..=i).rev() {
            if card >= picks[j - 1] {
                card += 1;
            }
        }
        hand.push(card);
    }
    Some(hand)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(queues: usize, hand_size: usize, limit: usize) -> Dispatch {
        Dispatch::Queue {
            queues,
            hand_size,
            queue_length_limit: limit,
        }
    }

    #[test]
    fn hands_are_distinct_queues() {
        for hash in [0u64, 1, 42, u64::MAX, 0x1234_5678_9abc_def0] {
            let hand = deal(hash, 128, 6).unwrap();
            let mut sorted = hand.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 6, "{hand:?}");
            assert!(hand.iter().all(|&q| q < 128));
        }
        assert!(deal(1, 4, 5).is_none());
        assert!(deal(1, 1 << 20, 4).is_none(), "needs more than 60 bits");
    }

    #[tokio::test]
    async fn exempt_never_waits_and_reject_refuses() {
        let exempt = QueueSet::new(Dispatch::Exempt, 0);
        let a = exempt.acquire(1, 3, Duration::ZERO).await.unwrap();
        let b = exempt.acquire(1, 3, Duration::ZERO).await.unwrap();
        assert_eq!(exempt.counts().seats_in_use, 6);
        drop((a, b));
        assert_eq!(exempt.counts().seats_in_use, 0);

        let reject = QueueSet::new(Dispatch::Reject, 2);
        let a = reject.acquire(1, 2, Duration::ZERO).await.unwrap();
        let refused = reject.acquire(2, 1, Duration::ZERO).await;
        assert_eq!(refused.err(), Some(Refusal::ConcurrencyLimit));
        drop(a);
        assert!(reject.acquire(2, 1, Duration::ZERO).await.is_ok());
    }

    #[tokio::test]
    async fn a_full_queue_refuses_and_a_long_wait_times_out() {
        let set = QueueSet::new(queued(1, 1, 1), 1);
        let running = set.acquire(7, 1, Duration::ZERO).await.unwrap();
        let set2 = set.clone();
        let waiting =
            tokio::spawn(async move { set2.acquire(7, 1, Duration::from_millis(200)).await });
        // Let the second request queue.
        for _ in 0..100 {
            if set.counts().waiting == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        assert_eq!(set.counts().waiting, 1);
        let full = set.acquire(7, 1, Duration::from_secs(1)).await;
        assert_eq!(full.err(), Some(Refusal::QueueFull));
        assert_eq!(waiting.await.unwrap().err(), Some(Refusal::TimeOut));
        assert_eq!(set.counts().waiting, 0);
        drop(running);
        let counts = set.counts();
        assert_eq!((counts.executing, counts.seats_in_use), (0, 0));
        assert_eq!(counts.rejected, 2);
    }

    #[tokio::test]
    async fn a_cancelled_wait_leaves_its_queue() {
        let set = QueueSet::new(queued(4, 2, 10), 1);
        let running = set.acquire(1, 1, Duration::ZERO).await.unwrap();
        let set2 = set.clone();
        let waiting =
            tokio::spawn(async move { set2.acquire(2, 1, Duration::from_secs(30)).await });
        for _ in 0..100 {
            if set.counts().waiting == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        waiting.abort();
        let _ = waiting.await;
        assert_eq!(set.counts().waiting, 0);
        drop(running);
        assert_eq!(set.counts().seats_in_use, 0);
    }

    /// Two flows in separate queues share one seat in turns, however many
    /// requests the first has waiting.
    #[tokio::test]
    async fn flows_take_turns() {
        let set = QueueSet::new(queued(64, 1, 100), 1);
        // Flows whose one-queue hands differ.
        let (flood, quiet) = (0u64, 1u64);
        assert_ne!(deal(flood, 64, 1), deal(quiet, 64, 1));
        let running = set.acquire(flood, 1, Duration::ZERO).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for i in 0..20 {
            let (set2, order2) = (set.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let permit = set2
                    .acquire(flood, 1, Duration::from_secs(30))
                    .await
                    .unwrap();
                order2.lock().unwrap().push(format!("flood{i}"));
                tokio::time::sleep(Duration::from_millis(1)).await;
                drop(permit);
            }));
            // Queue them in order.
            while set.counts().waiting < i + 1 {
                tokio::task::yield_now().await;
            }
        }
        let quiet_task = {
            let (set, order) = (set.clone(), order.clone());
            tokio::spawn(async move {
                let permit = set
                    .acquire(quiet, 1, Duration::from_secs(30))
                    .await
                    .unwrap();
                order.lock().unwrap().push("quiet".to_owned());
                drop(permit);
            })
        };
        while set.counts().waiting < 21 {
            tokio::task::yield_now().await;
        }
        drop(running);
        quiet_task.await.unwrap();
        for task in tasks {
            task.await.unwrap();
        }
        let order = order.lock().unwrap();
        let at = order.iter().position(|s| s == "quiet").unwrap();
        assert!(at <= 2, "the quiet flow waited behind the flood: {order:?}");
    }
}
