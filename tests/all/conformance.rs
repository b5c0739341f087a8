//! What the e2e smoke subset (`e2e/smoke.txt`) checked on kapi, now done by
//! tests of our own with kube-rs and kubectl, step by step as the upstream
//! tests (kubernetes 1.32, `test/e2e/...`) do it: the server version, each
//! group's preferred version, watches of configmaps by label, chunked lists,
//! a ResourceQuota through the life of a Secret (with the quota
//! controller's recalculation done as kube-controller-manager does it),
//! PodDisruptionBudgets listed and deleted as a collection across
//! namespaces, the Ingress API's operations, and `kubectl version`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, PodTemplate, ResourceQuota, Secret};
use k8s_openapi::api::networking::v1::Ingress;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kapi_test_support::Server;
use kube::api::{
    Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use serde_json::{Value, json};

fn server() -> Server {
    Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")))
}

fn meta(name: &str, labels: &[(&str, &str)]) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        labels: Some(
            labels
                .iter()
                .map(|(k, v)| ((*k).into(), (*v).into()))
                .collect(),
        ),
        ..ObjectMeta::default()
    }
}

async fn namespace(client: &kube::Client, name: &str) {
    let api: Api<Namespace> = Api::all(client.clone());
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": name}})).unwrap(),
    )
    .await
    .unwrap();
}

/// server_version.go: `/version` has a major and minor version and a
/// semantic git version.
#[tokio::test]
async fn server_version_is_found() {
    let s = server();
    let client = crate::kube_client(&s);
    let info = client.apiserver_version().await.unwrap();
    assert!(!info.major.is_empty() && !info.minor.is_empty(), "{info:?}");
    let version = info.git_version.strip_prefix('v').unwrap_or_default();
    let numbers: Vec<&str> = version.split(['.', '-', '+']).take(3).collect();
    assert!(
        numbers.len() == 3 && numbers.iter().all(|n| n.parse::<u32>().is_ok()),
        "{}",
        info.git_version
    );
}

/// discovery.go: every group of `/apis` names a preferred version among
/// its versions, and `/apis/<group>` names the same one.
#[tokio::test]
async fn each_group_names_its_preferred_version() {
    let s = server();
    let client = crate::kube_client(&s);
    let groups = client.list_api_groups().await.unwrap();
    assert!(groups.groups.len() > 10);
    for group in groups.groups {
        let preferred = group
            .preferred_version
            .clone()
            .expect("a preferred version");
        assert!(
            group
                .versions
                .iter()
                .any(|v| v.version == preferred.version),
            "{group:?}"
        );
        let request = http::Request::get(format!("/apis/{}", group.name))
            .body(Vec::new())
            .unwrap();
        let single: k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroup =
            client.request(request).await.unwrap();
        assert_eq!(single.preferred_version, Some(preferred), "{}", group.name);
    }
}

/// watch.go: three watches (label A, label B, A or B) see exactly the
/// events of the configmaps they select: A added, modified twice, deleted,
/// then B added and deleted.
#[tokio::test]
async fn watches_observe_add_update_delete_of_configmaps() {
    let s = server();
    let client = crate::kube_client(&s);
    namespace(&client, "watch").await;
    let api: Api<ConfigMap> = Api::namespaced(client, "watch");
    let label = "watch-this-configmap";
    let watch = |selector: String| {
        let api = api.clone();
        async move {
            api.watch(&WatchParams::default().labels(&selector), "0")
                .await
                .unwrap()
                .boxed()
        }
    };
    let mut a = watch(format!("{label}=multiple-watchers-A")).await;
    let mut b = watch(format!("{label}=multiple-watchers-B")).await;
    let mut ab = watch(format!(
        "{label} in (multiple-watchers-A,multiple-watchers-B)"
    ))
    .await;

    let post = PostParams::default();
    let cm_a = ConfigMap {
        metadata: meta(
            "e2e-watch-test-configmap-a",
            &[(label, "multiple-watchers-A")],
        ),
        ..ConfigMap::default()
    };
    api.create(&post, &cm_a).await.unwrap();
    for value in ["1", "2"] {
        let patch = json!({"data": {"mutation": value}});
        api.patch(
            "e2e-watch-test-configmap-a",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .unwrap();
    }
    api.delete("e2e-watch-test-configmap-a", &DeleteParams::default())
        .await
        .unwrap();
    let cm_b = ConfigMap {
        metadata: meta(
            "e2e-watch-test-configmap-b",
            &[(label, "multiple-watchers-B")],
        ),
        ..ConfigMap::default()
    };
    api.create(&post, &cm_b).await.unwrap();
    api.delete("e2e-watch-test-configmap-b", &DeleteParams::default())
        .await
        .unwrap();

    let a_events = ["ADDED a", "MODIFIED a", "MODIFIED a", "DELETED a"];
    assert_eq!(events(4, &mut a).await, a_events);
    assert_eq!(events(2, &mut b).await, ["ADDED b", "DELETED b"]);
    let mut both = a_events.to_vec();
    both.extend(["ADDED b", "DELETED b"]);
    assert_eq!(events(6, &mut ab).await, both);
}

/// The next `n` events of `stream`, as `KIND name`.
async fn events(
    n: usize,
    stream: &mut futures::stream::BoxStream<'static, kube::Result<WatchEvent<ConfigMap>>>,
) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..n {
        let event = tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .expect("an event in time")
            .unwrap()
            .expect("the watch goes on");
        seen.push(match event {
            WatchEvent::Added(cm) => format!("ADDED {}", cm_name(&cm)),
            WatchEvent::Modified(cm) => format!("MODIFIED {}", cm_name(&cm)),
            WatchEvent::Deleted(cm) => format!("DELETED {}", cm_name(&cm)),
            other => format!("{other:?}"),
        });
    }
    seen
}

fn cm_name(cm: &ConfigMap) -> String {
    let name = cm.metadata.name.clone().unwrap_or_default();
    name.trim_start_matches("e2e-watch-test-configmap-")
        .to_owned()
}

/// chunking.go: 400 PodTemplates listed in chunks of a limit: each chunk
/// full, one resourceVersion for all, `remainingItemCount` counting down,
/// every template once, no continue token on the last.
#[tokio::test]
async fn lists_come_in_chunks() {
    let s = server();
    let client = crate::kube_client(&s);
    namespace(&client, "chunks").await;
    let api: Api<PodTemplate> = Api::namespaced(client, "chunks");
    let total = 400;
    let template: PodTemplate = serde_json::from_value(json!({"metadata": {"name": "x"},
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}))
    .unwrap();
    let creates = (0..total).map(|i| {
        let mut t = template.clone();
        t.metadata.name = Some(format!("template-{i:04}"));
        let api = api.clone();
        async move { api.create(&PostParams::default(), &t).await.unwrap() }
    });
    futures::stream::iter(creates)
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;

    let limit = 17;
    let (mut names, mut version, mut token) = (Vec::new(), None, None::<String>);
    loop {
        let mut params = ListParams::default().limit(limit);
        if let Some(t) = &token {
            params = params.continue_token(t);
        }
        let page = api.list(&params).await.unwrap();
        let rv = page.metadata.resource_version.clone();
        assert!(version.is_none() || version == rv, "one resourceVersion");
        version = rv;
        let left = total - names.len() - page.items.len();
        names.extend(page.items.iter().map(|t| t.metadata.name.clone().unwrap()));
        token = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        if token.is_none() {
            assert_eq!(left, 0);
            assert_eq!(page.metadata.remaining_item_count, None);
            break;
        }
        assert_eq!(page.items.len(), limit as usize);
        assert_eq!(page.metadata.remaining_item_count, Some(left as i64));
    }
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), total);
}

/// resource_quota.go "capture the life of a secret": the quota's used
/// secrets count what exists, a new Secret counts at once (admission), and
/// after its deletion the quota controller's recalculation gives the count
/// back (here done as kube-controller-manager's replenishment does it: count
/// the namespace's secrets, write `status.used` through the status
/// subresource, as the controller's identity).
#[tokio::test]
async fn a_resource_quota_captures_the_life_of_a_secret() {
    let s = server();
    let client = crate::kube_client(&s);
    namespace(&client, "quota").await;
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "quota");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "quota");
    let hard = json!({"pods": "5", "services": "10", "services.nodeports": "1",
        "services.loadbalancers": "1", "secrets": "10", "configmaps": "10",
        "replicationcontrollers": "10", "resourcequotas": "1", "requests.cpu": "1",
        "requests.memory": "500Mi", "limits.cpu": "2", "limits.memory": "1Gi",
        "requests.storage": "10Gi", "persistentvolumeclaims": "10",
        "count/replicasets.apps": "5"});
    let quota: ResourceQuota =
        serde_json::from_value(json!({"metadata": {"name": "test-quota"}, "spec": {"hard": hard}}))
            .unwrap();
    quotas.create(&PostParams::default(), &quota).await.unwrap();
    let recalculate = || recalculate_quota(&s, "quota", "test-quota");
    recalculate();
    let used = |q: &ResourceQuota, key: &str| {
        q.status
            .as_ref()
            .and_then(|s| s.used.as_ref())
            .and_then(|u| u.get(key))
            .map(|q| q.0.clone())
    };
    let q = quotas.get("test-quota").await.unwrap();
    let before: i64 = used(&q, "secrets").unwrap().parse().unwrap();
    assert_eq!(used(&q, "resourcequotas").as_deref(), Some("1"));

    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": "test-secret"}, "data": {"a": "Yg=="}}))
            .unwrap();
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let q = quotas.get("test-quota").await.unwrap();
    assert_eq!(used(&q, "secrets"), Some((before + 1).to_string()));

    secrets
        .delete("test-secret", &DeleteParams::default())
        .await
        .unwrap();
    recalculate();
    let q = quotas.get("test-quota").await.unwrap();
    assert_eq!(used(&q, "secrets"), Some(before.to_string()));
}

/// The resource quota controller's sync of the object counts this test
/// asks about: it lists what the quota counts and updates the status with
/// `hard` and `used`, as `system:serviceaccount:kube-system:resourcequota-controller`.
fn recalculate_quota(s: &Server, namespace: &str, name: &str) {
    let count = |plural: &str| {
        let (code, list) = get_json(s, &format!("/api/v1/namespaces/{namespace}/{plural}"));
        assert_eq!(code, 200, "{list}");
        list["items"].as_array().map_or(0, Vec::len).to_string()
    };
    let path = format!("/api/v1/namespaces/{namespace}/resourcequotas/{name}");
    let (_, mut quota) = get_json(s, &path);
    let mut used = json!({});
    for (key, plural) in [
        ("secrets", "secrets"),
        ("configmaps", "configmaps"),
        ("resourcequotas", "resourcequotas"),
        ("pods", "pods"),
        ("services", "services"),
        ("replicationcontrollers", "replicationcontrollers"),
        ("persistentvolumeclaims", "persistentvolumeclaims"),
    ] {
        used[key] = json!(count(plural));
    }
    for key in [
        "services.nodeports",
        "services.loadbalancers",
        "count/replicasets.apps",
    ] {
        used[key] = json!("0");
    }
    for key in [
        "requests.cpu",
        "requests.memory",
        "limits.cpu",
        "limits.memory",
        "requests.storage",
    ] {
        used[key] = json!("0");
    }
    quota["status"] = json!({"hard": quota["spec"]["hard"], "used": used});
    let body = quota.to_string();
    let headers = [
        (
            "Impersonate-User",
            "system:serviceaccount:kube-system:resourcequota-controller",
        ),
        ("Impersonate-Group", "system:serviceaccounts"),
        ("Impersonate-Group", "system:serviceaccounts:kube-system"),
        ("Impersonate-Group", "system:authenticated"),
    ];
    let answer = kapi_test_support::http_request_with(
        s.address,
        "PUT",
        &format!("{path}/status"),
        "application/json",
        &headers,
        Some(&body),
    );
    assert!(
        answer.as_ref().is_some_and(|(c, _)| *c == 200),
        "{answer:?}"
    );
}

fn get_json(s: &Server, path: &str) -> (u16, Value) {
    let (code, body) =
        kapi_test_support::http_request_as(s.address, "GET", path, "application/json", None)
            .expect("an answer");
    (code, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// disruption.go: three PodDisruptionBudgets in two namespaces listed by
/// label across all namespaces (3) and in one (2), then the collection of
/// one namespace deleted without a selector; none is left there. (Upstream
/// first waits for the disruption controller's `observedGeneration`, which
/// kapi leaves to kube-controller-manager.)
#[tokio::test]
async fn pod_disruption_budgets_listed_and_deleted_as_a_collection() {
    let s = server();
    let client = crate::kube_client(&s);
    namespace(&client, "disruption").await;
    namespace(&client, "disruption-2").await;
    for (ns, name, min) in [
        ("disruption", "foo", json!(2)),
        ("disruption", "foo2", json!("1%")),
        ("disruption-2", "foo3", json!(2)),
    ] {
        let api: Api<PodDisruptionBudget> = Api::namespaced(client.clone(), ns);
        let pdb = serde_json::from_value(json!({"metadata": {"name": name,
            "labels": {"foo_pdb": "bar_pdb"}},
            "spec": {"minAvailable": min, "selector": {"matchLabels": {"foo": "bar"}}}}))
        .unwrap();
        api.create(&PostParams::default(), &pdb).await.unwrap();
    }
    let names = |list: kube::core::ObjectList<PodDisruptionBudget>| {
        let mut names: Vec<String> = list
            .items
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect();
        names.sort();
        names
    };
    let by_label = ListParams::default().labels("foo_pdb=bar_pdb");
    let all: Api<PodDisruptionBudget> = Api::all(client.clone());
    assert_eq!(
        names(all.list(&by_label).await.unwrap()),
        ["foo", "foo2", "foo3"]
    );
    let api: Api<PodDisruptionBudget> = Api::namespaced(client, "disruption");
    assert_eq!(names(api.list(&by_label).await.unwrap()), ["foo", "foo2"]);
    api.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .unwrap();
    assert!(
        api.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    assert_eq!(names(all.list(&by_label).await.unwrap()), ["foo3"]);
}

/// ingress.go "Ingress API operations": discovery, create, get, list in
/// the namespace and in all, watch, patch, update, the status subresource,
/// delete, deletecollection.
#[tokio::test]
async fn ingress_api_operations() {
    let s = server();
    let client = crate::kube_client(&s);
    let resources = client
        .list_api_group_resources("networking.k8s.io/v1")
        .await
        .unwrap();
    assert!(resources.resources.iter().any(|r| r.name == "ingresses"));
    assert!(
        resources
            .resources
            .iter()
            .any(|r| r.name == "ingresses/status")
    );
    namespace(&client, "ing").await;
    let api: Api<Ingress> = Api::namespaced(client.clone(), "ing");
    let ingress = |name: &str| -> Ingress {
        serde_json::from_value(json!({"metadata": {"name": name,
            "labels": {"special-label": "ing-test"}},
            "spec": {"defaultBackend": {"service": {"name": "default-backend",
                "port": {"number": 8080}}},
                "rules": [{"host": "foo.bar.com", "http": {"paths": [{"path": "/",
                    "pathType": "Prefix", "backend": {"service": {"name": "test-backend",
                        "port": {"number": 8080}}}}]}}]}}))
        .unwrap()
    };
    let watch = api
        .watch(
            &WatchParams::default().labels("special-label=ing-test"),
            "0",
        )
        .await
        .unwrap();
    for name in ["ingress1", "ingress2", "ingress3"] {
        api.create(&PostParams::default(), &ingress(name))
            .await
            .unwrap();
    }
    let got = api.get("ingress1").await.unwrap();
    assert_eq!(got.metadata.name.as_deref(), Some("ingress1"));
    let by_label = ListParams::default().labels("special-label=ing-test");
    assert_eq!(api.list(&by_label).await.unwrap().items.len(), 3);
    let everywhere: Api<Ingress> = Api::all(client);
    assert_eq!(everywhere.list(&by_label).await.unwrap().items.len(), 3);

    let patched = api
        .patch(
            "ingress1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"patched": "true"}}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.metadata.annotations.unwrap()["patched"], "true");
    let mut updated = api.get("ingress1").await.unwrap();
    updated
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert("updated".into(), "true".into());
    let updated = api
        .replace("ingress1", &PostParams::default(), &updated)
        .await
        .unwrap();
    assert_eq!(updated.metadata.annotations.unwrap()["updated"], "true");
    // The watch saw the creations and the changes.
    let seen: Vec<WatchEvent<Ingress>> = watch.take(5).try_collect().await.unwrap();
    assert!(matches!(seen[4], WatchEvent::Modified(_)), "{seen:?}");

    let status = json!({"metadata": {"annotations": {"patchedstatus": "true"}},
        "status": {"loadBalancer": {"ingress": [{"ip": "169.1.1.1"}]}}});
    let patched = api
        .patch_status("ingress1", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let lb = patched
        .status
        .unwrap()
        .load_balancer
        .unwrap()
        .ingress
        .unwrap();
    assert_eq!(lb[0].ip.as_deref(), Some("169.1.1.1"));
    let mut got = api.get_status("ingress1").await.unwrap();
    got.status
        .as_mut()
        .unwrap()
        .load_balancer
        .as_mut()
        .unwrap()
        .ingress
        .as_mut()
        .unwrap()[0]
        .ip = Some("169.1.1.2".into());
    let updated = api
        .replace_status("ingress1", &PostParams::default(), &got)
        .await
        .unwrap();
    let lb = updated
        .status
        .unwrap()
        .load_balancer
        .unwrap()
        .ingress
        .unwrap();
    assert_eq!(lb[0].ip.as_deref(), Some("169.1.1.2"));

    api.delete("ingress1", &DeleteParams::default())
        .await
        .unwrap();
    assert!(api.get_opt("ingress1").await.unwrap().is_none());
    assert_eq!(api.list(&by_label).await.unwrap().items.len(), 2);
    api.delete_collection(&DeleteParams::default(), &by_label)
        .await
        .unwrap();
    assert!(api.list(&by_label).await.unwrap().items.is_empty());
}

/// kubectl.go "Kubectl version": `kubectl version` prints the client's and
/// the server's version, and `-o json` has both with every field.
#[test]
fn kubectl_version_prints_all_data() {
    let s = server();
    let out = s.kubectl_ok(&["version"]);
    assert!(
        out.contains("Client Version:") && out.contains("Server Version:"),
        "{out}"
    );
    let json: Value = serde_json::from_str(&s.kubectl_ok(&["version", "-o", "json"])).unwrap();
    let server = &json["serverVersion"];
    for field in [
        "major",
        "minor",
        "gitVersion",
        "gitCommit",
        "gitTreeState",
        "buildDate",
        "goVersion",
        "compiler",
        "platform",
    ] {
        assert!(server[field].is_string(), "{field}: {json}");
    }
}
