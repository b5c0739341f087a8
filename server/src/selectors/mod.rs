//! Label and field selectors (k8s.io/apimachinery/pkg/labels and pkg/fields):
//! no maintained crate parses Kubernetes' grammar, so they are written here.

pub mod field;
pub mod label;
