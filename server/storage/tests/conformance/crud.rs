//! Create, get, update, delete and guaranteed update.

use futures::future::join_all;
use kapi_storage::{Storage, StorageError, Update};

use super::b;

pub async fn create_and_get(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    let before = store.current_revision().await.unwrap();
    let created = store.create(&key, b("one")).await.unwrap();
    assert_eq!(created.key, key);
    assert_eq!(created.value, b("one"));
    assert!(created.mod_revision > before);
    assert_eq!(created.create_revision, created.mod_revision);
    assert_eq!(store.get(&key).await.unwrap(), Some(created));
    assert_eq!(store.get(&format!("{p}missing")).await.unwrap(), None);
}

pub async fn create_twice_is_already_exists(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    let first = store.create(&key, b("one")).await.unwrap();
    let err = store.create(&key, b("two")).await.unwrap_err();
    assert_eq!(err, StorageError::AlreadyExists(key.clone()));
    assert_eq!(store.get(&key).await.unwrap(), Some(first));
}

pub async fn update_with_stale_revision_is_conflict(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    let v1 = store.create(&key, b("one")).await.unwrap();
    let v2 = store.update(&key, b("two"), v1.mod_revision).await.unwrap();
    assert!(v2.mod_revision > v1.mod_revision);
    assert_eq!(v2.create_revision, v1.create_revision);
    let err = store
        .update(&key, b("three"), v1.mod_revision)
        .await
        .unwrap_err();
    assert_eq!(err, StorageError::Conflict(key.clone()));
    assert_eq!(store.get(&key).await.unwrap(), Some(v2));
}

pub async fn update_of_missing_key_is_not_found(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    let err = store.update(&key, b("one"), 1).await.unwrap_err();
    assert_eq!(err, StorageError::NotFound(key));
}

/// Assumes no other writer while it runs: it checks the store revision stays.
pub async fn noop_update_writes_nothing(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    let v1 = store.create(&key, b("same")).await.unwrap();
    let revision = store.current_revision().await.unwrap();
    let again = store
        .update(&key, b("same"), v1.mod_revision)
        .await
        .unwrap();
    assert_eq!(again, v1);
    let kept = store
        .guaranteed_update(&key, &mut |_| Ok(Update::Write(b("same"))))
        .await
        .unwrap();
    assert_eq!(kept, Some(v1));
    assert_eq!(store.current_revision().await.unwrap(), revision);
}

pub async fn delete_checks_revision_and_returns_last_value(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    let v1 = store.create(&key, b("one")).await.unwrap();
    let v2 = store.update(&key, b("two"), v1.mod_revision).await.unwrap();
    let err = store.delete(&key, Some(v1.mod_revision)).await.unwrap_err();
    assert_eq!(err, StorageError::Conflict(key.clone()));
    assert_eq!(store.get(&key).await.unwrap(), Some(v2.clone()));
    let last = store.delete(&key, Some(v2.mod_revision)).await.unwrap();
    assert_eq!(last, v2);
    assert_eq!(store.get(&key).await.unwrap(), None);
    // Without a precondition.
    store.create(&key, b("three")).await.unwrap();
    let last = store.delete(&key, None).await.unwrap();
    assert_eq!(last.value, b("three"));
}

pub async fn delete_of_missing_key_is_not_found(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    assert_eq!(
        store.delete(&key, None).await.unwrap_err(),
        StorageError::NotFound(key.clone())
    );
    assert_eq!(
        store.delete(&key, Some(5)).await.unwrap_err(),
        StorageError::NotFound(key)
    );
}

pub async fn recreate_after_delete_is_a_new_incarnation(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    let first = store.create(&key, b("one")).await.unwrap();
    store.delete(&key, None).await.unwrap();
    let second = store.create(&key, b("two")).await.unwrap();
    assert!(second.create_revision > first.create_revision);
    assert_eq!(second.create_revision, second.mod_revision);
}

pub async fn revisions_only_grow(store: &dyn Storage, p: &str) {
    let mut last = store.current_revision().await.unwrap();
    let key = format!("{p}x");
    let mut kv = store.create(&key, b("0")).await.unwrap();
    for i in 1..10 {
        assert!(kv.mod_revision > last);
        last = kv.mod_revision;
        assert!(store.current_revision().await.unwrap() >= last);
        kv = store
            .update(&key, b(&i.to_string()), kv.mod_revision)
            .await
            .unwrap();
    }
    let deleted = store.delete(&key, None).await.unwrap();
    assert!(store.current_revision().await.unwrap() > deleted.mod_revision);
}

pub async fn guaranteed_update_paths(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    // Absent + Keep: nothing.
    let none = store
        .guaranteed_update(&key, &mut |cur| {
            assert!(cur.is_none());
            Ok(Update::Keep)
        })
        .await
        .unwrap();
    assert_eq!(none, None);
    // Absent + Write: creates.
    let created = store
        .guaranteed_update(&key, &mut |_| Ok(Update::Write(b("one"))))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(created.value, b("one"));
    // Errors of the closure come back as they are.
    let err = store
        .guaranteed_update(&key, &mut |_| Err(StorageError::Internal("no".into())))
        .await
        .unwrap_err();
    assert_eq!(err, StorageError::Internal("no".into()));
    // Delete.
    let gone = store
        .guaranteed_update(&key, &mut |_| Ok(Update::Delete))
        .await
        .unwrap();
    assert_eq!(gone, None);
    assert_eq!(store.get(&key).await.unwrap(), None);
}

/// 8 writers increment one counter 25 times each through guaranteed_update:
/// every increment must land exactly once despite the conflicts.
pub async fn guaranteed_update_under_concurrent_writers(store: &dyn Storage, p: &str) {
    let key = format!("{p}counter");
    store.create(&key, b("0")).await.unwrap();
    let writer = |_| {
        let key = key.clone();
        async move {
            for _ in 0..25 {
                store
                    .guaranteed_update(&key, &mut |cur| {
                        let cur = cur.expect("counter exists");
                        let n: u64 = std::str::from_utf8(&cur.value).unwrap().parse().unwrap();
                        Ok(Update::Write(b(&(n + 1).to_string())))
                    })
                    .await
                    .unwrap();
            }
        }
    };
    join_all((0..8).map(writer)).await;
    let end = store.get(&key).await.unwrap().unwrap();
    assert_eq!(end.value, b("200"));
}

/// Creates of one key racing each other: exactly one wins, the others get
/// AlreadyExists (in the embedded store they share one commit batch).
pub async fn concurrent_creates_of_one_key_one_wins(store: &dyn Storage, p: &str) {
    let key = format!("{p}x");
    let attempts = (0..10).map(|i| store.create(&key, b(&i.to_string())));
    let results = join_all(attempts).await;
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    for result in &results {
        if let Err(err) = result {
            assert_eq!(err, &StorageError::AlreadyExists(key.clone()));
        }
    }
    assert_eq!(store.get(&key).await.unwrap().as_ref(), Some(winners[0]));
}

/// Many gets at once (which the etcd store sends together): each answers
/// for its own key, present or not, and each sees every write that ended
/// before it was made.
pub async fn concurrent_gets_answer_each_for_its_key(store: &dyn Storage, p: &str) {
    let mut written = Vec::new();
    for i in 0..60 {
        let key = format!("{p}k{i:03}");
        written.push(store.create(&key, b(&format!("v{i}"))).await.unwrap());
    }
    let reads = (0..300).map(|i| async move {
        let key = format!("{p}k{:03}", i % 120);
        (key.clone(), store.get(&key).await.unwrap())
    });
    for (key, got) in join_all(reads).await {
        let expected = written.iter().find(|kv| kv.key == key);
        assert_eq!(got.as_ref(), expected, "{key}");
    }
    // A write that ended is seen by every get made after it, however the
    // gets are grouped.
    for round in 0..5 {
        let updated = store
            .update(
                &written[round].key,
                b(&format!("r{round}")),
                written[round].mod_revision,
            )
            .await
            .unwrap();
        written[round] = updated.clone();
        let reads = (0..40).map(|_| store.get(&updated.key));
        for got in join_all(reads).await {
            assert_eq!(got.unwrap().as_ref(), Some(&updated));
        }
    }
}
