//! Interning of the facts of kinds defined at run time (custom resources):
//! [`ResourceInfo`] holds `'static` references so that the compiled
//! kinds' facts are constants, and a run-time kind's facts are made `'static`
//! here. Each distinct value is stored once for the life of the process, so a
//! definition re-applied unchanged, or a version added beside others, costs
//! nothing new; only a change to a kind's names, columns or subresources adds
//! a record (a few hundred bytes). Schemas are not interned: they live in the
//! kind's operations and are freed with them.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::resource_info::{PrinterColumn, ResourceInfo, Subresource};

/// The one stored copy of `value`, stored on first sight.
fn interned<T, Owned>(
    set: &'static OnceLock<Mutex<HashSet<&'static T>>>,
    value: &T,
    leak: impl FnOnce() -> Owned,
) -> &'static T
where
    T: Hash + Eq + ?Sized + 'static,
    Owned: Into<&'static T>,
{
    let mut set = set
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = set.get(value) {
        return found;
    }
    let stored: &'static T = leak().into();
    set.insert(stored);
    stored
}

/// `text`, `'static`.
pub fn str(text: &str) -> &'static str {
    static SET: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    interned(&SET, text, || -> &'static str { Box::leak(text.into()) })
}

/// A list of texts (short names, categories, verbs, fields), `'static`.
pub fn strs<S: AsRef<str>>(texts: &[S]) -> &'static [&'static str] {
    static SET: OnceLock<Mutex<HashSet<&'static [&'static str]>>> = OnceLock::new();
    let texts: Vec<&'static str> = texts.iter().map(|t| str(t.as_ref())).collect();
    interned(&SET, texts.as_slice(), || -> &'static [&'static str] {
        Box::leak(texts.clone().into_boxed_slice())
    })
}

/// A kind's printer columns, `'static`.
pub fn columns(columns: Vec<PrinterColumn>) -> &'static [PrinterColumn] {
    static SET: OnceLock<Mutex<HashSet<&'static [PrinterColumn]>>> = OnceLock::new();
    interned(&SET, columns.as_slice(), || -> &'static [PrinterColumn] {
        Box::leak(columns.clone().into_boxed_slice())
    })
}

/// A kind's subresources, `'static`.
pub fn subresources(subresources: Vec<Subresource>) -> &'static [Subresource] {
    static SET: OnceLock<Mutex<HashSet<&'static [Subresource]>>> = OnceLock::new();
    interned(
        &SET,
        subresources.as_slice(),
        || -> &'static [Subresource] { Box::leak(subresources.clone().into_boxed_slice()) },
    )
}

/// A kind's facts, `'static` (their texts interned first: [`str`](fn@str), [`strs`]).
pub fn info(info: ResourceInfo) -> &'static ResourceInfo {
    static SET: OnceLock<Mutex<HashSet<&'static ResourceInfo>>> = OnceLock::new();
    interned(&SET, &info, || -> &'static ResourceInfo {
        Box::leak(Box::new(info))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_one_copy() {
        let a = str(&format!("widgets.{}", "example.com"));
        let b = str("widgets.example.com");
        assert!(std::ptr::eq(a, b));
        let x = strs(&["a", "b"]);
        let y = strs(&[String::from("a"), String::from("b")]);
        assert!(std::ptr::eq(x, y));
        assert!(!std::ptr::eq(x, strs(&["b", "a"])));
    }
}
