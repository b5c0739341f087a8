//! The watch cache changes what reads cost, never what they answer: lists,
//! pages, selectors and gets served from memory equal the store's answers at
//! the same revision (an `Exact` list, which the store serves), on both
//! stores; a watch from before the cache's window is replayed by the store;
//! a second replica on the same etcd answers a consistent list with what the
//! first one just wrote.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use kapi_test_support::etcd::{EtcdCluster, etcd_available};
use kapi_test_support::{Server, http_request};
use serde_json::{Value, json};

fn kapi() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_kapi"))
}

fn get(s: &Server, path: &str) -> Value {
    let (code, body) = http_request(s.address, "GET", path, None).unwrap();
    assert_eq!(code, 200, "GET {path}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn send(s: &Server, method: &str, path: &str, body: &Value) -> Value {
    let (code, answer) = http_request(s.address, method, path, Some(&body.to_string())).unwrap();
    assert!(code < 300, "{method} {path}: {code} {answer}");
    serde_json::from_str(&answer).unwrap()
}

const CMS: &str = "/api/v1/namespaces/wc/configmaps";

/// How many lists of `resource_prefix` the server answered from its watch
/// cache (kube-apiserver's `apiserver_cache_list_total`).
fn lists_from_memory(s: &Server, resource_prefix: &str) -> u64 {
    lists_through(s, "", resource_prefix)
}

/// ... of them narrowed by `index` (`l:<label>`, `f:<field>`; empty: none).
fn lists_through(s: &Server, index: &str, resource_prefix: &str) -> u64 {
    let (code, text) = http_request(s.address, "GET", "/metrics", None).unwrap();
    assert_eq!(code, 200, "{text}");
    let series = format!(
        "apiserver_cache_list_total{{index=\"{index}\",resource_prefix=\"{resource_prefix}\"}} "
    );
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// Seven ConfigMaps, four of them blue, each with its number as label `i`,
/// one changed and one deleted; returns the revision of the first write.
fn populate(s: &Server) -> u64 {
    send(
        s,
        "POST",
        "/api/v1/namespaces",
        &json!({"metadata": {"name": "wc"}}),
    );
    let mut first = 0;
    for i in 0..7 {
        let color = if i % 2 == 0 { "blue" } else { "red" };
        let cm = json!({"metadata": {"name": format!("cm{i}"), "labels": {"color": color, "i": i.to_string()}},
                        "data": {"i": i.to_string()}});
        let made = send(s, "POST", CMS, &cm);
        if i == 0 {
            first = made["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
        }
    }
    let patch = json!({"data": {"changed": "yes"}});
    let (code, body) = kapi_test_support::http_request_as(
        s.address,
        "PATCH",
        &format!("{CMS}/cm1"),
        "application/merge-patch+json",
        Some(&patch.to_string()),
    )
    .unwrap();
    assert_eq!(code, 200, "{body}");
    send(s, "DELETE", &format!("{CMS}/cm2"), &json!({}));
    first
}

/// Every page of a list with `selector`, following `continue`; `first` goes
/// on the first page only (a revision: continuations carry their own).
fn pages(s: &Server, selector: &str, first: &str) -> (Vec<Value>, Vec<Value>) {
    let mut items = Vec::new();
    let mut metas = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..20 {
        let path = match &token {
            Some(t) => format!("{CMS}?limit=2&continue={t}&{selector}"),
            None => format!("{CMS}?limit=2&{selector}&{first}"),
        };
        let page = get(s, &path);
        items.extend(page["items"].as_array().unwrap().iter().cloned());
        metas.push(page["metadata"].clone());
        match page["metadata"]["continue"].as_str() {
            Some(next) if !next.is_empty() => token = Some(next.to_owned()),
            _ => return (items, metas),
        }
    }
    panic!("more than 20 pages");
}

fn check_answers_equal_the_store(s: &Server) {
    let first = populate(s);
    let cached = get(s, CMS);
    let rv = cached["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    let stored = get(
        s,
        &format!("{CMS}?resourceVersion={rv}&resourceVersionMatch=Exact"),
    );
    assert_eq!(cached["items"], stored["items"]);
    let names: Vec<&str> = cached["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cm0", "cm1", "cm3", "cm4", "cm5", "cm6"]);
    assert_eq!(cached["items"][1]["data"]["changed"], "yes");

    // Any revision, and at least this one: the same objects.
    for query in [
        "resourceVersion=0",
        &format!("resourceVersion={rv}&resourceVersionMatch=NotOlderThan"),
    ] {
        assert_eq!(
            get(s, &format!("{CMS}?{query}"))["items"],
            stored["items"],
            "{query}"
        );
    }

    // Pages: from the cache's snapshot, and from the store at an exact revision.
    let exact = format!("resourceVersion={rv}&resourceVersionMatch=Exact");
    let (cached_pages, cached_metas) = pages(s, "", "");
    let (stored_pages, stored_metas) = pages(s, "", &exact);
    assert_eq!(cached_pages, stored_pages);
    assert_eq!(Value::Array(cached_pages), stored["items"]);
    let remaining = |metas: &[Value]| -> Vec<Value> {
        metas
            .iter()
            .map(|m| m["remainingItemCount"].clone())
            .collect()
    };
    assert_eq!(remaining(&cached_metas), [json!(4), json!(2), Value::Null]);
    assert_eq!(remaining(&cached_metas), remaining(&stored_metas));

    // Selectors: the same matches, page by page, and no counts.
    let (blue, blue_metas) = pages(s, "labelSelector=color%3Dblue", "");
    let (stored_blue, _) = pages(s, "labelSelector=color%3Dblue", &exact);
    assert_eq!(blue, stored_blue);
    assert_eq!(blue.len(), 3);
    assert!(
        blue_metas
            .iter()
            .all(|m| m.get("remainingItemCount").is_none())
    );
    // A label few objects hold: narrowed by the cache's label index, with
    // the same answer.
    let narrowed = lists_through(s, "l:i", "/configmaps");
    for selector in ["i%3D4", "i+in+(1,4),color%3Dred", "i+in+(0,6,9)"] {
        let (cached, _) = pages(s, &format!("labelSelector={selector}"), "");
        let (stored, _) = pages(s, &format!("labelSelector={selector}"), &exact);
        assert_eq!(cached, stored, "{selector}");
        assert!(!cached.is_empty(), "{selector}");
    }
    assert_eq!(lists_through(s, "l:i", "/configmaps") - narrowed, 3);

    // Gets: the listed objects (which a list gives without their kind and
    // apiVersion, as kube-apiserver does); a deleted one is gone.
    for item in cached["items"].as_array().unwrap() {
        let name = item["metadata"]["name"].as_str().unwrap();
        let mut got = get(s, &format!("{CMS}/{name}"));
        assert_eq!(got["kind"], "ConfigMap");
        let fields = got.as_object_mut().unwrap();
        fields.remove("kind");
        fields.remove("apiVersion");
        assert_eq!(&got, item);
    }
    let (code, _) = http_request(s.address, "GET", &format!("{CMS}/cm2"), None).unwrap();
    assert_eq!(code, 404);

    // A watch from before the cache began (at the store's first revision,
    // before the server's own first writes) is replayed by the store, and
    // one from the first write on (inside the window) by the cache: every
    // event, in order, either way.
    for from in [1, first - 1] {
        check_replay(s, from);
    }
}

fn check_replay(s: &Server, from: u64) {
    let (code, body) = http_request(
        s.address,
        "GET",
        &format!("{CMS}?watch=true&resourceVersion={from}&timeoutSeconds=1"),
        None,
    )
    .unwrap();
    assert_eq!(code, 200, "{body}");
    let events: Vec<(String, String)> = body
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                e["object"]["metadata"]["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = (0..7)
        .map(|i| ("ADDED".to_owned(), format!("cm{i}")))
        .chain([
            ("MODIFIED".to_owned(), "cm1".to_owned()),
            ("DELETED".to_owned(), "cm2".to_owned()),
        ])
        .collect();
    assert_eq!(events, expected);
}

/// Updates start from the cache's copy of the object where there is one;
/// what they answer is still the store's. `writer` wrote last; `updater`
/// (another replica on the same etcd, or the same server) may hold an older
/// copy in its cache.
fn check_updates(writer: &Server, updater: &Server) {
    let path = format!("{CMS}/cm0");
    let rv = |object: &Value| -> u64 {
        object["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    for round in 0..10 {
        // Written through one server, updated at once through the other
        // with the revision just written.
        let mut object = get(writer, &path);
        object["data"] = json!({"round": round.to_string()});
        let written = send(writer, "PUT", &path, &object);
        let mut next = written.clone();
        next["data"] = json!({"round": round.to_string(), "again": "yes"});
        let updated = send(updater, "PUT", &path, &next);
        assert!(rv(&updated) > rv(&written), "round {round}");
        assert_eq!(updated["data"]["again"], "yes");

        // The same object again changes nothing: no write, the same revision.
        let unchanged = send(updater, "PUT", &path, &updated);
        assert_eq!(rv(&unchanged), rv(&updated), "round {round}");

        // A stale revision is refused, whatever the cache holds.
        let (code, body) =
            http_request(updater.address, "PUT", &path, Some(&written.to_string())).unwrap();
        assert_eq!(code, 409, "round {round}: {body}");

        // Without a revision the update applies to the current object.
        let mut blind = updated.clone();
        blind["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
        blind["data"]["blind"] = json!("yes");
        let applied = send(updater, "PUT", &path, &blind);
        assert!(rv(&applied) > rv(&updated));
        assert_eq!(get(writer, &path)["data"]["blind"], "yes");
    }
}

/// The watch's events, as (type, name) pairs; a bookmark's name is whether
/// it ends the initial events.
fn watch_events(s: &Server, path: &str) -> Vec<(String, String)> {
    let (code, body) = http_request(s.address, "GET", path, None).unwrap();
    assert_eq!(code, 200, "{path}: {body}");
    body.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|e| {
            let meta = &e["object"]["metadata"];
            let name = match e["type"].as_str() {
                Some("BOOKMARK") => meta["annotations"]["k8s.io/initial-events-end"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
                _ => meta["name"].as_str().unwrap().to_owned(),
            };
            (e["type"].as_str().unwrap().to_owned(), name)
        })
        .collect()
}

/// `sendInitialEvents` as upstream reads it: `false` starts from now (from
/// the store's current revision, or where the cache stands for "0") with no
/// initial objects; `true` sends them, ending with the `initial-events-end`
/// bookmark only where bookmarks are allowed; unset, a watch without a
/// revision or from "0" sends them (no bookmark).
fn check_initial_events(s: &Server) {
    let ns = "/api/v1/namespaces/wc-initial/configmaps";
    send(
        s,
        "POST",
        "/api/v1/namespaces",
        &json!({"metadata": {"name": "wc-initial"}}),
    );
    for name in ["a", "b"] {
        send(s, "POST", ns, &json!({"metadata": {"name": name}}));
    }
    let added = |names: &[&str]| -> Vec<(String, String)> {
        names
            .iter()
            .map(|n| ("ADDED".to_owned(), (*n).to_owned()))
            .collect()
    };
    let list = "resourceVersionMatch=NotOlderThan&timeoutSeconds=1";
    for (i, rv) in ["", "&resourceVersion=0"].into_iter().enumerate() {
        // A write while the watch runs is its only event.
        let later = format!("later{i}");
        let writer = {
            let (address, later) = (s.address, later.clone());
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(400));
                let cm = json!({"metadata": {"name": later}}).to_string();
                http_request(address, "POST", ns, Some(&cm)).unwrap()
            })
        };
        let path =
            format!("{ns}?watch=true&sendInitialEvents=false&allowWatchBookmarks=true&{list}{rv}");
        assert_eq!(watch_events(s, &path), added(&[&later]), "{path}");
        assert_eq!(writer.join().unwrap().0, 201);
    }
    let all = ["a", "b", "later0", "later1"];
    let path = format!("{ns}?watch=true&sendInitialEvents=true&{list}");
    assert_eq!(watch_events(s, &path), added(&all), "{path}");
    let path = format!("{ns}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&{list}");
    let mut expected = added(&all);
    expected.push(("BOOKMARK".to_owned(), "true".to_owned()));
    assert_eq!(watch_events(s, &path), expected, "{path}");
    for rv in ["", "&resourceVersion=0"] {
        let path = format!("{ns}?watch=true&allowWatchBookmarks=true&timeoutSeconds=1{rv}");
        assert_eq!(watch_events(s, &path), added(&all), "{path}");
    }
}

#[test]
fn answers_from_memory_equal_the_embedded_stores() {
    // No built-in controllers: nothing but the test writes ConfigMaps here.
    let s = Server::start_args(kapi(), &["--controllers=-*"]);
    check_answers_equal_the_store(&s);
    check_updates(&s, &s);
    check_initial_events(&s);
}

#[test]
fn answers_from_memory_equal_etcds_and_a_second_replica_reads_its_own_writes() {
    if !etcd_available() {
        return;
    }
    let etcd = EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    let a = Server::start_args(kapi(), &["--etcd-servers", &endpoints, "--controllers=-*"]);
    check_answers_equal_the_store(&a);
    check_initial_events(&a);

    // B's cache of ConfigMaps starts now and follows etcd; a consistent list
    // on B right after each write on A sees it (B waits for its cache to
    // reach etcd's current revision, which its feed reports).
    let b = Server::start_args(kapi(), &["--etcd-servers", &endpoints, "--controllers=-*"]);
    assert_eq!(get(&b, CMS)["items"].as_array().unwrap().len(), 6);
    let served_before = lists_from_memory(&b, "/configmaps");
    for i in 10..15 {
        let cm = json!({"metadata": {"name": format!("cm{i}")}});
        send(&a, "POST", CMS, &cm);
        let names: Vec<String> = get(&b, CMS)["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
            .collect();
        assert!(names.contains(&format!("cm{i}")), "{names:?}");
        // A write to another resource moves etcd's revision past the
        // ConfigMaps': B still answers at once, from progress.
        send(
            &a,
            "POST",
            "/api/v1/namespaces/wc/secrets",
            &json!({"metadata": {"generateName": "s"}}),
        );
        assert_eq!(
            get(&b, CMS)["items"].as_array().unwrap().len(),
            7 + (i - 10) as usize
        );
    }
    // Each of those consistent lists was served from B's cache: none waited
    // past the freshness timeout and went to etcd.
    assert_eq!(lists_from_memory(&b, "/configmaps") - served_before, 10);
    check_updates(&a, &b);
    check_updates(&b, &a);
}
