//! DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds):
//! a pod that does not tolerate its node becoming not-ready or unreachable
//! tolerates it for five minutes, after which the node lifecycle controller
//! evicts it.

use serde_json::{Value, json};

use super::array_at;
use crate::admission::{Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;
use async_trait::async_trait;

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// Seconds a pod stays on a not-ready or unreachable node
/// (`--default-not-ready-toleration-seconds`, `--default-unreachable-toleration-seconds`).
const DEFAULT_SECONDS: i64 = 300;

/// Adds the missing tolerations to a pod being created.
pub fn admit_pod(pod: &mut Value) {
    let tolerations = pod["spec"]["tolerations"].as_array();
    let tolerates = |key: &str| {
        tolerations.into_iter().flatten().any(|t| {
            let t_key = t["key"].as_str().unwrap_or_default();
            let effect = t["effect"].as_str().unwrap_or_default();
            (t_key == key || t_key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        })
    };
    let missing: Vec<&str> = [NOT_READY, UNREACHABLE]
        .into_iter()
        .filter(|key| !tolerates(key))
        .collect();
    if missing.is_empty() {
        return;
    }
    let Some(tolerations) = array_at(&mut pod["spec"], "tolerations") else {
        return;
    };
    for key in missing {
        tolerations.push(json!({
            "key": key,
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": DEFAULT_SECONDS,
        }));
    }
}

/// DefaultTolerationSeconds: pods tolerate unready and unreachable nodes for
/// five minutes unless they say otherwise.
pub struct DefaultTolerationSeconds;

#[async_trait]
impl Plugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.is("", "pods") && (request.operation == Operation::Create || request.main_update())
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        admit_pod(object);
        Ok(())
    }
}
