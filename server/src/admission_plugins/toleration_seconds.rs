//! DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds):
//! a pod that does not tolerate its node becoming not-ready or unreachable
//! tolerates it for five minutes, after which the node lifecycle controller
//! evicts it.

use async_trait::async_trait;
use kapi_api_types::core::v1::Pod;
use kapi_api_types::core::v1::pod::affinity::Toleration;

use crate::admission::{Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;

const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// Seconds a pod stays on a not-ready or unreachable node
/// (`--default-not-ready-toleration-seconds`, `--default-unreachable-toleration-seconds`).
const DEFAULT_SECONDS: i64 = 300;

/// Adds the missing tolerations to a pod being created or updated.
fn admit_pod(pod: &mut Pod) {
    let tolerations = pod.spec.tolerations.as_deref().unwrap_or_default();
    let tolerates = |key: &str| {
        tolerations.iter().any(|t| {
            let t_key = t.key.as_deref().unwrap_or_default();
            let effect = t.effect.as_deref().unwrap_or_default();
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
    let tolerations = pod.spec.tolerations.get_or_insert_with(Vec::new);
    for key in missing {
        tolerations.push(Toleration {
            key: Some(key.to_owned()),
            operator: Some("Exists".to_owned()),
            effect: Some("NoExecute".to_owned()),
            toleration_seconds: Some(DEFAULT_SECONDS),
            ..Toleration::default()
        });
    }
}

/// The plugin.
pub struct DefaultTolerationSeconds;

#[async_trait]
impl Plugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.is_kind::<Pod>()
            && (request.operation == Operation::Create || request.main_update())
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        if let Some(pod) = object.downcast_mut::<Pod>()? {
            admit_pod(pod);
        }
        Ok(())
    }
}
