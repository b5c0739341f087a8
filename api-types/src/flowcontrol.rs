//! The `flowcontrol.apiserver.k8s.io` API group. API priority and fairness: flow schemas and priority levels.

pub mod v1;
