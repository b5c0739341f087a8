//! The `autoscaling` API group: horizontal pod autoscalers and the `Scale`
//! body of the `/scale` subresources.

pub mod defaults;
pub mod v1;
pub mod v2;
