//! Label and field selectors as `labelSelector=` and `fieldSelector=` give
//! them: parsed, matched, printed and parsed again (a selector that selects
//! the same; the text itself need not be the same, as upstream's field
//! selectors sort their raw terms, `==` before `=`). Nothing may panic.

#![no_main]

use std::collections::BTreeMap;

use kapi_server::selectors::field::FieldSelector;
use kapi_server::selectors::label::LabelSelector;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let labels: BTreeMap<String, String> = [("app", "web"), ("tier", "1"), ("a.b/c", "")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    if let Ok(selector) = LabelSelector::parse(text) {
        let printed = selector.to_string();
        let again = LabelSelector::parse(&printed).expect("a printed selector parses");
        assert_eq!(
            again.matches(Some(&labels)),
            selector.matches(Some(&labels)),
            "{text:?} printed {printed:?}"
        );
    }
    if let Ok(selector) = FieldSelector::parse(text) {
        let lookup = |field: &str| labels.get(field).cloned();
        let printed = selector.to_string();
        let again = FieldSelector::parse(&printed).expect("a printed selector parses");
        assert_eq!(
            again.matches(lookup),
            selector.matches(lookup),
            "{text:?} printed {printed:?}"
        );
    }
});
