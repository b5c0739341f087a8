//! Custom resources: kinds defined at run time by CustomResourceDefinitions,
//! served through the same request path as the compiled kinds. A definition
//! becomes scheme entries ([`kind::entries`]) whose objects are
//! [`object::CustomObject`]s; the [`controller`] accepts a definition's names,
//! establishes it, serves it, and removes its objects when it is deleted.

pub mod cel;
pub mod controller;
pub mod kind;
pub mod manifest;
pub mod object;
pub mod schema;
pub mod webhook;
