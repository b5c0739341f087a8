//! `/debug/api_priority_and_fairness/*`: the levels' and queues' state as
//! kube-apiserver prints it (comma-separated columns, aligned).

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::Limiter;
use crate::api_error::ApiError;

/// One row per priority level, by name.
pub fn dump_priority_levels(limiter: &Limiter) -> Response {
    let Limiter::Priority(flow_control) = limiter else {
        return ApiError::no_route().into_response();
    };
    let config = flow_control.config();
    let mut rows = vec![
        [
            "PriorityLevelName",
            "ActiveQueues",
            "IsIdle",
            "IsQuiescing",
            "WaitingRequests",
            "ExecutingRequests",
            "DispatchedRequests",
            "RejectedRequests",
            "TimedoutRequests",
            "CancelledRequests",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for level in config.levels.values() {
        let c = level.set.counts();
        rows.push(vec![
            level.name.to_string(),
            c.active_queues.to_string(),
            (c.waiting + c.executing == 0).to_string(),
            "false".to_owned(),
            c.waiting.to_string(),
            c.executing.to_string(),
            c.dispatched.to_string(),
            c.rejected.to_string(),
            "0".to_owned(),
            c.cancelled.to_string(),
        ]);
    }
    text(&rows)
}

/// One row per queue of every queuing level.
pub fn dump_queues(limiter: &Limiter) -> Response {
    let Limiter::Priority(flow_control) = limiter else {
        return ApiError::no_route().into_response();
    };
    let config = flow_control.config();
    let mut rows = vec![
        [
            "PriorityLevelName",
            "Index",
            "PendingRequests",
            "ExecutingRequests",
            "SeatsInUse",
            "NextDispatchR",
        ]
        .map(str::to_owned)
        .to_vec(),
    ];
    for level in config.levels.values() {
        for (index, (waiting, executing, seats, next_r)) in
            level.set.queues().into_iter().enumerate()
        {
            rows.push(vec![
                level.name.to_string(),
                index.to_string(),
                waiting.to_string(),
                executing.to_string(),
                seats.to_string(),
                format!("{next_r:.8}ss"),
            ]);
        }
    }
    text(&rows)
}

/// Columns joined by `,` and aligned (Go's tabwriter: minimum width 8,
/// padding 1).
fn text(rows: &[Vec<String>]) -> Response {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.len() + 2)
                .max()
                .unwrap_or(0)
                .max(8)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                out.push_str(cell);
            } else {
                let cell = format!("{cell},");
                out.push_str(&format!("{cell:<width$}", width = widths[c]));
            }
        }
        out.push('\n');
    }
    let mut response = out.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
