//! `events.k8s.io/v1`.
