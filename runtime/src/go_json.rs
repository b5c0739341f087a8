//! The rules of Go's `encoding/json` that serde does not share, so that kinds
//! decode and encode exactly like the Go types of `k8s.io/api`.
//!
//! - `omitempty` on a non-pointer field leaves out the zero value (`""`, `false`,
//!   `0`, an empty list or map), not only an absent one: [`omitempty`].
//! - The same distinction decides protobuf encoding: `#[derive(ApiType)]` treats an
//!   `Option` field serialized with `skip_serializing_if = "Option::is_none"` as a
//!   Go pointer and any other `Option` field as a Go value (see [`crate::proto`]).
//! - A JSON `null` decodes into any field as its zero value: [`null_as_default`]
//!   for the struct-valued fields Go always writes (`spec`, `status`, `resources`).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

/// A value with a Go zero value that `omitempty` leaves out.
pub trait GoZero {
    /// Whether Go's `omitempty` would leave this value out.
    fn is_go_zero(&self) -> bool;
}

impl GoZero for String {
    fn is_go_zero(&self) -> bool {
        self.is_empty()
    }
}

impl GoZero for bool {
    fn is_go_zero(&self) -> bool {
        !*self
    }
}

impl GoZero for i32 {
    fn is_go_zero(&self) -> bool {
        *self == 0
    }
}

impl GoZero for i64 {
    fn is_go_zero(&self) -> bool {
        *self == 0
    }
}

impl<T> GoZero for Vec<T> {
    fn is_go_zero(&self) -> bool {
        self.is_empty()
    }
}

impl<V> GoZero for BTreeMap<String, V> {
    fn is_go_zero(&self) -> bool {
        self.is_empty()
    }
}

/// `skip_serializing_if` for a Go `omitempty` field that is not a pointer:
/// absent, or present with its zero value.
pub fn omitempty<T: GoZero>(value: &Option<T>) -> bool {
    value.as_ref().is_none_or(GoZero::is_go_zero)
}

/// `deserialize_with` for a field Go always writes: `null` means the zero value.
pub fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omitempty_matches_go() {
        assert!(omitempty::<String>(&None));
        assert!(omitempty(&Some(String::new())));
        assert!(!omitempty(&Some("x".to_owned())));
        assert!(omitempty(&Some(false)));
        assert!(!omitempty(&Some(true)));
        assert!(omitempty(&Some(0_i32)));
        assert!(omitempty(&Some(Vec::<String>::new())));
        assert!(omitempty(&Some(BTreeMap::<String, String>::new())));
    }

    #[test]
    fn null_decodes_as_zero() {
        #[derive(Deserialize)]
        struct Holder {
            #[serde(default, deserialize_with = "null_as_default")]
            list: Vec<String>,
        }
        let h: Holder = serde_json::from_str(r#"{"list": null}"#).expect("null list");
        assert!(h.list.is_empty());
        let h: Holder = serde_json::from_str(r#"{}"#).expect("no list");
        assert!(h.list.is_empty());
    }
}
