//! The declarative rules `#[api(...)]` field attributes compile to. Each rule takes
//! the field by reference through a small trait, so one rule serves `String`,
//! `Option<String>`, integers and their options alike.

use std::collections::BTreeMap;

use super::{FieldErrors, FieldPath, dns1123_label_errors, dns1123_subdomain_errors};

/// A field that can be absent or empty (`required`).
pub trait Presence {
    /// Whether the field carries a value.
    fn is_present(&self) -> bool;
}

impl<T: Presence> Presence for Option<T> {
    fn is_present(&self) -> bool {
        self.as_ref().is_some_and(Presence::is_present)
    }
}
impl Presence for String {
    fn is_present(&self) -> bool {
        !self.is_empty()
    }
}
impl<T> Presence for Vec<T> {
    fn is_present(&self) -> bool {
        !self.is_empty()
    }
}
impl<V> Presence for BTreeMap<String, V> {
    fn is_present(&self) -> bool {
        !self.is_empty()
    }
}
macro_rules! always_present {
    ($($t:ty),*) => { $(impl Presence for $t { fn is_present(&self) -> bool { true } })* };
}
always_present!(bool, i32, i64, u32, u64, f64);

/// A field holding text, when set.
pub trait TextValue {
    /// The text, if any.
    fn text(&self) -> Option<&str>;
}
impl TextValue for String {
    fn text(&self) -> Option<&str> {
        (!self.is_empty()).then_some(self.as_str())
    }
}
impl TextValue for Option<String> {
    fn text(&self) -> Option<&str> {
        self.as_deref().filter(|s| !s.is_empty())
    }
}

/// A field holding a number, when set.
pub trait NumberValue {
    /// The number, if any.
    fn number(&self) -> Option<f64>;
}
macro_rules! number_value {
    ($($t:ty),*) => { $(
        impl NumberValue for $t { fn number(&self) -> Option<f64> { Some(*self as f64) } }
        impl NumberValue for Option<$t> { fn number(&self) -> Option<f64> { self.map(|v| v as f64) } }
    )* };
}
number_value!(i32, i64, u32, u64, f64);

/// `#[api(required)]`.
pub fn required(value: &impl Presence, path: FieldPath, errs: &mut FieldErrors) {
    if !value.is_present() {
        errs.required(path, "");
    }
}

/// `#[api(format = "dns1123-label")]`.
pub fn dns1123_label(value: &impl TextValue, path: FieldPath, errs: &mut FieldErrors) {
    if let Some(text) = value.text() {
        for detail in dns1123_label_errors(text) {
            errs.invalid(path.clone(), text, &detail);
        }
    }
}

/// `#[api(format = "dns1123-subdomain")]`.
pub fn dns1123_subdomain(value: &impl TextValue, path: FieldPath, errs: &mut FieldErrors) {
    if let Some(text) = value.text() {
        for detail in dns1123_subdomain_errors(text) {
            errs.invalid(path.clone(), text, &detail);
        }
    }
}

/// `#[api(one_of("A", "B"))]`.
pub fn one_of(value: &impl TextValue, allowed: &[&str], path: FieldPath, errs: &mut FieldErrors) {
    if let Some(text) = value.text()
        && !allowed.contains(&text)
    {
        errs.not_supported(path, text, allowed);
    }
}

/// `#[api(minimum = N)]`.
pub fn minimum(value: &impl NumberValue, min: f64, path: FieldPath, errs: &mut FieldErrors) {
    if let Some(n) = value.number()
        && n < min
    {
        errs.invalid(
            path,
            Number(n),
            &format!("must be greater than or equal to {}", Number(min)),
        );
    }
}

/// `#[api(maximum = N)]`.
pub fn maximum(value: &impl NumberValue, max: f64, path: FieldPath, errs: &mut FieldErrors) {
    if let Some(n) = value.number()
        && n > max
    {
        errs.invalid(
            path,
            Number(n),
            &format!("must be less than or equal to {}", Number(max)),
        );
    }
}

/// Prints whole numbers without a fraction, as Go prints ints.
struct Number(f64);

impl std::fmt::Debug for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.fract() == 0.0 && self.0.abs() < 1e15 {
            write!(f, "{}", self.0 as i64)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_report_paths_and_messages() {
        let mut errs = FieldErrors::default();
        let path = FieldPath::new("spec").child("port");
        required(&None::<String>, path.clone(), &mut errs);
        maximum(&Some(70000_i32), 65535.0, path.clone(), &mut errs);
        one_of(
            &"Sometimes".to_owned(),
            &["Always", "Never"],
            path.clone(),
            &mut errs,
        );
        minimum(&5_i64, 1.0, path, &mut errs);
        let text: Vec<String> = errs.0.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            vec![
                "spec.port: Required value",
                "spec.port: Invalid value: 70000: must be less than or equal to 65535",
                "spec.port: Unsupported value: \"Sometimes\": supported values: \"Always\", \"Never\"",
            ]
        );
    }
}
