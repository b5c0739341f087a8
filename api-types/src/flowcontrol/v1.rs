//! `flowcontrol.apiserver.k8s.io/v1`.
