//! Borrowing between priority levels (KEP-1040's concurrency borrowing, as
//! kube-apiserver 1.32 runs it): every [`PERIOD`] each level's seat demand
//! over the period is summed up, smoothed, and the server's seats are shared
//! out again. A level may lend up to its `lendablePercent` of its nominal
//! seats and borrow up to its `borrowingLimitPercent` (without a limit, up to
//! the server's seats), so a busy level runs on what idle ones do not use.

use std::time::{Duration, Instant};

/// How often the seats are shared out again.
pub const PERIOD: Duration = Duration::from_secs(10);

/// How much of the smoothed demand carries over to the next period (about a
/// five-minute half-life at one period every ten seconds).
const SMOOTHING: f64 = 0.977;

/// The smallest target the allocation works with.
const MIN_TARGET: f64 = 0.001;

/// Slack for sums of floats.
const EPSILON: f64 = 1e-7;

/// The time-weighted moments of a level's seat demand (seats executing plus
/// seats waiting) since the last [`Integrator::reset`].
#[derive(Clone, Debug)]
pub struct Integrator {
    since: Instant,
    last: Instant,
    value: f64,
    /// ∫ value dt and ∫ value² dt, in seconds.
    sum: f64,
    squares: f64,
    max: f64,
}

/// What an [`Integrator`] saw over one period.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observed {
    pub seconds: f64,
    pub average: f64,
    /// NaN when the period was empty.
    pub deviation: f64,
    pub max: f64,
}

impl Integrator {
    pub fn new(now: Instant) -> Integrator {
        Integrator {
            since: now,
            last: now,
            value: 0.0,
            sum: 0.0,
            squares: 0.0,
            max: 0.0,
        }
    }

    /// The demand is `value` from `now` on.
    pub fn set(&mut self, now: Instant, value: f64) {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.sum += self.value * dt;
        self.squares += self.value * self.value * dt;
        self.last = now;
        self.value = value;
        self.max = self.max.max(value);
    }

    /// The period up to `now`; the next one starts with the current value.
    pub fn reset(&mut self, now: Instant) -> Observed {
        self.set(now, self.value);
        let seconds = now.saturating_duration_since(self.since).as_secs_f64();
        let observed = if seconds > 0.0 {
            let average = self.sum / seconds;
            let variance = self.squares / seconds - average * average;
            Observed {
                seconds,
                average,
                deviation: if variance >= 0.0 {
                    variance.sqrt()
                } else {
                    f64::NAN
                },
                max: self.max,
            }
        } else {
            Observed {
                seconds,
                average: f64::NAN,
                deviation: f64::NAN,
                max: self.max,
            }
        };
        let current = self.value;
        *self = Integrator {
            value: current,
            max: current,
            ..Integrator::new(now)
        };
        observed
    }
}

/// A level's demand as the allocation reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DemandStats {
    pub high_watermark: u32,
    pub average: f64,
    pub deviation: f64,
    pub smoothed: f64,
}

impl DemandStats {
    /// Takes one period's observation.
    pub fn update(&mut self, observed: Observed) {
        self.high_watermark = observed.max.round() as u32;
        if observed.seconds <= 0.0 {
            return;
        }
        let deviation = if observed.deviation.is_nan() {
            0.0
        } else {
            observed.deviation
        };
        self.average = observed.average;
        self.deviation = deviation;
        let envelope = observed.average + deviation;
        self.smoothed = envelope.max(SMOOTHING * self.smoothed + (1.0 - SMOOTHING) * envelope);
    }
}

/// One level's place in the allocation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Class {
    pub lower: f64,
    pub upper: f64,
    pub target: f64,
}

/// Shares `required` seats among `classes`: each gets `fair × target`,
/// kept within its bounds, with `fair` chosen so that the shares add up to
/// `required`. Returns the shares and `fair`.
pub fn allocate(required: f64, classes: &[Class]) -> Result<(Vec<f64>, f64), String> {
    if required < 0.0 {
        return Err(format!("negative sum required: {required}"));
    }
    let mut relative = Vec::with_capacity(classes.len());
    let (mut low_sum, mut high_sum, mut target_sum) = (0.0, 0.0, 0.0);
    for (i, class) in classes.iter().enumerate() {
        if class.lower < 0.0 {
            return Err(format!("class {i} has a negative lower bound"));
        }
        if class.target < class.lower {
            return Err(format!("class {i} has a target below its lower bound"));
        }
        if class.upper < class.lower {
            return Err(format!("class {i} has its upper bound below its lower one"));
        }
        let target = class.target.max(MIN_TARGET);
        relative.push((class.lower / target, class.upper / target, target));
        low_sum += class.lower;
        high_sum += class.upper;
        target_sum += target;
    }
    let min_relative_lower = relative.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
    let max_relative_lower = relative.iter().map(|r| r.0).fold(0.0, f64::max);
    let min_relative_upper = relative.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let max_relative_upper = relative.iter().map(|r| r.1).fold(0.0, f64::max);
    if max_relative_lower > 1.0 {
        return Err("a lower bound above its target".to_owned());
    }
    if low_sum - required > EPSILON {
        return Err(format!(
            "the lower bounds add up to {low_sum}, above {required}"
        ));
    }
    if required - high_sum > EPSILON {
        return Err(format!(
            "the upper bounds add up to {high_sum}, below {required}"
        ));
    }
    if required == 0.0 {
        return Ok((vec![0.0; classes.len()], 0.0));
    }
    if low_sum - required > -EPSILON {
        return Ok((
            classes.iter().map(|c| c.lower).collect(),
            min_relative_lower,
        ));
    }
    if required - high_sum > -EPSILON {
        return Ok((
            classes.iter().map(|c| c.upper).collect(),
            max_relative_upper,
        ));
    }
    let fair = required / target_sum;
    if max_relative_lower <= fair && fair <= min_relative_upper {
        return Ok((relative.iter().map(|r| r.2 * fair).collect(), fair));
    }
    // The sum is piecewise linear and rising in `fair`, with a break at each
    // relative bound: find the piece where it reaches `required`.
    let sum_at = |fair: f64| -> f64 {
        classes
            .iter()
            .zip(&relative)
            .map(|(c, r)| (r.2 * fair).clamp(c.lower, c.upper))
            .sum()
    };
    let mut breaks: Vec<f64> = relative.iter().flat_map(|r| [r.0, r.1]).collect();
    breaks.sort_by(f64::total_cmp);
    let mut below = (min_relative_lower, sum_at(min_relative_lower));
    for at in breaks.into_iter().filter(|b| *b > min_relative_lower) {
        let sum = sum_at(at);
        if sum >= required {
            let fair = if sum > below.1 {
                below.0 + (required - below.1) * (at - below.0) / (sum - below.1)
            } else {
                at
            };
            let shares = classes
                .iter()
                .zip(&relative)
                .map(|(c, r)| (r.2 * fair).clamp(c.lower, c.upper))
                .collect();
            return Ok((shares, fair));
        }
        below = (at, sum);
    }
    Err("ran out of bounds".to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn class(lower: f64, upper: f64, target: f64) -> Class {
        Class {
            lower,
            upper,
            target,
        }
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }

    #[test]
    fn shares_follow_targets_within_bounds() {
        // Room for everyone: proportional to the targets.
        let (shares, fair) =
            allocate(100.0, &[class(0.0, 100.0, 10.0), class(0.0, 100.0, 30.0)]).unwrap();
        assert!(close(&shares, &[25.0, 75.0]), "{shares:?}");
        assert!((fair - 2.5).abs() < 1e-9);

        // The second is capped at 50: the first takes the rest.
        let (shares, _) =
            allocate(100.0, &[class(0.0, 100.0, 10.0), class(0.0, 50.0, 30.0)]).unwrap();
        assert!(close(&shares, &[50.0, 50.0]), "{shares:?}");

        // A lower bound holds however small the target.
        let (shares, _) =
            allocate(100.0, &[class(40.0, 100.0, 40.0), class(0.0, 100.0, 60.0)]).unwrap();
        assert!(close(&shares, &[40.0, 60.0]), "{shares:?}");
        let (shares, _) =
            allocate(10.0, &[class(8.0, 100.0, 8.0), class(0.0, 100.0, 100.0)]).unwrap();
        assert!(close(&shares, &[8.0, 2.0]), "{shares:?}");
    }

    #[test]
    fn bounds_that_cannot_meet_the_sum_are_errors() {
        assert!(allocate(10.0, &[class(20.0, 30.0, 20.0)]).is_err());
        assert!(allocate(100.0, &[class(0.0, 30.0, 20.0)]).is_err());
        assert!(allocate(10.0, &[class(5.0, 30.0, 4.0)]).is_err());
        let (shares, _) = allocate(30.0, &[class(0.0, 30.0, 1.0)]).unwrap();
        assert!(close(&shares, &[30.0]));
    }

    #[test]
    fn demand_is_time_weighted() {
        let start = Instant::now();
        let mut demand = Integrator::new(start);
        demand.set(start, 10.0);
        demand.set(start + Duration::from_secs(1), 0.0);
        let observed = demand.reset(start + Duration::from_secs(4));
        assert!((observed.average - 2.5).abs() < 1e-9, "{observed:?}");
        // Var = E[x²] − E[x]² = 25 − 6.25.
        assert!((observed.deviation - 18.75f64.sqrt()).abs() < 1e-9);
        assert_eq!(observed.max, 10.0);
        // The next period starts from the value held now.
        let next = demand.reset(start + Duration::from_secs(5));
        assert_eq!((next.average, next.max), (0.0, 0.0));

        let mut stats = DemandStats::default();
        stats.update(observed);
        assert_eq!(stats.high_watermark, 10);
        assert!((stats.smoothed - (2.5 + 18.75f64.sqrt())).abs() < 1e-9);
        // A quieter period lowers the smoothed demand only slowly.
        stats.update(next);
        assert!(stats.smoothed > 6.5 && stats.smoothed < 6.83, "{stats:?}");
    }

    /// With kube-apiserver's 600 seats, the bootstrap levels start where its
    /// metrics show them; a level with more demand than seats then gets
    /// seats the idle levels lend, and its waiting requests run.
    #[tokio::test]
    async fn a_busy_level_borrows_what_idle_ones_lend() {
        use crate::flowcontrol::FlowControl;
        use crate::flowcontrol::metrics::FlowMetrics;

        let flow_control = FlowControl::new(600, FlowMetrics::register(&mut Default::default()));
        let config = flow_control.config();
        let limits = |names: &[&str]| -> Vec<u32> {
            names
                .iter()
                .map(|name| config.levels[*name].set.limit())
                .collect()
        };
        let names = [
            "catch-all",
            "global-default",
            "leader-election",
            "node-high",
            "system",
            "workload-high",
            "workload-low",
        ];
        // kube-apiserver 1.32's apiserver_flowcontrol_current_limit_seats
        // when idle.
        assert_eq!(limits(&names), vec![30, 56, 58, 170, 117, 114, 56]);

        let busy = config.levels["global-default"].clone();
        let mut held = Vec::new();
        for flow in 0..56u64 {
            held.push(
                busy.set
                    .acquire(flow, 1, Duration::from_secs(5))
                    .await
                    .unwrap(),
            );
        }
        let waiting = futures::future::join_all(
            (0..40u64).map(|flow| busy.set.acquire(1000 + flow, 1, Duration::from_secs(5))),
        );
        let share_out = async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            flow_control.share_out();
        };
        let (waited, ()) = tokio::join!(waiting, share_out);
        assert!(waited.iter().all(Result::is_ok), "the waiting requests ran");
        assert!(busy.set.limit() >= 96, "{}", busy.set.limit());
        for (name, limit) in names.iter().zip(limits(&names)) {
            assert!(limit >= config.levels[*name].min, "{name}: {limit}");
        }
    }
}
