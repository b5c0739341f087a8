#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use kapi_api_types::core::v1::ConfigMap;
use kapi_runtime::scheme::{KindEntry, Scheme};
use kapi_storage::embedded::EmbeddedStore;
use kapi_storage::{KeyValue, Storage};

use super::predicate::{Decoding, matcher};
use super::*;
use crate::selectors::Selectable;
use crate::selectors::label::LabelSelector;

fn configmaps() -> KindEntry {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    scheme.get("", "v1", "configmaps").unwrap().clone()
}

fn configmap(name: &str, color: &str) -> Object {
    let typed: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": "ns", "labels": {"color": color}},
        "data": {"k": "v"}
    }))
    .unwrap();
    Object::new(Box::new(typed))
}

fn blue() -> ListOptions {
    ListOptions {
        labels: Arc::new(LabelSelector::parse("color=blue").unwrap()),
        ..ListOptions::default()
    }
}

fn names(page: &ListPage) -> Vec<String> {
    page.items
        .iter()
        .map(|c| c.field_text("metadata.name").unwrap())
        .collect()
}

/// A store over a fresh embedded backend holding `objects` (name, color),
/// and the directory the backend lives in.
async fn store_with(objects: &[(&str, &str)]) -> (CachedStore, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    let store = CachedStore::new(backend.clone());
    for (name, color) in objects {
        let bytes = store
            .encode(&configmaps(), &mut configmap(name, color))
            .unwrap();
        let key = format!("/registry/configmaps/ns/{name}");
        backend.create(&key, bytes).await.unwrap();
    }
    (store, dir)
}

#[test]
fn the_backend_filter_keeps_what_it_decoded_for_the_page() {
    let entry = configmaps();
    let scope = Scope::new(&entry, Some("ns"));
    let opts = blue();
    let filter = Decoding::new(&entry, matcher(scope, &opts.labels, &opts.fields).unwrap());
    let predicate = filter.predicate();
    let kv = |name: &str, color: &str| KeyValue {
        key: format!("/registry/configmaps/ns/{name}"),
        value: StorageMediaType::Json
            .encode(&entry, &mut configmap(name, color))
            .unwrap(),
        create_revision: 3,
        mod_revision: 4,
    };
    let (a, b) = (kv("a", "blue"), kv("b", "red"));
    assert!(predicate(&a));
    assert!(!predicate(&b));
    let object = filter.take(&a).unwrap();
    assert_eq!(object.metadata().resource_version.as_deref(), Some("4"));
    // Taken once: the page owns it now; nothing kept for what did not pass.
    assert!(filter.take(&a).is_none());
    assert!(filter.take(&b).is_none());
}

#[tokio::test]
async fn a_backend_list_with_selectors_pages_as_the_cache_does() {
    let objects = [("a", "blue"), ("b", "red"), ("c", "blue"), ("d", "blue")];
    let entry = configmaps();
    let scope = Scope::new(&entry, Some("ns"));
    let (cached, _dir) = store_with(&objects).await;
    let uncached = cached.clone().with_uncached(|_| true);
    for store in [&cached, &uncached] {
        let first = store
            .list(scope, ListOptions { limit: 2, ..blue() })
            .await
            .unwrap();
        assert_eq!(names(&first), ["a", "c"]);
        let next = ListOptions {
            limit: 2,
            continue_token: first.continue_token.clone(),
            ..blue()
        };
        let second = store.list(scope, next).await.unwrap();
        assert_eq!(names(&second), ["d"]);
        assert_eq!(second.continue_token, None);
        let all = store.list(scope, ListOptions::default()).await.unwrap();
        assert_eq!(names(&all), ["a", "b", "c", "d"]);
    }
}

#[tokio::test]
async fn gets_and_update_hints_come_from_the_store() {
    let entry = configmaps();
    let scope = Scope::new(&entry, Some("ns"));
    let (store, _dir) = store_with(&[("a", "blue")]).await;
    let key = "/registry/configmaps/ns/a";
    // No cache has started for a write alone.
    assert!(store.current_hint(scope, key).is_none());
    let got = store.get(scope, "a").await.unwrap();
    assert_eq!(got.field_text("metadata.name").as_deref(), Some("a"));
    assert!(store.get(scope, "missing").await.is_err());
    let current = store
        .current(key, scope.target("a"))
        .await
        .unwrap()
        .unwrap();
    assert!(!current.may_be_stale());
    let uncached = store.clone().with_uncached(|_| true);
    assert!(uncached.current_hint(scope, key).is_none());
}

// Two workers: the cache's feed runs beside the writer, and often sees the
// write's event before the writer has the store's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_takes_what_the_store_writes_from_the_writer() {
    let (store, _dir) = store_with(&[("old", "red")]).await;
    let entry = configmaps();
    let scope = Scope::new(&entry, Some("ns"));
    let cache = store.listed(&entry).await;
    let key = "/registry/configmaps/ns/a";
    let written = store
        .create(scope, "a", configmap("a", "blue"))
        .await
        .unwrap();
    let created = written.revision().unwrap();
    assert!(cache.wait_fresh(created).await);
    let kept = cache.get(key).unwrap().unwrap();
    assert_eq!(kept.json().unwrap(), written.json().unwrap());
    assert_eq!(kept.revision(), Some(created));
    // An update, and a guaranteed update that writes.
    let current = store
        .current(key, scope.target("a"))
        .await
        .unwrap()
        .unwrap();
    let updated = store
        .update(scope, "a", &current, configmap("a", "green"))
        .await
        .unwrap()
        .unwrap();
    let outcome = store
        .guaranteed_update(scope, "a", &mut |current| {
            let mut object = current.unwrap();
            object.metadata_mut().labels = None;
            Ok(Change::Write(object))
        })
        .await
        .unwrap();
    let Outcome::Written(last) = outcome else {
        panic!("the guaranteed update wrote nothing");
    };
    let revision = last.revision().unwrap();
    assert!(revision > updated.revision().unwrap());
    assert!(cache.wait_fresh(revision).await);
    // The events take the writers' objects; one whose writer is slower
    // than the cache's wait for it (a loaded machine) is decoded instead,
    // as it must be, so not all three need to have been handed over.
    let handed = cache.handed_over();
    assert!((1..=3).contains(&handed), "{handed} of 3 handed over");
    let kept = cache.get(key).unwrap().unwrap();
    assert_eq!(kept.json().unwrap(), last.json().unwrap());
    // A write the cache did not see coming (straight to the backend) is
    // decoded, as before.
    let bytes = store.encode(&entry, &mut configmap("b", "blue")).unwrap();
    let kv = store
        .backend()
        .create("/registry/configmaps/ns/b", bytes)
        .await
        .unwrap();
    assert!(cache.wait_fresh(kv.mod_revision).await);
    assert_eq!(cache.handed_over(), 3);
    assert!(cache.get("/registry/configmaps/ns/b").unwrap().is_some());
    // Deleting through the store removes it from the cache.
    assert!(store.delete(scope, "a", revision).await.unwrap());
    let now = store.current_revision().await.unwrap();
    assert!(cache.wait_fresh(now).await);
    assert!(cache.get(key).unwrap().is_none());
}
