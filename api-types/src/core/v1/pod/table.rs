//! The `kubectl get pods` row, computed as kube-apiserver's pod printer does
//! (k8s.io/kubernetes/pkg/printers/internalversion: `printPod`).

use serde_json::{Value, json};

use super::Pod;
use super::status::{ContainerStatus, PodStatus};

/// Cells for the columns Ready, Status, Restarts, Age, IP, Node, Nominated Node
/// and Readiness Gates.
pub(super) fn pod_cells(pod: &Pod) -> Vec<Value> {
    let row = ContainerSummary::of(pod);
    let status = &pod.status;
    let deleting = pod.metadata.deletion_timestamp.is_some();
    let reason = match () {
        _ if deleting && status.reason.as_deref() == Some("NodeLost") => "Unknown".to_owned(),
        _ if deleting && !is_terminal(status) => "Terminating".to_owned(),
        _ => row.reason,
    };
    let created = pod.metadata.creation_timestamp.map(|t| t.to_string());
    let pod_ip = status
        .pod_ips
        .iter()
        .flatten()
        .next()
        .map(|ip| ip.ip.as_str());
    vec![
        json!(format!("{}/{}", row.ready, row.total)),
        json!(reason),
        json!(row.restarts),
        json!(created),
        json!(or_none(pod_ip)),
        json!(or_none(pod.spec.node_name.as_deref())),
        json!(or_none(status.nominated_node_name.as_deref())),
        json!(readiness_gates(pod)),
    ]
}

/// Ready and total containers, restarts and the status text of a pod.
struct ContainerSummary {
    ready: usize,
    total: usize,
    restarts: i64,
    reason: String,
}

impl ContainerSummary {
    fn of(pod: &Pod) -> ContainerSummary {
        let spec = &pod.spec;
        let status = &pod.status;
        let sidecars: Vec<&str> = spec
            .init_containers
            .iter()
            .flatten()
            .filter(|c| c.restart_policy.as_deref() == Some("Always"))
            .map(|c| c.name.as_str())
            .collect();
        let mut row = ContainerSummary {
            ready: 0,
            total: spec.containers.len() + sidecars.len(),
            restarts: 0,
            reason: phase_reason(status),
        };
        let mut sidecar_restarts = 0;
        let mut initializing = false;
        let init_count = spec.init_containers.as_ref().map_or(0, Vec::len);
        for (i, c) in status.init_container_statuses.iter().flatten().enumerate() {
            let sidecar = sidecars.contains(&c.name.as_str());
            row.restarts += i64::from(c.restart_count);
            if sidecar {
                sidecar_restarts += i64::from(c.restart_count);
            }
            let state = &c.state;
            if state.terminated.as_ref().is_some_and(|t| t.exit_code == 0) {
                continue;
            }
            if sidecar && c.started == Some(true) {
                row.ready += usize::from(c.ready);
                continue;
            }
            row.reason = init_reason(c, i, init_count);
            initializing = true;
            break;
        }
        if !initializing || has_condition(status, "Initialized") {
            row.restarts = sidecar_restarts;
            let mut has_running = false;
            for c in status.container_statuses.iter().flatten().rev() {
                row.restarts += i64::from(c.restart_count);
                if let Some(reason) = container_reason(c) {
                    row.reason = reason;
                } else if c.ready && c.state.running.is_some() {
                    has_running = true;
                    row.ready += 1;
                }
            }
            if row.reason == "Completed" && has_running {
                row.reason = if has_condition(status, "Ready") {
                    "Running"
                } else {
                    "NotReady"
                }
                .to_owned();
            }
        }
        row
    }
}

/// The pod's reason, else its phase; `SchedulingGated` while gates hold it.
fn phase_reason(status: &PodStatus) -> String {
    let gated = status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == "PodScheduled" && c.reason.as_deref() == Some("SchedulingGated"));
    if gated {
        return "SchedulingGated".to_owned();
    }
    match status.reason.as_deref() {
        Some(reason) if !reason.is_empty() => reason.to_owned(),
        _ => status.phase.clone().unwrap_or_default(),
    }
}

/// The status text of a pod stuck at init container `index`.
fn init_reason(c: &ContainerStatus, index: usize, count: usize) -> String {
    if let Some(t) = &c.state.terminated {
        return match t.reason.as_deref() {
            Some(reason) if !reason.is_empty() => format!("Init:{reason}"),
            _ if t.signal.unwrap_or(0) != 0 => format!("Init:Signal:{}", t.signal.unwrap_or(0)),
            _ => format!("Init:ExitCode:{}", t.exit_code),
        };
    }
    match c.state.waiting.as_ref().and_then(|w| w.reason.as_deref()) {
        Some(reason) if !reason.is_empty() && reason != "PodInitializing" => {
            format!("Init:{reason}")
        }
        _ => format!("Init:{index}/{count}"),
    }
}

/// The status text a waiting or terminated container imposes on the pod.
fn container_reason(c: &ContainerStatus) -> Option<String> {
    if let Some(reason) = c.state.waiting.as_ref().and_then(|w| w.reason.as_deref())
        && !reason.is_empty()
    {
        return Some(reason.to_owned());
    }
    let t = c.state.terminated.as_ref()?;
    Some(match t.reason.as_deref() {
        Some(reason) if !reason.is_empty() => reason.to_owned(),
        _ if t.signal.unwrap_or(0) != 0 => format!("Signal:{}", t.signal.unwrap_or(0)),
        _ => format!("ExitCode:{}", t.exit_code),
    })
}

fn is_terminal(status: &PodStatus) -> bool {
    matches!(status.phase.as_deref(), Some("Succeeded" | "Failed"))
}

fn has_condition(status: &PodStatus, type_: &str) -> bool {
    status
        .conditions
        .iter()
        .flatten()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// `true/total` of the readiness gates, or `<none>`.
fn readiness_gates(pod: &Pod) -> String {
    let gates = pod.spec.readiness_gates.as_deref().unwrap_or_default();
    if gates.is_empty() {
        return "<none>".to_owned();
    }
    let conditions = pod.status.conditions.as_deref().unwrap_or_default();
    let passed = gates
        .iter()
        .filter(|g| {
            conditions
                .iter()
                .find(|c| c.type_ == g.condition_type)
                .is_some_and(|c| c.status == "True")
        })
        .count();
    format!("{passed}/{}", gates.len())
}

fn or_none(value: Option<&str>) -> &str {
    value.filter(|v| !v.is_empty()).unwrap_or("<none>")
}
