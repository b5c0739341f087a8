//! Amounts of resources as LimitRanger and ResourceQuota count them: a
//! container's or a whole pod's requests and limits, and the checks of one
//! LimitRange item.

use std::collections::BTreeMap;

use kapi_api_types::core::v1::limitrange::LimitRangeItem;
use kapi_api_types::core::v1::pod::container::ResourceRequirements;
use kapi_api_types::core::v1::pod::spec::PodSpec;
use kapi_runtime::quantity::{canonical, nano_value};

use super::Resources;

/// A quantity as its text and its value in thousandths (rounded up, as Go's
/// `MilliValue`).
#[derive(Clone, Debug)]
pub(in crate::admission_plugins) struct Amount {
    pub(in crate::admission_plugins) text: String,
    pub(in crate::admission_plugins) milli: i128,
}

impl Amount {
    /// The amount of a quantity's text; none when it is no quantity.
    pub(in crate::admission_plugins) fn of_text(text: &str) -> Option<Amount> {
        let nano = nano_value(text)?;
        Some(Amount {
            text: canonical(text).unwrap_or_else(|| text.to_owned()),
            milli: nano.div_euclid(1_000_000) + i128::from(nano.rem_euclid(1_000_000) != 0),
        })
    }

    /// The sum or maximum of amounts, written as Go writes the result (in
    /// the first amount's family of suffixes).
    pub(in crate::admission_plugins) fn from_milli(milli: i128, binary: bool) -> Amount {
        let text = if binary && milli % 1_024_000 == 0 {
            canonical(&format!("{}Ki", milli / 1_024_000))
        } else if milli % 1000 == 0 {
            canonical(&(milli / 1000).to_string())
        } else {
            canonical(&format!("{milli}m"))
        };
        Amount {
            text: text.unwrap_or_default(),
            milli,
        }
    }
}

/// The requests and limits of a container or pod.
pub(in crate::admission_plugins) struct Usage {
    pub(in crate::admission_plugins) requests: BTreeMap<String, Amount>,
    pub(in crate::admission_plugins) limits: BTreeMap<String, Amount>,
}

/// The amounts of a resource list.
fn amounts(list: Option<&Resources>) -> BTreeMap<String, Amount> {
    list.into_iter()
        .flatten()
        .filter_map(|(name, value)| Some((name.clone(), Amount::of_text(&value.0)?)))
        .collect()
}

/// The amounts of a resource list's JSON form.
impl Usage {
    /// The usage of a container (or of a claim, which has no limits).
    pub(super) fn of(requests: Option<&Resources>, limits: Option<&Resources>) -> Usage {
        Usage {
            requests: amounts(requests),
            limits: amounts(limits),
        }
    }

    /// The usage of a pod given as its spec's JSON form (see
    /// [`Usage::of_pod`]).
    pub(in crate::admission_plugins) fn of_pod(spec: &PodSpec) -> Usage {
        let of = |resources: &ResourceRequirements| {
            Usage::of(resources.requests.as_ref(), resources.limits.as_ref())
        };
        let containers: Vec<Usage> = spec.containers.iter().map(|c| of(&c.resources)).collect();
        let init: Vec<(bool, Usage)> = (spec.init_containers.iter().flatten())
            .map(|c| {
                (
                    c.restart_policy.as_deref() == Some("Always"),
                    of(&c.resources),
                )
            })
            .collect();
        Usage::add_up(&containers, &init)
    }

    /// The usage of a pod's containers and init containers (whether each
    /// is a sidecar, and its usage).
    fn add_up(containers: &[Usage], init: &[(bool, Usage)]) -> Usage {
        let total = |which: fn(&Usage) -> &BTreeMap<String, Amount>| {
            let mut sum: BTreeMap<String, (i128, bool)> = BTreeMap::new();
            for container in containers {
                add(&mut sum, which(container));
            }
            let mut sidecars = BTreeMap::new();
            let mut init_peak = BTreeMap::new();
            for (sidecar, container) in init {
                let own = which(container);
                let needs = if *sidecar {
                    add(&mut sum, own);
                    add(&mut sidecars, own);
                    sidecars.clone()
                } else {
                    let mut needs = BTreeMap::new();
                    add(&mut needs, own);
                    for (name, (milli, binary)) in &sidecars {
                        let entry = needs.entry(name.clone()).or_insert((0, *binary));
                        entry.0 += milli;
                    }
                    needs
                };
                for (name, (milli, binary)) in needs {
                    let entry = init_peak.entry(name).or_insert((milli, binary));
                    entry.0 = entry.0.max(milli);
                }
            }
            for (name, (milli, binary)) in init_peak {
                let entry = sum.entry(name).or_insert((milli, binary));
                entry.0 = entry.0.max(milli);
            }
            sum.into_iter()
                .map(|(name, (milli, binary))| (name, Amount::from_milli(milli, binary)))
                .collect()
        };
        Usage {
            requests: total(|u| &u.requests),
            limits: total(|u| &u.limits),
        }
    }

    /// The container or pod checks of one LimitRange item.
    pub(super) fn check(&self, kind: &str, item: &LimitRangeItem, errors: &mut Vec<String>) {
        for (name, min) in amounts(item.min.as_ref()) {
            match (self.requests.get(&name), self.limits.get(&name)) {
                (None, _) => errors.push(format!(
                    "minimum {name} usage per {kind} is {}.  No request is specified",
                    min.text
                )),
                (Some(request), _) if request.milli < min.milli => errors.push(format!(
                    "minimum {name} usage per {kind} is {}, but request is {}",
                    min.text, request.text
                )),
                (_, Some(limit)) if limit.milli < min.milli => errors.push(format!(
                    "minimum {name} usage per {kind} is {}, but limit is {}",
                    min.text, limit.text
                )),
                _ => {}
            }
        }
        for (name, max) in amounts(item.max.as_ref()) {
            match (self.requests.get(&name), self.limits.get(&name)) {
                (_, None) => errors.push(format!(
                    "maximum {name} usage per {kind} is {}.  No limit is specified",
                    max.text
                )),
                (_, Some(limit)) if limit.milli > max.milli => errors.push(format!(
                    "maximum {name} usage per {kind} is {}, but limit is {}",
                    max.text, limit.text
                )),
                (Some(request), _) if request.milli > max.milli => errors.push(format!(
                    "maximum {name} usage per {kind} is {}, but request is {}",
                    max.text, request.text
                )),
                _ => {}
            }
        }
        for (name, ratio) in amounts(item.max_limit_request_ratio.as_ref()) {
            let request = self.requests.get(&name).filter(|r| r.milli != 0);
            let limit = self.limits.get(&name).filter(|l| l.milli != 0);
            match (request, limit) {
                (None, _) => errors.push(format!(
                    "{name} max limit to request ratio per {kind} is {}, but no request is specified or request is 0",
                    ratio.text
                )),
                (_, None) => errors.push(format!(
                    "{name} max limit to request ratio per {kind} is {}, but no limit is specified or limit is 0",
                    ratio.text
                )),
                (Some(request), Some(limit)) => {
                    let observed = limit.milli as f64 / request.milli as f64;
                    if observed * 1000.0 > ratio.milli as f64 {
                        errors.push(format!(
                            "{name} max limit to request ratio per {kind} is {}, but provided ratio is {observed:.6}",
                            ratio.text
                        ));
                    }
                }
            }
        }
    }

    /// The claim checks of one LimitRange item: its requests against the
    /// minimum and maximum.
    pub(super) fn check_claim(&self, kind: &str, item: &LimitRangeItem, errors: &mut Vec<String>) {
        for (name, min) in amounts(item.min.as_ref()) {
            match self.requests.get(&name) {
                None => errors.push(format!(
                    "minimum {name} usage per {kind} is {}.  No request is specified",
                    min.text
                )),
                Some(request) if request.milli < min.milli => errors.push(format!(
                    "minimum {name} usage per {kind} is {}, but request is {}",
                    min.text, request.text
                )),
                _ => {}
            }
        }
        for (name, max) in amounts(item.max.as_ref()) {
            match self.requests.get(&name) {
                None => errors.push(format!(
                    "maximum {name} usage per {kind} is {}.  No request is specified",
                    max.text
                )),
                Some(request) if request.milli > max.milli => errors.push(format!(
                    "maximum {name} usage per {kind} is {}, but request is {}",
                    max.text, request.text
                )),
                _ => {}
            }
        }
    }
}

/// Adds amounts to a running total (thousandths, and whether the first
/// amount of each resource was binary).
fn add(total: &mut BTreeMap<String, (i128, bool)>, amounts: &BTreeMap<String, Amount>) {
    for (name, amount) in amounts {
        let binary = amount.text.ends_with('i');
        let entry = total.entry(name.clone()).or_insert((0, binary));
        entry.0 += amount.milli;
    }
}
