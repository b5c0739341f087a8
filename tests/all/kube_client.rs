//! End to end with the kube-rs client (`kube` crate) against the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kapi_test_support::Server;
use kube::Client;
use kube::api::{
    Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::runtime::watcher;

fn client(s: &Server) -> Client {
    crate::kube_client(s)
}

fn configmap(name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).into(), (*v).into()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect::<BTreeMap<_, _>>(),
        ),
        ..ConfigMap::default()
    }
}

#[tokio::test]
async fn crud_and_selectors() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let api: Api<ConfigMap> = Api::namespaced(client(&s), "default");

    let created = api
        .create(
            &PostParams::default(),
            &configmap("one", &[("app", "web")], &[("a", "1")]),
        )
        .await
        .unwrap();
    assert!(created.metadata.uid.is_some() && created.metadata.resource_version.is_some());
    api.create(
        &PostParams::default(),
        &configmap("two", &[("app", "db")], &[]),
    )
    .await
    .unwrap();
    let err = api
        .create(&PostParams::default(), &configmap("one", &[], &[]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409 && s.reason == "AlreadyExists"),
        "{err:?}"
    );

    let got = api.get("one").await.unwrap();
    assert_eq!(got.data.unwrap()["a"], "1");

    let web = api
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap();
    assert_eq!(
        web.items
            .iter()
            .map(|c| c.metadata.name.clone().unwrap())
            .collect::<Vec<_>>(),
        ["one"]
    );
    let not_web = api
        .list(&ListParams::default().labels("app notin (web)"))
        .await
        .unwrap();
    assert_eq!(not_web.items.len(), 1);
    let by_name = api
        .list(&ListParams::default().fields("metadata.name=two"))
        .await
        .unwrap();
    assert_eq!(by_name.items.len(), 1);

    // Pagination: limit 1 gives a continue token, the second page the rest.
    let page = api.list(&ListParams::default().limit(1)).await.unwrap();
    assert_eq!(page.items.len(), 1);
    let token = page.metadata.continue_.clone().unwrap();
    let rest = api
        .list(&ListParams::default().limit(1).continue_token(&token))
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);
    assert_ne!(rest.items[0].metadata.name, page.items[0].metadata.name);

    let patched = api
        .patch(
            "one",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"data": {"b": "2"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data.as_ref().unwrap().len(), 2);

    let mut stale = created.clone();
    stale.data = Some([("x".to_owned(), "y".to_owned())].into());
    let err = api
        .replace("one", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 409 && s.reason == "Conflict"),
        "{err:?}"
    );

    let deleted = api.delete("one", &DeleteParams::default()).await.unwrap();
    let status = deleted
        .right()
        .expect("a ConfigMap delete answers with a Status");
    assert_eq!(
        status.status,
        Some(kube::core::response::StatusSummary::Success)
    );
    let err = api.get("one").await.unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 404 && s.reason == "NotFound"),
        "{err:?}"
    );
}

#[tokio::test]
async fn raw_watch_sees_added_modified_deleted() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let api: Api<ConfigMap> = Api::namespaced(client(&s), "default");
    let list = api.list(&ListParams::default()).await.unwrap();
    let rv = list.metadata.resource_version.unwrap();
    let mut events = api
        .watch(&WatchParams::default().timeout(30), &rv)
        .await
        .unwrap()
        .boxed();

    api.create(&PostParams::default(), &configmap("w", &[], &[("a", "1")]))
        .await
        .unwrap();
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"data": {"a": "2"}})),
    )
    .await
    .unwrap();
    api.delete("w", &DeleteParams::default()).await.unwrap();

    let mut seen = Vec::new();
    while seen.len() < 3 {
        let event = tokio::time::timeout(Duration::from_secs(10), events.try_next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        match event {
            WatchEvent::Added(cm) => seen.push(("ADDED", cm.data.unwrap()["a"].clone())),
            WatchEvent::Modified(cm) => seen.push(("MODIFIED", cm.data.unwrap()["a"].clone())),
            WatchEvent::Deleted(cm) => seen.push(("DELETED", cm.data.unwrap()["a"].clone())),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("watch error {e:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            ("ADDED", "1".to_owned()),
            ("MODIFIED", "2".to_owned()),
            ("DELETED", "2".to_owned())
        ]
    );

    // A watch from a revision that never existed is refused.
    let err = api.watch(&WatchParams::default(), "not-a-number").await;
    assert!(err.is_err());
}

#[tokio::test]
async fn watcher_runtime_with_list_watch_and_streaming_lists() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let api: Api<Pod> = Api::namespaced(client(&s), "default");
    let cms: Api<ConfigMap> = Api::namespaced(client(&s), "default");
    cms.create(&PostParams::default(), &configmap("before", &[], &[]))
        .await
        .unwrap();
    for config in [
        watcher::Config::default(),
        watcher::Config::default().streaming_lists(),
    ] {
        let mut stream = watcher(cms.clone(), config).boxed();
        // The initial state arrives, then InitDone.
        let mut initial = Vec::new();
        loop {
            match tokio::time::timeout(Duration::from_secs(10), stream.try_next())
                .await
                .unwrap()
                .unwrap()
                .unwrap()
            {
                watcher::Event::Init => {}
                watcher::Event::InitApply(cm) => initial.push(cm.metadata.name.unwrap()),
                watcher::Event::InitDone => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(initial.contains(&"before".to_owned()), "{initial:?}");
        let name = format!("live-{}", initial.len());
        cms.create(&PostParams::default(), &configmap(&name, &[], &[]))
            .await
            .unwrap();
        let event = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(
            matches!(&event, watcher::Event::Apply(cm) if cm.metadata.name.as_deref() == Some(name.as_str())),
            "{event:?}"
        );
    }
    assert!(
        api.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}
