//! The `events.k8s.io` API group. Events in the events.k8s.io group (the newer shape of core Events).

pub mod v1;
