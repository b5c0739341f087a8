//! The quality of service class of a pod (k8s.io/kubernetes/pkg/apis/core/helper/qos).

use std::collections::BTreeMap;

use kapi_runtime::Quantity;

use super::container::ResourceRequirements;
use super::spec::PodSpec;

/// Only CPU and memory decide the class.
const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// `Guaranteed` when every container limits CPU and memory and requests exactly
/// its limits, `BestEffort` when nothing requests or limits either, `Burstable`
/// otherwise. Pod-level resources, when set, replace the containers'.
pub fn class(spec: &PodSpec) -> &'static str {
    let pod_level = spec.resources.iter();
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    let all: Vec<&ResourceRequirements> = if spec.resources.is_some() {
        pod_level.collect()
    } else {
        containers.map(|c| &c.resources).collect()
    };
    let mut any_set = false;
    let mut guaranteed = !all.is_empty();
    for resources in all {
        let requests = nonzero(resources.requests.as_ref());
        let limits = nonzero(resources.limits.as_ref());
        any_set |= !requests.is_empty() || !limits.is_empty();
        let full_limits = QOS_RESOURCES.iter().all(|r| limits.contains_key(r));
        let requests_match = requests.iter().all(|(r, q)| limits.get(r) == Some(q));
        guaranteed &= full_limits && requests_match;
    }
    match (any_set, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// The CPU and memory amounts of a resource list that are not zero, as numbers.
fn nonzero(list: Option<&BTreeMap<String, Quantity>>) -> BTreeMap<&'static str, f64> {
    let mut out = BTreeMap::new();
    for name in QOS_RESOURCES {
        if let Some(value) = list.and_then(|l| l.get(name)).and_then(|q| value(&q.0))
            && value != 0.0
        {
            out.insert(name, value);
        }
    }
    out
}

/// The numeric value of a quantity such as `500m`, `1Gi` or `2e3`.
fn value(text: &str) -> Option<f64> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')));
    let (number, suffix) = text.split_at(split.unwrap_or(text.len()));
    let number: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024.0_f64.powi(2),
        "Gi" => 1024.0_f64.powi(3),
        "Ti" => 1024.0_f64.powi(4),
        "Pi" => 1024.0_f64.powi(5),
        "Ei" => 1024.0_f64.powi(6),
        exp => 10f64.powi(exp.strip_prefix(['e', 'E'])?.parse().ok()?),
    };
    Some(number * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantity_values() {
        assert_eq!(value("500m"), Some(0.5));
        assert_eq!(value("1Gi"), Some(1024.0 * 1024.0 * 1024.0));
        assert_eq!(value("2e3"), Some(2000.0));
        assert_eq!(value("1"), value("1000m"));
        assert_eq!(value("x"), None);
    }
}
