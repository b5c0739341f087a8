//! How many seats a request takes (k8s.io/apiserver's work estimator): one,
//! except a LIST (and a watch that sends its initial events), which takes one
//! per hundred objects it will go through, up to its level's maximum.

use crate::request_info::{RequestInfo, ResourceRef, Verb};

/// Objects one seat covers.
const OBJECTS_PER_SEAT: usize = 100;

/// The seats of a resource request (`info`'s, addressing `request`); `count`
/// gives the number of objects the resource holds, where known.
pub fn seats(
    request: &ResourceRef<'_>,
    info: &RequestInfo,
    count: impl FnOnce() -> Option<usize>,
    max_seats: u32,
) -> u32 {
    match request.verb {
        Verb::List => list_seats(request, info, count, max_seats),
        Verb::Watch if flag(info.query.send_initial_events.as_deref()) => {
            list_seats(request, info, count, max_seats)
        }
        _ => 1,
    }
}

fn list_seats(
    request: &ResourceRef<'_>,
    info: &RequestInfo,
    count: impl FnOnce() -> Option<usize>,
    max_seats: u32,
) -> u32 {
    let params = &info.query;
    let field_selector = params.field_selector.as_deref();
    // A list of one name (`fieldSelector=metadata.name=x`) reads one object.
    if request.name.is_some() || field_selector.is_some_and(names_one) {
        return 1;
    }
    let Some(stored) = count() else {
        return 1;
    };
    let asked = params
        .limit
        .as_deref()
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(0);
    let limit = if asked > 0 && asked < stored {
        asked
    } else {
        stored
    };
    let rv = params.resource_version.as_deref().unwrap_or_default();
    let rv_match = params.resource_version_match.as_deref().unwrap_or_default();
    let from_store = request.verb != Verb::Watch
        && (params
            .continue_token
            .as_deref()
            .is_some_and(|c| !c.is_empty())
            || (!rv_match.is_empty() && rv_match != "NotOlderThan")
            || (asked > 0 && rv_match.is_empty() && !rv.is_empty() && rv != "0"));
    let selected = field_selector.is_some_and(|s| !s.is_empty())
        || params
            .label_selector
            .as_deref()
            .is_some_and(|s| !s.is_empty());
    let objects = if !from_store {
        stored
    } else if selected {
        stored + limit
    } else {
        2 * limit
    };
    let seats = objects.div_ceil(OBJECTS_PER_SEAT).max(1);
    u32::try_from(seats)
        .unwrap_or(u32::MAX)
        .min(max_seats.max(1))
}

/// `metadata.name=x` (or `==`) alone.
fn names_one(selector: &str) -> bool {
    let Some(rest) = selector.trim().strip_prefix("metadata.name") else {
        return false;
    };
    let value = rest.strip_prefix("==").or_else(|| rest.strip_prefix('='));
    value.is_some_and(|v| !v.is_empty() && !v.contains(','))
}

fn flag(value: Option<&str>) -> bool {
    value.is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;

    fn list(query: &str, stored: Option<usize>) -> u32 {
        let info = RequestInfo::parse(&Method::GET, "/api/v1/pods", Some(query));
        seats(&info.resource().unwrap(), &info, || stored, 10)
    }

    #[test]
    fn lists_cost_a_seat_per_hundred_objects() {
        // From the cache: everything stored is gone through.
        assert_eq!(list("", Some(450)), 5);
        assert_eq!(list("limit=50&resourceVersion=0", Some(450)), 5);
        // From the store: a page twice over, or the selection.
        assert_eq!(list("limit=50&continue=x", Some(450)), 1);
        assert_eq!(list("limit=500&resourceVersion=7", Some(5000)), 10);
        assert_eq!(
            list("limit=100&resourceVersion=7&labelSelector=a", Some(450)),
            6
        );
        // Capped, at least one, and one when unknown or naming one object.
        assert_eq!(list("", Some(100_000)), 10);
        assert_eq!(list("", Some(0)), 1);
        assert_eq!(list("", None), 1);
        assert_eq!(list("fieldSelector=metadata.name%3Dx", Some(9000)), 1);
    }

    #[test]
    fn watches_cost_one_unless_they_send_initial_events() {
        let seats_of = |query: &str| {
            let info = RequestInfo::parse(&Method::GET, "/api/v1/pods", Some(query));
            seats(&info.resource().unwrap(), &info, || Some(900), 10)
        };
        assert_eq!(seats_of("watch=1"), 1);
        assert_eq!(
            seats_of("watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"),
            9
        );
    }
}
