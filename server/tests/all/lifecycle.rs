//! Deletion as kube-apiserver implements it for the controllers: a namespace is
//! marked Terminating and goes once finalized; the garbage collector's
//! finalizers follow the propagation policy and each kind's default. Answers
//! compared with kube-apiserver 1.32.

#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use crate::common::harness;

const JOBS: &str = "/apis/batch/v1/namespaces/default/jobs";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn job(name: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})
}

fn deployment(name: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

#[tokio::test]
async fn a_deleted_namespace_is_terminating_until_finalized() {
    let h = harness().await;
    let ns = "/api/v1/namespaces/team";
    let (code, _) = h
        .call(
            "POST",
            "/api/v1/namespaces",
            json!({"metadata": {"name": "team"}}),
        )
        .await;
    assert_eq!(code, 201);
    let (code, _) = h
        .call(
            "POST",
            &format!("{ns}/configmaps"),
            json!({"metadata": {"name": "x"}}),
        )
        .await;
    assert_eq!(code, 201);

    let (code, v) = h.call("DELETE", ns, Value::Null).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["kind"], "Namespace");
    assert_eq!(v["status"]["phase"], "Terminating");
    assert_eq!(v["spec"]["finalizers"], json!(["kubernetes"]));
    assert!(v["metadata"]["deletionTimestamp"].is_string(), "{v}");
    assert!(v["metadata"].get("finalizers").is_none(), "{v}");
    // The emptying is the namespace controller's: nothing is deleted here.
    assert_eq!(h.count(&format!("{ns}/configmaps")).await, 1);

    // Deleting again changes nothing while the namespace is being emptied.
    let (code, again) = h.call("DELETE", ns, Value::Null).await;
    assert_eq!(code, 200);
    assert_eq!(
        again["metadata"]["resourceVersion"],
        v["metadata"]["resourceVersion"]
    );

    // The controller empties it, then finalizes: the namespace goes.
    let (code, _) = h
        .call("DELETE", &format!("{ns}/configmaps/x"), Value::Null)
        .await;
    assert_eq!(code, 200);
    let mut finalize = again.clone();
    finalize["spec"]["finalizers"] = json!([]);
    let (code, v) = h.call("PUT", &format!("{ns}/finalize"), finalize).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"], json!({}));
    assert_eq!(v["status"]["phase"], "Terminating");
    let (code, _) = h.call("GET", ns, Value::Null).await;
    assert_eq!(code, 404, "a finalized namespace being deleted is gone");
}

#[tokio::test]
async fn namespace_deletion_honours_the_propagation_policy_and_immortals() {
    let h = harness().await;
    let ns = "/api/v1/namespaces/orphans";
    h.call(
        "POST",
        "/api/v1/namespaces",
        json!({"metadata": {"name": "orphans"}}),
    )
    .await;
    let (code, v) = h
        .call(
            "DELETE",
            &format!("{ns}?propagationPolicy=Orphan"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["finalizers"], json!(["orphan"]));
    // Finalized, it still waits for the garbage collector's finalizer.
    let mut finalize = v.clone();
    finalize["spec"]["finalizers"] = json!([]);
    let (code, v) = h.call("PUT", &format!("{ns}/finalize"), finalize).await;
    assert_eq!(code, 200, "{v}");
    let (code, _) = h.call("GET", ns, Value::Null).await;
    assert_eq!(code, 200);
    let mut done = v.clone();
    done["metadata"]["finalizers"] = json!([]);
    let (code, v) = h.call("PUT", ns, done).await;
    assert_eq!(code, 200, "{v}");
    let (code, _) = h.call("GET", ns, Value::Null).await;
    assert_eq!(code, 404);

    for name in ["default", "kube-system", "kube-public"] {
        let (code, v) = h
            .call("DELETE", &format!("/api/v1/namespaces/{name}"), Value::Null)
            .await;
        assert_eq!(code, 403, "{v}");
        assert_eq!(
            v["message"],
            format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted")
        );
    }
}

#[tokio::test]
async fn jobs_orphan_their_pods_by_default_with_a_warning() {
    let h = harness().await;
    let (code, v) = h.call("POST", JOBS, job("j")).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["metadata"]["generation"], 1);
    let (code, v, warnings) = h
        .send_warned("DELETE", &format!("{JOBS}/j"), "application/json", "")
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["finalizers"], json!(["orphan"]));
    assert_eq!(v["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(
        v["metadata"]["generation"], 2,
        "marking for deletion is a change"
    );
    assert_eq!(
        warnings,
        [
            "299 - \"child pods are preserved by default when jobs are deleted; set \
          propagationPolicy=Background to remove them or set propagationPolicy=Orphan \
          to suppress this warning\""
        ]
    );

    // Background: gone at once, no warning.
    h.call("POST", JOBS, job("k")).await;
    let (code, v, warnings) = h
        .send_warned(
            "DELETE",
            &format!("{JOBS}/k?propagationPolicy=Background"),
            "application/json",
            "",
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(v["kind"], "Status", "{v}");
    assert!(warnings.is_empty());

    // ReplicationControllers orphan too, silently.
    let rcs = "/api/v1/namespaces/default/replicationcontrollers";
    let rc = json!({"metadata": {"name": "rc"}, "spec": {"replicas": 0,
        "selector": {"app": "x"}, "template": {"metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}});
    let (code, v) = h.call("POST", rcs, rc).await;
    assert_eq!(code, 201, "{v}");
    let (code, v, warnings) = h
        .send_warned("DELETE", &format!("{rcs}/rc"), "application/json", "")
        .await;
    assert_eq!(code, 200);
    assert_eq!(v["metadata"]["finalizers"], json!(["orphan"]));
    assert!(warnings.is_empty());
}

#[tokio::test]
async fn propagation_policies_set_the_garbage_collectors_finalizers() {
    let h = harness().await;
    // Deployments delete their dependents in the background by default.
    h.call("POST", DEPLOYMENTS, deployment("a")).await;
    let (code, v) = h
        .call("DELETE", &format!("{DEPLOYMENTS}/a"), Value::Null)
        .await;
    assert_eq!(code, 200);
    assert_eq!(v["kind"], "Status", "{v}");

    h.call("POST", DEPLOYMENTS, deployment("b")).await;
    let (code, v) = h
        .call(
            "DELETE",
            &format!("{DEPLOYMENTS}/b?propagationPolicy=Foreground"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    assert_eq!(v["metadata"]["generation"], 2);
    // A later delete may switch the policy: the finalizers follow it.
    let (code, v) = h
        .call(
            "DELETE",
            &format!("{DEPLOYMENTS}/b?propagationPolicy=Orphan"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["metadata"]["finalizers"], json!(["orphan"]));
    assert_eq!(v["metadata"]["generation"], 2, "bumped once");

    // The old way of asking for cascading deletion deletes in the background.
    h.call("POST", DEPLOYMENTS, deployment("c")).await;
    let body = json!({"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": false});
    let (code, gone) = h.call("DELETE", &format!("{DEPLOYMENTS}/c"), body).await;
    assert_eq!(code, 200, "{gone}");
    assert_eq!(gone["kind"], "Status");

    // Removing the last finalizer deletes the object.
    let mut done = v.clone();
    done["metadata"]["finalizers"] = json!([]);
    let (code, v) = h.call("PUT", &format!("{DEPLOYMENTS}/b"), done).await;
    assert_eq!(code, 200, "{v}");
    let (code, _) = h
        .call("GET", &format!("{DEPLOYMENTS}/b"), Value::Null)
        .await;
    assert_eq!(code, 404);
}

/// events.k8s.io Events are core Events under other names: one store, both
/// APIs, each with its own field selectors (the scheduler writes the first,
/// `kubectl describe` reads the second).
#[tokio::test]
async fn events_of_both_groups_are_the_same_objects() {
    let h = harness().await;
    let event = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e1"}, "eventTime": "2026-11-23T03:22:22.123456Z",
        "reportingController": "test/ctl", "reportingInstance": "ctl-1", "action": "Binding",
        "reason": "Scheduled", "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
        "note": "assigned", "type": "Normal"});
    let (code, v) = h
        .call(
            "POST",
            "/apis/events.k8s.io/v1/namespaces/default/events",
            event,
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let (code, core) = h
        .call("GET", "/api/v1/namespaces/default/events/e1", Value::Null)
        .await;
    assert_eq!(code, 200, "{core}");
    // As kube-apiserver 1.32 answered (its managedFields aside: they say the
    // writer used events.k8s.io/v1).
    let mut core = core;
    assert_eq!(
        core["metadata"]["managedFields"][0]["apiVersion"],
        "events.k8s.io/v1"
    );
    for field in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "managedFields",
    ] {
        core["metadata"].as_object_mut().unwrap().remove(field);
    }
    assert_eq!(
        core,
        json!({"kind": "Event", "apiVersion": "v1",
            "metadata": {"name": "e1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
            "reason": "Scheduled", "message": "assigned", "source": {},
            "firstTimestamp": null, "lastTimestamp": null, "type": "Normal",
            "eventTime": "2026-11-23T03:22:22.123456Z", "action": "Binding",
            "reportingComponent": "test/ctl", "reportingInstance": "ctl-1"})
    );
    let by_regarding =
        "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name%3Dp";
    assert_eq!(h.count(by_regarding).await, 1);
    let by_involved = "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp";
    assert_eq!(h.count(by_involved).await, 1);
    let other = "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name%3Dq";
    assert_eq!(h.count(other).await, 0);
    let (code, v) = h
        .call(
            "GET",
            "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dp",
            Value::Null,
        )
        .await;
    assert_eq!(code, 400);
    assert_eq!(
        v["message"],
        "field label not supported: involvedObject.name"
    );
}

/// A pod with nothing to wait for (unscheduled, or its kubelet confirming
/// with a zero grace period) is first marked, then removed: watchers see
/// MODIFIED and DELETED, as kube-apiserver 1.32 sends them.
#[tokio::test]
async fn pods_without_time_left_are_marked_then_removed() {
    let h = harness().await;
    let pods = "/api/v1/namespaces/default/pods";
    let pod = |name: &str| {
        json!({"metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    };
    let (code, created) = h.call("POST", pods, pod("unscheduled")).await;
    assert_eq!(code, 201, "{created}");
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, gone) = h
        .call("DELETE", &format!("{pods}/unscheduled"), Value::Null)
        .await;
    assert_eq!(code, 200, "{gone}");
    assert_eq!(gone["metadata"]["deletionGracePeriodSeconds"], 0);
    assert!(gone["metadata"]["deletionTimestamp"].is_string());
    let (code, _) = h
        .call("GET", &format!("{pods}/unscheduled"), Value::Null)
        .await;
    assert_eq!(code, 404);
    let events = watch_types(
        &h,
        &format!("{pods}?watch=1&resourceVersion={rv}&timeoutSeconds=1"),
    )
    .await;
    assert_eq!(events, ["MODIFIED", "DELETED"]);

    // A bound pod waits for its grace period; a confirming delete with none
    // left removes it, its deletion dated from when it was asked for.
    let (_, bound) = h.call("POST", pods, pod("bound")).await;
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bound"},
        "target": {"kind": "Node", "name": "n1"}});
    let (code, v) = h
        .call("POST", &format!("{pods}/bound/binding"), binding)
        .await;
    assert_eq!(code, 201, "{v}");
    let (code, pending) = h
        .call("DELETE", &format!("{pods}/bound"), Value::Null)
        .await;
    assert_eq!(code, 200);
    assert_eq!(pending["metadata"]["deletionGracePeriodSeconds"], 30);
    let due = pending["metadata"]["deletionTimestamp"]
        .as_str()
        .unwrap()
        .to_owned();
    let rv = pending["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let (code, gone) = h
        .call(
            "DELETE",
            &format!("{pods}/bound?gracePeriodSeconds=0"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 200, "{gone}");
    let asked: jiff::Timestamp =
        due.parse::<jiff::Timestamp>().unwrap() - jiff::SignedDuration::from_secs(30);
    assert_eq!(
        gone["metadata"]["deletionTimestamp"],
        asked.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    );
    let events = watch_types(
        &h,
        &format!("{pods}?watch=1&resourceVersion={rv}&timeoutSeconds=1"),
    )
    .await;
    assert_eq!(events, ["MODIFIED", "DELETED"]);
    let _ = bound;
}

async fn watch_types(h: &crate::common::Harness, uri: &str) -> Vec<String> {
    let (code, body, _) = h.send_raw("GET", uri, "", vec![], None).await;
    assert_eq!(code, 200);
    body.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice::<Value>(l).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// DeleteOptions are checked as upstream's ValidateDeleteOptions (texts
/// recorded from kube-apiserver 1.32): a 422 `DeleteOptions`, the object kept;
/// a negative grace period is no error.
#[tokio::test]
async fn delete_options_are_validated_as_upstream() {
    let h = harness().await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let (code, _) = h
        .call("POST", cms, json!({"metadata": {"name": "keep"}}))
        .await;
    assert_eq!(code, 201);
    let cases = [
        (
            "propagationPolicy=Foo",
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Foo\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
        ),
        (
            "orphanDependents=true&propagationPolicy=Orphan",
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Orphan\": orphanDependents and deletionPropagation cannot be both set",
        ),
        (
            "dryRun=Foo",
            "DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Foo\"}: supported values: \"All\"",
        ),
    ];
    for (query, message) in cases {
        let (code, v) = h
            .call("DELETE", &format!("{cms}/keep?{query}"), Value::Null)
            .await;
        assert_eq!(code, 422, "{query}: {v}");
        assert_eq!(v["message"], message, "{query}");
        assert_eq!(v["details"]["kind"], "DeleteOptions");
        assert_eq!(v["details"]["group"], "meta.k8s.io");
    }
    let (code, _) = h.call("GET", &format!("{cms}/keep"), Value::Null).await;
    assert_eq!(code, 200, "nothing was deleted");
    let (code, v) = h
        .call(
            "DELETE",
            &format!("{cms}/keep?gracePeriodSeconds=-5"),
            Value::Null,
        )
        .await;
    assert_eq!(code, 200, "{v}");
}
