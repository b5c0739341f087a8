//! The `apiregistration.k8s.io` API group. API aggregation: which server
//! serves each API group version (kube-aggregator's types).

pub mod v1;
