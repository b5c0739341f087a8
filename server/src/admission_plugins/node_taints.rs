//! TaintNodesByCondition (plugin/pkg/admission/nodetaint): a new node is
//! not ready until its kubelet says otherwise, so it starts with the
//! `node.kubernetes.io/not-ready:NoSchedule` taint (the node lifecycle
//! controller removes it).

use kapi_api_types::core::v1::Node;
use kapi_api_types::core::v1::node::Taint;

use crate::admission::{Operation, Plugin, Request, Subject, View};
use crate::api_error::ApiResult;
use crate::loopback::Loopback;
use async_trait::async_trait;

const NOT_READY: &str = "node.kubernetes.io/not-ready";

/// Adds the not-ready taint to a node being created, unless it has it.
pub fn admit_node(node: &mut Node) {
    let taints = node.spec.taints.get_or_insert_with(Vec::new);
    let has_taint = taints
        .iter()
        .any(|t| t.key == NOT_READY && t.effect == "NoSchedule");
    if !has_taint {
        taints.push(Taint {
            key: NOT_READY.to_owned(),
            effect: "NoSchedule".to_owned(),
            ..Taint::default()
        });
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
        request.operation == Operation::Create && request.is_kind::<Node>()
    }

    async fn admit(
        &self,
        _request: &Request<'_>,
        object: &mut Subject<'_>,
        _old: Option<&View<'_>>,
        _objects: &dyn Loopback,
    ) -> ApiResult<()> {
        if let Some(node) = object.downcast_mut::<Node>()? {
            admit_node(node);
        }
        Ok(())
    }
}
