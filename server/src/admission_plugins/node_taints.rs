//! TaintNodesByCondition (plugin/pkg/admission/nodetaint): a new node is
//! not ready until its kubelet says otherwise, so it starts with the
//! `node.kubernetes.io/not-ready:NoSchedule` taint (the node lifecycle
//! controller removes it).

use serde_json::{Value, json};

use super::array_at;
use crate::admission::{Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;
use async_trait::async_trait;

const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// Adds the not-ready taint to a node being created, unless it has it.
pub fn admit_node(node: &mut Value) {
    let has_taint = node["spec"]["taints"].as_array().is_some_and(|taints| {
        taints
            .iter()
            .any(|t| t["key"] == NOT_READY && t["effect"] == "NoSchedule")
    });
    if has_taint {
        return;
    }
    if node["spec"].is_null() {
        node["spec"] = json!({});
    }
    if let Some(taints) = array_at(&mut node["spec"], "taints") {
        taints.push(json!({ "key": NOT_READY, "effect": "NoSchedule" }));
    }
}

/// TaintNodesByCondition: a new node is tainted not-ready.
pub struct TaintNodesByCondition;

#[async_trait]
impl Plugin for TaintNodesByCondition {
    fn name(&self) -> &'static str {
        "TaintNodesByCondition"
    }

    fn mutates(&self, request: &Request<'_>) -> bool {
        request.operation == Operation::Create && request.is("", "nodes")
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        let object = object.json_mut()?;
        admit_node(object);
        Ok(())
    }
}
