//! List: ordering, prefixes, revisions, pagination and predicates.

use std::sync::Arc;

use kapi_storage::{KeyValue, ListOptions, ListResult, Predicate, Storage, StorageError};

use super::b;

fn keys(result: &ListResult) -> Vec<&str> {
    result.items.iter().map(|kv| kv.key.as_str()).collect()
}

fn at(revision: u64) -> ListOptions {
    ListOptions {
        revision,
        ..ListOptions::default()
    }
}

pub async fn list_is_ordered_and_isolated_by_prefix(store: &dyn Storage, p: &str) {
    for name in ["a/c", "ab/x", "a/a", "a", "a/b/deep", "b/a", "a/b"] {
        store.create(&format!("{p}{name}"), b(name)).await.unwrap();
    }
    let listed = store
        .list(&format!("{p}a/"), ListOptions::default())
        .await
        .unwrap();
    let expected: Vec<String> = ["a/a", "a/b", "a/b/deep", "a/c"]
        .iter()
        .map(|n| format!("{p}{n}"))
        .collect();
    assert_eq!(keys(&listed), expected);
    assert_eq!(listed.continue_after, None);
    assert!(listed.revision >= listed.items.iter().map(|kv| kv.mod_revision).max().unwrap());
    let values: Vec<_> = listed.items.iter().map(|kv| kv.value.clone()).collect();
    assert_eq!(values, [b("a/a"), b("a/b"), b("a/b/deep"), b("a/c")]);
    let empty = store
        .list(&format!("{p}none/"), ListOptions::default())
        .await
        .unwrap();
    assert!(empty.items.is_empty());
}

pub async fn list_revision_bounds(store: &dyn Storage, p: &str) {
    store.create(&format!("{p}x"), b("x")).await.unwrap();
    let current = store.current_revision().await.unwrap();
    let err = store.list(p, at(current + 1000)).await.unwrap_err();
    assert!(
        matches!(err, StorageError::TooLargeRevision { requested, .. } if requested == current + 1000),
        "{err:?}"
    );
    let now = store.list(p, at(0)).await.unwrap();
    assert!(now.revision >= current);
    assert_eq!(now.items.len(), 1);
}

/// Pages after the first read at the first page's revision: writes between pages
/// neither appear nor make deleted objects vanish (Kubernetes' continue tokens).
pub async fn list_pages_are_pinned_to_the_first_revision(store: &dyn Storage, p: &str) {
    for name in ["a", "b", "c", "d", "e"] {
        store.create(&format!("{p}{name}"), b(name)).await.unwrap();
    }
    let page = |revision, start_after: Option<String>| ListOptions {
        revision,
        limit: 2,
        start_after,
        predicate: None,
    };
    let first = store.list(p, page(0, None)).await.unwrap();
    assert_eq!(keys(&first), [format!("{p}a"), format!("{p}b")]);
    assert_eq!(first.continue_after, Some(format!("{p}b")));
    assert!(first.remaining.is_none_or(|r| r == 3));
    let pinned = first.revision;

    // Writes between the pages.
    store.delete(&format!("{p}c"), None).await.unwrap();
    store.create(&format!("{p}bb"), b("bb")).await.unwrap();
    let d = store.get(&format!("{p}d")).await.unwrap().unwrap();
    store.update(&d.key, b("d2"), d.mod_revision).await.unwrap();
    store.create(&format!("{p}f"), b("f")).await.unwrap();

    let second = store
        .list(p, page(pinned, first.continue_after.clone()))
        .await
        .unwrap();
    assert_eq!(second.revision, pinned);
    assert_eq!(keys(&second), [format!("{p}c"), format!("{p}d")]);
    assert_eq!(second.items[1].value, b("d"));
    assert!(second.remaining.is_none_or(|r| r == 1));
    let third = store
        .list(p, page(pinned, second.continue_after.clone()))
        .await
        .unwrap();
    assert_eq!(keys(&third), [format!("{p}e")]);
    assert_eq!(third.continue_after, None);

    // A fresh list sees the writes.
    let now = store.list(p, ListOptions::default()).await.unwrap();
    let expected: Vec<String> = ["a", "b", "bb", "d", "e", "f"]
        .iter()
        .map(|n| format!("{p}{n}"))
        .collect();
    assert_eq!(keys(&now), expected);
}

/// The predicate runs inside the store: `limit` counts matching items only, and
/// following `continue_after` yields every match exactly once, in order.
pub async fn list_predicate_counts_only_matching_items(store: &dyn Storage, p: &str) {
    for i in 0..10 {
        let value = if i % 2 == 0 { "even" } else { "odd" };
        store.create(&format!("{p}{i:02}"), b(value)).await.unwrap();
    }
    let even: Predicate = Arc::new(|kv: &KeyValue| kv.value.as_ref() == b"even");
    let mut seen = Vec::new();
    let mut start_after = None;
    let mut revision = 0;
    loop {
        let opts = ListOptions {
            revision,
            limit: 2,
            start_after: start_after.clone(),
            predicate: Some(even.clone()),
        };
        let page = store.list(p, opts).await.unwrap();
        assert!(page.items.len() <= 2);
        assert!(page.items.iter().all(|kv| kv.value == b("even")));
        seen.extend(page.items.iter().map(|kv| kv.key.clone()));
        revision = page.revision;
        match page.continue_after {
            Some(last) => {
                assert_eq!(page.items.len(), 2, "a cut-short page is full");
                assert_eq!(Some(&last), seen.last());
                start_after = Some(last);
            }
            None => break,
        }
    }
    let expected: Vec<String> = (0..10).step_by(2).map(|i| format!("{p}{i:02}")).collect();
    assert_eq!(seen, expected);
}

pub async fn list_at_an_older_revision_sees_deleted_objects(store: &dyn Storage, p: &str) {
    let x = store.create(&format!("{p}x"), b("x1")).await.unwrap();
    let y = store.create(&format!("{p}y"), b("y1")).await.unwrap();
    let before = store.current_revision().await.unwrap();
    store.update(&x.key, b("x2"), x.mod_revision).await.unwrap();
    store.delete(&y.key, None).await.unwrap();
    store.create(&format!("{p}z"), b("z1")).await.unwrap();

    let old = store.list(p, at(before)).await.unwrap();
    assert_eq!(old.revision, before);
    assert_eq!(old.items, [x.clone(), y.clone()]);
    let at_create = store.list(p, at(x.mod_revision)).await.unwrap();
    assert_eq!(at_create.items, [x]);
    let now = store.list(p, ListOptions::default()).await.unwrap();
    let values: Vec<_> = now.items.iter().map(|kv| kv.value.clone()).collect();
    assert_eq!(values, [b("x2"), b("z1")]);
}
