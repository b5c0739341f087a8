#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use bytes::Bytes;
use kapi_api_types::core::v1::ConfigMap;
use kapi_runtime::scheme::{KindEntry, Scheme};
use kapi_storage::Storage;
use kapi_storage::embedded::EmbeddedStore;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::TryRecvError;

use super::state::{MAX_EVENTS, Objects, State, WATCHER_BUFFER};
use super::*;
use crate::body::Object;
use crate::selectors::Selectable;

fn configmaps() -> KindEntry {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    scheme.get("", "v1", "configmaps").unwrap().clone()
}

fn configmap(namespace: &str, name: &str, color: &str, rv: u64) -> Object {
    let typed: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": rv.to_string(),
                     "labels": {"color": color}},
        "data": {"k": "v"}
    }))
    .unwrap();
    Object::new(Box::new(typed))
}

fn key(namespace: &str, name: &str) -> Arc<str> {
    Arc::from(format!("/registry/configmaps/{namespace}/{name}"))
}

fn blue(object: &dyn Selectable) -> bool {
    object.label("color") == Some("blue")
}

fn snapshot(objects: &[(&str, &str, &str)]) -> Snapshot {
    let mut map = Objects::new();
    for (i, (ns, name, color)) in objects.iter().enumerate() {
        map.insert(
            key(ns, name),
            Cached::new(configmap(ns, name, color, i as u64)),
        );
    }
    Snapshot {
        objects: map,
        revision: 10,
        indexes: Default::default(),
    }
}

fn names(page: &Page) -> Vec<String> {
    page.items
        .iter()
        .map(|c| c.field_text("metadata.name").unwrap())
        .collect()
}

#[test]
fn pages_stay_in_their_prefix_cut_at_the_limit_and_count_the_rest() {
    let s = snapshot(&[
        ("a", "1", "blue"),
        ("a", "2", "red"),
        ("a", "3", "blue"),
        ("a", "4", "red"),
        ("ab", "5", "blue"),
    ]);
    let all = s.page("/registry/configmaps/a/", None, 0, None, None);
    assert_eq!(names(&all), ["1", "2", "3", "4"]);
    assert!(all.continue_after.is_none() && all.remaining.is_none());

    let first = s.page("/registry/configmaps/a/", None, 3, None, None);
    assert_eq!(names(&first), ["1", "2", "3"]);
    assert_eq!(
        first.continue_after.as_deref(),
        Some("/registry/configmaps/a/3")
    );
    assert_eq!(first.remaining, Some(1));
    let next = s.page(
        "/registry/configmaps/a/",
        first.continue_after.as_deref(),
        3,
        None,
        None,
    );
    assert_eq!(names(&next), ["4"]);
    assert!(next.continue_after.is_none());

    // A page that ends exactly at the last object has no continuation.
    let exact = s.page("/registry/configmaps/a/", None, 4, None, None);
    assert!(exact.continue_after.is_none() && exact.remaining.is_none());

    // With a selector: limit counts matches, and the rest is not counted.
    let blues = s.page("/registry/configmaps/", None, 1, Some(&blue), None);
    assert_eq!(names(&blues), ["1"]);
    assert_eq!(
        blues.continue_after.as_deref(),
        Some("/registry/configmaps/a/1")
    );
    assert_eq!(blues.remaining, None);
    let last_blue = s.page(
        "/registry/configmaps/a/",
        Some("/registry/configmaps/a/1"),
        1,
        Some(&blue),
        None,
    );
    assert_eq!(names(&last_blue), ["3"]);
    assert!(last_blue.continue_after.is_none(), "no blue after 3 in a");
}

fn event(type_: EventType, name: &str, color: &str, prev: Option<&str>, rev: u64) -> Arc<Event> {
    let prev = prev.map(|c| Cached::new(configmap("a", name, c, rev - 1)));
    Event::new(
        key("a", name),
        rev,
        type_,
        Cached::new(configmap("a", name, color, rev)),
        prev,
    )
}

#[test]
fn selector_changes_are_seen_as_additions_and_deletions() {
    let prefix = "/registry/configmaps/a/";
    let seen =
        |e: &Event| visible(e, prefix, Some(&blue)).map(|(t, c)| (t, c.object().unwrap().clone()));

    let into = event(EventType::Modified, "x", "blue", Some("red"), 5);
    assert_eq!(seen(&into).unwrap().0, EventType::Added);

    let out = event(EventType::Modified, "x", "red", Some("blue"), 6);
    let (type_, last) = seen(&out).unwrap();
    assert_eq!(type_, EventType::Deleted);
    // The state it had, at the revision it left at.
    assert!(blue(&last));
    assert_eq!(last.metadata().resource_version.as_deref(), Some("6"));

    assert!(seen(&event(EventType::Modified, "x", "red", Some("red"), 7)).is_none());
    assert_eq!(
        seen(&event(EventType::Modified, "x", "blue", Some("blue"), 8))
            .unwrap()
            .0,
        EventType::Modified
    );
    assert!(
        visible(
            &event(EventType::Added, "x", "blue", None, 9),
            "/registry/configmaps/b/",
            None
        )
        .is_none()
    );
    // Without selectors an event goes out as it is: its frames are shared.
    let plain = event(EventType::Added, "y", "red", None, 10);
    let (_, object) = visible(&plain, prefix, None).unwrap();
    assert!(Arc::ptr_eq(&object, &plain.object));
}

#[test]
fn the_window_serves_revisions_from_the_list_on() {
    let mut state = State::new(&[]);
    state.replace(Default::default(), Default::default(), 4);
    assert!(state.events_after(3).is_none(), "before the list");
    assert_eq!(state.events_after(4).unwrap().len(), 0);
    for rev in 5..=7 {
        state.apply(event(
            EventType::Added,
            &format!("n{rev}"),
            "red",
            None,
            rev,
        ));
    }
    let revisions = |after| -> Vec<u64> {
        state
            .events_after(after)
            .unwrap()
            .iter()
            .map(|e| e.revision)
            .collect()
    };
    assert_eq!(revisions(4), [5, 6, 7]);
    assert_eq!(revisions(6), [7]);
    assert_eq!(revisions(9), Vec::<u64>::new());
    assert_eq!(state.objects.len(), 3);
    assert_eq!(state.revision, 7);
}

/// Writes a ConfigMap straight into the store, as the registry stores it.
async fn put(store: &EmbeddedStore, namespace: &str, name: &str, color: &str) -> u64 {
    let mut object = configmap(namespace, name, color, 0);
    let bytes = crate::stored::StorageMediaType::Json
        .encode(&configmaps(), &mut object)
        .unwrap();
    let key = key(namespace, name);
    match store.get(&key).await.unwrap() {
        Some(kv) => {
            store
                .update(&key, bytes, kv.mod_revision)
                .await
                .unwrap()
                .mod_revision
        }
        None => store.create(&key, bytes).await.unwrap().mod_revision,
    }
}

#[tokio::test]
async fn a_cache_follows_its_store_and_reports_progress() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    put(&store, "a", "one", "red").await;
    let caches = Caches::new(store.clone());
    let cache = caches.of(&configmaps());
    assert!(cache.wait_fresh(store.local_revision().unwrap()).await);
    assert_eq!(cache.snapshot().unwrap().objects.len(), 1);
    let mut sub = cache
        .subscribe(Some(cache.snapshot().unwrap().revision), None)
        .unwrap();

    let rev = put(&store, "a", "one", "blue").await;
    let modified = sub.live.recv().await.unwrap();
    assert_eq!(
        (modified.type_, modified.revision),
        (EventType::Modified, rev)
    );
    assert!(blue(&*modified.object));
    assert!(!blue(&**modified.prev.as_ref().unwrap()));
    assert_eq!(
        modified
            .object
            .object()
            .unwrap()
            .metadata()
            .resource_version,
        Some(rev.to_string())
    );

    let gone = store.delete(&key("a", "one"), None).await.unwrap();
    let deleted = sub.live.recv().await.unwrap();
    assert_eq!(deleted.type_, EventType::Deleted);
    assert!(deleted.revision > gone.mod_revision);
    // The last state, at the revision of its deletion.
    assert_eq!(
        deleted.object.object().unwrap().metadata().resource_version,
        Some(deleted.revision.to_string())
    );
    assert!(cache.get(&key("a", "one")).unwrap().is_none());

    // A write elsewhere moves the cache's revision without an event.
    let other = store
        .create("/registry/secrets/a/s", Bytes::from_static(b"{}"))
        .await
        .unwrap();
    assert!(cache.wait_fresh(other.mod_revision).await);
    assert_eq!(sub.live.try_recv().unwrap_err(), TryRecvError::Empty);

    // A later watcher resumes from the window.
    let resumed = cache.subscribe(Some(rev - 1), None).unwrap();
    let Start::History(events) = resumed.start else {
        panic!("not from the window")
    };
    assert_eq!(
        events.iter().map(|e| e.type_).collect::<Vec<_>>(),
        [EventType::Modified, EventType::Deleted]
    );
    assert!(
        cache.subscribe(Some(rev - 2), None).is_none(),
        "before the window"
    );
}

#[tokio::test]
async fn a_watcher_that_falls_behind_is_cut_off_without_slowing_others() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    let caches = Caches::new(store.clone());
    let cache = caches.of(&configmaps());
    assert!(cache.wait_fresh(0).await);
    let mut slow = cache.subscribe(None, None).unwrap();
    let mut fast = cache.subscribe(None, None).unwrap();
    // The other watcher keeps up with every write while this one reads none.
    for i in 0..=WATCHER_BUFFER {
        let rev = put(&store, "a", &format!("n{i}"), "red").await;
        assert_eq!(fast.live.recv().await.unwrap().revision, rev);
    }
    assert!(matches!(
        slow.live.recv().await,
        Err(tokio::sync::broadcast::error::RecvError::Lagged(_))
    ));
}

#[tokio::test]
async fn a_new_cache_is_waited_for_until_it_has_listed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
    for name in ["a", "b", "c"] {
        put(&store, name, "one", "red").await;
    }
    let caches = Caches::new(store.clone());
    let cache = caches.of(&configmaps());
    // Before its first list a cache cannot say whether it serves consistent
    // reads; a reader waits for the list rather than reading the store beside it.
    assert!(cache.listed().await);
    assert!(cache.serves_consistent_reads());
    assert_eq!(cache.snapshot().unwrap().objects.len(), 3);
    assert!(cache.listed().await, "a listed cache answers at once");
}

fn pod(namespace: &str, name: &str, node: Option<&str>) -> Object {
    let mut json = serde_json::json!({
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "i"}]}
    });
    if let Some(node) = node {
        json["spec"]["nodeName"] = node.into();
    }
    let typed: kapi_api_types::core::v1::Pod = serde_json::from_value(json).unwrap();
    Object::new(Box::new(typed))
}

fn pod_event(
    type_: EventType,
    namespace: &str,
    name: &str,
    node: Option<&str>,
    rev: u64,
) -> Arc<Event> {
    Event::new(
        Arc::from(format!("/registry/pods/{namespace}/{name}")),
        rev,
        type_,
        Cached::new(pod(namespace, name, node)),
        None,
    )
}

#[test]
fn an_index_narrows_a_page_to_the_same_answer_as_a_scan() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let pods = scheme.get("", "v1", "pods").unwrap().clone();
    assert_eq!(pods.info.indexed_fields, ["spec.nodeName"]);
    let indexed = pods.info.indexed_fields;
    let mut state = State::new(indexed);
    let empty = (Objects::new(), super::index::Indexes::new(indexed));
    state.replace(empty, Default::default(), 1);
    use EventType::{Added, Deleted, Modified};
    let events = [
        pod_event(Added, "a", "p1", Some("n1"), 2),
        pod_event(Added, "a", "p2", None, 3),
        pod_event(Added, "b", "p3", Some("n1"), 4),
        pod_event(Added, "a", "p4", Some("n2"), 5),
        pod_event(Added, "a", "p5", Some("n1"), 6),
        // Scheduled, moved off a node, deleted.
        pod_event(Modified, "a", "p2", Some("n1"), 7),
        pod_event(Modified, "a", "p4", Some(""), 8),
        pod_event(Deleted, "a", "p5", Some("n1"), 9),
    ];
    for event in events {
        state.apply(event);
    }
    let snapshot = state.snapshot();
    let selects = [
        "spec.nodeName=n1",
        "spec.nodeName==n2",
        "spec.nodeName=",
        "spec.nodeName=n1,metadata.name!=p2",
        "spec.nodeName!=n1",
        "metadata.name=p3",
    ];
    for select in selects {
        let fields = crate::selectors::field::FieldSelector::parse(select).unwrap();
        let matches =
            |o: &dyn Selectable| fields.matches(|f| Some(o.field_text(f).unwrap_or_default()));
        for prefix in ["/registry/pods/", "/registry/pods/a/"] {
            for limit in [0, 1] {
                let scanned = snapshot.page(prefix, None, limit, Some(&matches), None);
                let everything = crate::selectors::label::LabelSelector::everything();
                let selectors = Some((&everything, &fields));
                let narrowed = snapshot.page(prefix, None, limit, Some(&matches), selectors);
                assert_eq!(names(&narrowed), names(&scanned), "{select} under {prefix}");
                assert_eq!(narrowed.continue_after, scanned.continue_after, "{select}");
            }
        }
    }
    let narrow = |select: &str| {
        let fields = crate::selectors::field::FieldSelector::parse(select).unwrap();
        let everything = crate::selectors::label::LabelSelector::everything();
        let lower = std::ops::Bound::Included("/registry/pods/");
        let narrowed = snapshot
            .indexes
            .narrow(&fields, &everything, "/registry/pods/", lower, 100);
        narrowed.map(|(index, keys)| (index, keys.map(|k| k.to_string()).collect::<Vec<_>>()))
    };
    let (index, keys) = narrow("spec.nodeName=n1").unwrap();
    assert_eq!(index.to_string(), "f:spec.nodeName");
    assert_eq!(
        keys,
        [
            "/registry/pods/a/p1",
            "/registry/pods/a/p2",
            "/registry/pods/b/p3"
        ]
    );
    assert!(narrow("spec.nodeName=n9").unwrap().1.is_empty());
    assert!(narrow("spec.nodeName!=n1").is_none());
}

fn labelled(namespace: &str, name: &str, labels: &[(&str, &str)]) -> Arc<Cached> {
    let labels: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect();
    let typed: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": namespace, "labels": labels}
    }))
    .unwrap();
    Cached::new(Object::new(Box::new(typed)))
}

#[test]
fn a_label_index_narrows_a_page_to_the_same_answer_as_a_scan() {
    let mut state = State::new(&[]);
    let empty = (Objects::new(), super::index::Indexes::new(&[]));
    state.replace(empty, Default::default(), 1);
    let mut rev = 1;
    let mut apply = |type_, namespace: &str, name: &str, labels: &[(&str, &str)], prev| {
        rev += 1;
        let key = key(namespace, name);
        let object = labelled(namespace, name, labels);
        state.apply(Event::new(key, rev, type_, object, prev));
    };
    use EventType::{Added, Deleted, Modified};
    // 40 objects in namespaces a and b: most green, a few blue or red, some
    // of the blue ones also "tier=web".
    for i in 0..40 {
        let namespace = if i % 3 == 0 { "b" } else { "a" };
        let color = match i % 10 {
            1 => "blue",
            2 | 5 => "red",
            _ => "green",
        };
        let mut labels = vec![("color", color)];
        if i % 20 == 1 {
            labels.push(("tier", "web"));
        }
        apply(Added, namespace, &format!("cm{i:02}"), &labels, None);
    }
    // Relabelled (blue to red, a label dropped, one added) and deleted.
    apply(Modified, "a", "cm11", &[("color", "red")], None);
    apply(Modified, "a", "cm22", &[], None);
    apply(
        Modified,
        "a",
        "cm07",
        &[("color", "blue"), ("tier", "web")],
        None,
    );
    apply(Deleted, "a", "cm31", &[("color", "blue")], None);
    let snapshot = state.snapshot();

    let selects = [
        "color=blue",
        "color==red",
        "color in (blue,red)",
        "color in (red,blue,black)",
        "color=blue,tier=web",
        "tier=web,color in (blue,green)",
        "color=black",
        "color=green",
        "color!=green",
        "color",
        "!tier",
        "color notin (green)",
    ];
    for select in selects {
        let labels = crate::selectors::label::LabelSelector::parse(select).unwrap();
        let everything = crate::selectors::field::FieldSelector::everything();
        let matches = |o: &dyn Selectable| labels.matches_by(|key| o.label(key));
        for prefix in ["/registry/configmaps/", "/registry/configmaps/a/"] {
            for limit in [0, 1, 2, 5] {
                // Every page, each from where the one before it ended.
                let mut after: Option<Arc<str>> = None;
                let (mut scanned, mut narrowed) = (Vec::new(), Vec::new());
                loop {
                    let page = |selectors| {
                        snapshot.page(prefix, after.as_deref(), limit, Some(&matches), selectors)
                    };
                    let (scan, narrow) = (page(None), page(Some((&labels, &everything))));
                    assert_eq!(narrow.continue_after, scan.continue_after, "{select}");
                    scanned.extend(names(&scan));
                    narrowed.extend(names(&narrow));
                    after = scan.continue_after;
                    if after.is_none() {
                        break;
                    }
                }
                assert_eq!(narrowed, scanned, "{select} under {prefix}, limit {limit}");
            }
        }
    }

    let narrow = |select: &str| {
        let labels = crate::selectors::label::LabelSelector::parse(select).unwrap();
        let everything = crate::selectors::field::FieldSelector::everything();
        let lower = std::ops::Bound::Included("/registry/configmaps/");
        let prefix = "/registry/configmaps/";
        let narrowed =
            snapshot
                .indexes
                .narrow(&everything, &labels, prefix, lower, snapshot.objects.len());
        narrowed.map(|(index, keys)| (index.to_string(), keys.count()))
    };
    // blue: cm01, cm21, cm07 (cm11 turned red, cm31 deleted).
    assert_eq!(narrow("color=blue"), Some(("l:color".to_owned(), 3)));
    // tier=web: cm01, cm07, cm21 (cm07 gained it) is no smaller than blue;
    // black holds none, the fewest.
    assert_eq!(narrow("color=blue,tier=web").unwrap().0, "l:color");
    assert_eq!(
        narrow("color=black,tier=web"),
        Some(("l:color".to_owned(), 0))
    );
    assert_eq!(narrow("color=red,tier=web"), Some(("l:tier".to_owned(), 3)));
    assert_eq!(
        narrow("color in (blue,red)"),
        Some(("l:color".to_owned(), 11))
    );
    // Most objects are green: a scan is as good.
    assert_eq!(narrow("color=green"), None);
    assert_eq!(narrow("color!=green"), None);
    assert_eq!(narrow("tier"), None);
}

#[test]
fn a_triggered_watcher_gets_only_the_events_of_its_value() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let pods = scheme.get("", "v1", "pods").unwrap().clone();
    let mut state = State::new(pods.info.indexed_fields);
    let empty = (
        Objects::new(),
        super::index::Indexes::new(pods.info.indexed_fields),
    );
    state.replace(empty, Default::default(), 1);
    let parse = |s: &str| crate::selectors::field::FieldSelector::parse(s).unwrap();
    let mut n1 = state
        .triggers
        .subscribe(&parse("spec.nodeName=n1"))
        .unwrap();
    let mut n1_again = state
        .triggers
        .subscribe(&parse("spec.nodeName==n1,metadata.name=p1"))
        .unwrap();
    let mut n2 = state
        .triggers
        .subscribe(&parse("spec.nodeName=n2"))
        .unwrap();
    assert!(
        state
            .triggers
            .subscribe(&parse("spec.nodeName!=n1"))
            .is_none()
    );
    assert!(
        state
            .triggers
            .subscribe(&parse("metadata.name=p1"))
            .is_none()
    );
    let mut everyone = state.events.subscribe();

    use EventType::{Added, Deleted, Modified};
    let with_prev = |e: Arc<Event>, node: Option<&str>| {
        let prev = Cached::new(pod("a", "p1", node));
        Event::new(
            e.key.clone(),
            e.revision,
            e.type_,
            e.object.clone(),
            Some(prev),
        )
    };
    state.apply(pod_event(Added, "a", "p1", None, 2));
    state.apply(pod_event(Added, "a", "p2", Some("n2"), 3));
    // Bound to n1: its watchers see it arrive.
    state.apply(with_prev(
        pod_event(Modified, "a", "p1", Some("n1"), 4),
        None,
    ));
    state.apply(with_prev(
        pod_event(Modified, "a", "p1", Some("n1"), 5),
        Some("n1"),
    ));
    state.apply(with_prev(
        pod_event(Deleted, "a", "p1", Some("n1"), 6),
        Some("n1"),
    ));

    let revisions = |rx: &mut broadcast::Receiver<Arc<Event>>| {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| e.revision)
            .collect::<Vec<_>>()
    };
    assert_eq!(revisions(&mut n1), [4, 5, 6]);
    assert_eq!(revisions(&mut n1_again), [4, 5, 6]);
    assert_eq!(revisions(&mut n2), [3]);
    assert_eq!(revisions(&mut everyone), [2, 3, 4, 5, 6]);

    // A relist ends triggered watches as it ends the others.
    state.replace(
        (
            Objects::new(),
            super::index::Indexes::new(pods.info.indexed_fields),
        ),
        Default::default(),
        7,
    );
    assert!(matches!(n1.try_recv(), Err(TryRecvError::Closed)));
}

/// Whether `inner` lies inside `outer`'s buffer (shares its memory).
fn within(inner: &Bytes, outer: &Bytes) -> bool {
    let (start, end) = (
        outer.as_ptr() as usize,
        outer.as_ptr() as usize + outer.len(),
    );
    let at = inner.as_ptr() as usize;
    start <= at && at + inner.len() <= end
}

#[test]
fn an_event_frame_and_its_object_share_one_encoding() {
    let entry = configmaps();
    let cached = Cached::new(configmap("ns", "a", "blue", 7));
    let head: [&[u8]; 3] = [b"{\"type\":\"", b"ADDED", b"\",\"object\":"];
    let frame = cached.json_frame(&head, b"}\n").unwrap();
    let json = cached.json().unwrap().clone();
    assert!(
        within(&json, &frame),
        "the kept JSON is a copy beside the frame"
    );
    assert_eq!(json, cached.object().unwrap().to_json().unwrap());
    let line: serde_json::Value = serde_json::from_slice(&frame).unwrap();
    assert_eq!(line["type"], "ADDED");
    assert_eq!(line["object"]["metadata"]["name"], "a");
    // A second frame (another type, the JSON already kept) copies it.
    let head: [&[u8]; 3] = [b"{\"type\":\"", b"DELETED", b"\",\"object\":"];
    let other = cached.json_frame(&head, b"}\n").unwrap();
    assert!(!within(&json, &other));
    assert_eq!(
        &other[other.len() - json.len() - 2..other.len() - 2],
        &json[..]
    );

    let frame = crate::protobuf::cached_watch_frame(&entry, "ADDED", &cached).unwrap();
    let message = cached.message(&entry).unwrap().unwrap().clone();
    assert!(
        within(&message, &frame),
        "the kept message is a copy beside the frame"
    );
    let expected = crate::protobuf::watch_frame(
        "ADDED",
        &crate::protobuf::encode_object(&entry, &cached.object().unwrap()).unwrap(),
    );
    assert_eq!(&frame[..], &expected[..]);
}

/// The scheme entries of a custom resource with versions `v1` (stored) and
/// `v2`, converted by `conversion`.
fn widget_versions(conversion: serde_json::Value) -> Vec<KindEntry> {
    let version = |name: &str, storage: bool| {
        serde_json::json!({"name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object",
                "x-kubernetes-preserve-unknown-fields": true}}})
    };
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "versions": [version("v1", true), version("v2", false)],
            "conversion": conversion},
        "status": {"acceptedNames": {"plural": "widgets", "singular": "widget",
                                     "kind": "Widget", "listKind": "WidgetList"}}
    });
    crate::custom::kind::entries(&crd, None).unwrap()
}

#[test]
fn an_object_is_converted_once_per_served_version() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let cached = Cached::new(configmap("ns", "a", "blue", 5));
    let calls = AtomicUsize::new(0);
    let convert = |object: &Object| {
        calls.fetch_add(1, Ordering::Relaxed);
        Ok(object.clone())
    };
    let entries = widget_versions(serde_json::json!({"strategy": "None"}));
    let v2 = entries.iter().find(|e| e.info.version == "v2").unwrap();
    let first = cached.served(v2, convert).unwrap();
    let second = cached.served(v2, convert).unwrap();
    assert!(
        Arc::ptr_eq(&first, &second),
        "the second read converts again"
    );
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    // The encodings made for one read are there for the next.
    assert_eq!(
        first.json().unwrap().as_ptr(),
        second.json().unwrap().as_ptr()
    );

    // Another kind (a redefined resource's) converts for itself.
    let redefined = widget_versions(serde_json::json!({"strategy": "None"}));
    let v2_again = redefined.iter().find(|e| e.info.version == "v2").unwrap();
    let third = cached.served(v2_again, convert).unwrap();
    assert!(!Arc::ptr_eq(&first, &third));
    assert_eq!(calls.load(Ordering::Relaxed), 2);

    // A failed conversion is kept as it failed.
    let other = Cached::new(configmap("ns", "b", "blue", 5));
    let fail = |_: &Object| Err::<Object, _>("no".to_owned());
    assert_eq!(other.served(v2, fail).unwrap_err(), "no");
    assert_eq!(other.served(v2, convert).unwrap_err(), "no");
    assert_eq!(calls.load(Ordering::Relaxed), 2);

    // A webhook may answer otherwise next time: its conversions are not kept.
    let hooked = widget_versions(serde_json::json!({"strategy": "Webhook",
        "webhook": {"conversionReviewVersions": ["v1"],
                    "clientConfig": {"url": "https://127.0.0.1:1/convert"}}}));
    let v2_hooked = hooked.iter().find(|e| e.info.version == "v2").unwrap();
    let a = cached.served(v2_hooked, convert).unwrap();
    let b = cached.served(v2_hooked, convert).unwrap();
    assert!(!Arc::ptr_eq(&a, &b));
    assert_eq!(calls.load(Ordering::Relaxed), 4);
}

#[test]
fn an_encoded_object_answers_as_the_decoded_one() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let pods = scheme.get("", "v1", "pods").unwrap().clone();
    let mut object = pod("ns", "p1", Some("node-1"));
    let meta = object.metadata_mut();
    meta.resource_version = Some("42".into());
    meta.labels = Some(
        [("b", "2"), ("a", "1")]
            .map(|(k, v)| (k.into(), v.into()))
            .into(),
    );
    let decoded = Cached::new(object.clone());
    let (head, tail) = json_frame_parts("ADDED");
    let (encoded, frame) = Cached::encoded(object.clone(), &pods, &head, tail);

    // The JSON kept is the frame's, and what a decoded object writes.
    let frame = frame.unwrap();
    let json = encoded.json().unwrap();
    assert_eq!(json, decoded.json().unwrap());
    let inside = frame.as_ptr() as usize..frame.as_ptr() as usize + frame.len();
    assert!(inside.contains(&(json.as_ptr() as usize)));
    assert_eq!(&frame[..], &object_line_bytes("ADDED", json)[..]);

    // Selectors and indexes read the same without decoding.
    assert_eq!(encoded.labels(), [("a", "1"), ("b", "2")]);
    assert_eq!(encoded.labels(), decoded.labels());
    assert_eq!(encoded.revision(), Some(42));
    for key in ["a", "b", "c"] {
        assert_eq!(encoded.label(key), decoded.label(key), "{key}");
    }
    for field in pods
        .info
        .selectable_fields
        .iter()
        .chain(&["metadata.name", "metadata.namespace"])
    {
        assert_eq!(
            Selectable::field_text(&*encoded, field),
            Selectable::field_text(&*decoded, field),
            "{field}"
        );
    }
    assert_eq!(
        Selectable::field_text(&*encoded, "spec.nodeName").as_deref(),
        Some("node-1")
    );

    // Decoded again on demand, equal to the object; one decoding is shared
    // while a reader holds it, and gone when none does.
    let first = encoded.object().unwrap();
    assert_eq!(*first, object);
    let second = encoded.object().unwrap();
    let (ObjectRef::Decoded(a), ObjectRef::Decoded(b)) = (&first, &second) else {
        panic!("an encoded object is not kept decoded");
    };
    assert!(Arc::ptr_eq(a, b));
    let held = a.clone();
    drop((first, second));
    drop(held);
    let ObjectRef::Decoded(again) = encoded.object().unwrap() else {
        panic!("an encoded object is not kept decoded");
    };
    assert_eq!(Arc::strong_count(&again), 1);
    assert_eq!(encoded.clone().into_object().unwrap(), object);

    // Its protobuf message equals the decoded object's.
    assert_eq!(
        encoded.message(&pods).unwrap().unwrap(),
        decoded.message(&pods).unwrap().unwrap()
    );
}

fn object_line_bytes(type_: &str, json: &[u8]) -> Vec<u8> {
    let mut line = format!("{{\"type\":\"{type_}\",\"object\":").into_bytes();
    line.extend_from_slice(json);
    line.extend_from_slice(b"}\n");
    line
}

#[test]
fn the_history_keeps_at_most_its_bound_of_events() {
    let mut state = State::new(&[]);
    state.replace(
        (Objects::new(), super::index::Indexes::new(&[])),
        Default::default(),
        1,
    );
    let cached = Cached::new(configmap("a", "x", "blue", 2));
    let extra = 10;
    for rev in 2..2 + (MAX_EVENTS + extra) as u64 {
        state.apply(Event::new(
            key("a", "x"),
            rev,
            EventType::Modified,
            cached.clone(),
            None,
        ));
    }
    assert_eq!(state.history.len(), MAX_EVENTS);
    // The window starts at the last event dropped: the ten oldest are gone.
    let last_dropped = 1 + extra as u64;
    assert!(state.events_after(last_dropped - 1).is_none());
    let kept = state.events_after(last_dropped).unwrap();
    assert_eq!(kept.len(), MAX_EVENTS);
    assert_eq!(kept[0].revision, last_dropped + 1);
    // Within its bounds, and fresh: nothing more to drop.
    assert_eq!(state.trim().count(), 0);
}
