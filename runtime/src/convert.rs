//! Versions of a kind and their conversions: every served version of a kind
//! converts to and from one hub version, which is also the version objects are
//! stored in (Kubernetes' internal version, without a separate internal type).
//!
//! [`Convert`] is one direction of a conversion. `#[derive(Convert)]` writes
//! both directions field by field for a struct marked `#[convert(hub = Path)]`,
//! destructuring both structs completely, so a field added to either side and
//! not mapped is a compile error rather than data silently dropped. Types that
//! are the same in both versions (metadata, shared core types, scalars) convert
//! to themselves; `Option`, `Vec`, `BTreeMap` and `Box` convert element-wise.
//!
//! The type-erased form the request path uses, [`HubLink`](crate::object::HubLink),
//! is built on [`crate::object`]: a kind served in a version other than its hub
//! names the hub's version and the two conversions ([`crate::erased`]).

use std::collections::BTreeMap;

/// One direction of a conversion between two versions of a type.
pub trait Convert<T>: Sized {
    /// `self` as the other version.
    fn convert(self) -> T;
}

/// Implements the identity conversion of types every version shares.
#[macro_export]
#[doc(hidden)]
macro_rules! identity_conversions {
    ($($t:ty),* $(,)?) => {
        $(impl $crate::convert::Convert<$t> for $t {
            #[inline]
            fn convert(self) -> $t {
                self
            }
        })*
    };
}

identity_conversions!(
    String,
    bool,
    i32,
    i64,
    u32,
    u64,
    f32,
    f64,
    serde_json::Value,
    crate::bytes::ByteString,
    crate::intstr::IntOrString,
    crate::intstr::Quantity,
);

impl<A: Convert<B>, B> Convert<Option<B>> for Option<A> {
    #[inline]
    fn convert(self) -> Option<B> {
        self.map(Convert::convert)
    }
}

impl<A: Convert<B>, B> Convert<Vec<B>> for Vec<A> {
    fn convert(self) -> Vec<B> {
        self.into_iter().map(Convert::convert).collect()
    }
}

impl<A: Convert<B>, B> Convert<BTreeMap<String, B>> for BTreeMap<String, A> {
    fn convert(self) -> BTreeMap<String, B> {
        self.into_iter().map(|(k, v)| (k, v.convert())).collect()
    }
}

impl<A: Convert<B>, B> Convert<Box<B>> for Box<A> {
    fn convert(self) -> Box<B> {
        Box::new((*self).convert())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_convert_element_wise() {
        let v: Option<Vec<String>> = Some(vec!["a".into()]);
        let out: Option<Vec<String>> = v.clone().convert();
        assert_eq!(out, v);
        let m: BTreeMap<String, Box<i32>> = [("k".to_owned(), Box::new(3))].into();
        let back: BTreeMap<String, Box<i32>> = m.clone().convert();
        assert_eq!(back, m);
    }
}
