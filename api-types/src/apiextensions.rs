//! The `apiextensions.k8s.io` API group. API extension: CustomResourceDefinitions,
//! which add kinds to the API server (apiextensions-apiserver's types).

pub mod v1;
