//! API priority and fairness on the real binary: one user's flood of LISTs
//! queues behind itself while another user's writes go through; a `Reject`
//! level refuses with kube-apiserver's 429 and names the FlowSchema and
//! PriorityLevel that did; a FlowSchema without its level is `Dangling`;
//! with priority and fairness off, the in-flight limit refuses instead.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kapi_test_support::{Answer, Server, http_exchange};
use serde_json::{Value, json};

fn kapi() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_kapi"))
}

const TOKENS: &str = "flood-token,flooder,u1\nwrite-token,writer,u2,\"writers\"\n";

fn call(s: &Server, token: &str, method: &str, path: &str, body: Option<&Value>) -> Answer {
    let auth = format!("Bearer {token}");
    let body = body.map(Value::to_string).unwrap_or_default();
    http_exchange(
        s.address,
        method,
        path,
        &[
            ("Authorization", &auth),
            ("Content-Type", "application/json"),
        ],
        body.as_bytes(),
    )
    .expect("an answer")
}

/// A server whose priority levels share two seats (global-default gets one).
fn start(dir: &Path, extra: &[&str]) -> Server {
    let tokens = dir.join("tokens.csv");
    std::fs::write(&tokens, TOKENS).unwrap();
    let mut args = vec!["--token-auth-file", tokens.to_str().unwrap()];
    args.extend_from_slice(extra);
    let s = Server::start_args(kapi(), &args);
    // They may do anything, yet are not system:masters (whom priority and
    // fairness exempts).
    s.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "test-users",
        "--clusterrole=cluster-admin",
        "--user=flooder",
        "--user=writer",
    ]);
    s
}

/// Waits until the bootstrap objects exist and the filter uses them: answers
/// name global-default's uid.
fn wait_configured(s: &Server) -> (String, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let fs = call(
            s,
            "write-token",
            "GET",
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/global-default",
            None,
        );
        if fs.code == 200 {
            let fs_uid = serde_json::from_str::<Value>(&fs.body).unwrap()["metadata"]["uid"]
                .as_str()
                .unwrap()
                .to_owned();
            if fs.header("x-kubernetes-pf-flowschema-uid") == [fs_uid.as_str()] {
                let pl = fs.header("x-kubernetes-pf-prioritylevel-uid")[0].to_owned();
                return (fs_uid, pl);
            }
        }
        assert!(Instant::now() < deadline, "never configured: {fs:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn populate(s: &Server, namespace: &str, count: usize) {
    let made = call(
        s,
        "write-token",
        "POST",
        "/api/v1/namespaces",
        Some(&json!({"metadata": {"name": namespace}})),
    );
    assert_eq!(made.code, 201, "{}", made.body);
    let data = "x".repeat(4096);
    for i in 0..count {
        let cm = json!({"metadata": {"name": format!("cm{i}")}, "data": {"d": data}});
        let path = format!("/api/v1/namespaces/{namespace}/configmaps");
        let made = call(s, "write-token", "POST", &path, Some(&cm));
        assert_eq!(made.code, 201, "{}", made.body);
    }
}

/// Runs `threads` loops of LISTs as the flooder until `stop`; counts the
/// answers by code.
fn flood(
    s: &Server,
    path: &str,
    threads: usize,
    stop: &Arc<AtomicBool>,
) -> (
    Vec<std::thread::JoinHandle<()>>,
    Arc<AtomicU64>,
    Arc<AtomicU64>,
) {
    let done = Arc::new(AtomicU64::new(0));
    let refused = Arc::new(AtomicU64::new(0));
    let handles = (0..threads)
        .map(|_| {
            let (stop, done, refused) = (stop.clone(), done.clone(), refused.clone());
            let (address, path) = (s.address, path.to_owned());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let answer = http_exchange(
                        address,
                        "GET",
                        &path,
                        &[("Authorization", "Bearer flood-token")],
                        b"",
                    );
                    match answer.map(|a| a.code) {
                        Some(200) => done.fetch_add(1, Ordering::Relaxed),
                        Some(429) => refused.fetch_add(1, Ordering::Relaxed),
                        other => panic!("flood answer {other:?}"),
                    };
                }
            })
        })
        .collect();
    (handles, done, refused)
}

/// Floods `path` from 8 threads until one refusal is caught with its
/// headers; stops the flood.
fn catch_refusal(s: &Server, path: &str) -> Answer {
    let stop = Arc::new(AtomicBool::new(false));
    let (threads, _, refused) = flood(s, path, 8, &stop);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut refusal = None;
    while refusal.is_none() {
        assert!(Instant::now() < deadline, "nothing was refused");
        if refused.load(Ordering::Relaxed) > 0 {
            let answer = call(s, "flood-token", "GET", path, None);
            if answer.code == 429 {
                refusal = Some(answer);
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    refusal.unwrap()
}

fn waiting_in(s: &Server, level: &str) -> usize {
    let dump = call(
        s,
        "write-token",
        "GET",
        "/debug/api_priority_and_fairness/dump_priority_levels",
        None,
    );
    let row = dump
        .body
        .lines()
        .find(|l| l.starts_with(&format!("{level},")))
        .unwrap_or_else(|| panic!("no {level} in {}", dump.body));
    row.split(',').nth(4).unwrap().trim().parse().unwrap()
}

/// The flooder's LISTs wait in the flooder's queues; each of the writer's
/// creates is served after a few of them, not after the whole backlog (as a
/// first-come-first-served server would).
#[test]
fn a_flood_of_lists_does_not_starve_another_users_writes() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(
        dir.path(),
        &[
            "--max-requests-inflight",
            "1",
            "--max-mutating-requests-inflight",
            "1",
        ],
    );
    wait_configured(&s);
    populate(&s, "pf", 200);
    // Lists that cost the server (an `Exact` read of the store, decoding
    // every object) and the client nothing (nothing matches): the flooder's
    // threads are not what delays the writer's answers.
    let first = call(
        &s,
        "flood-token",
        "GET",
        "/api/v1/namespaces/pf/configmaps?limit=1",
        None,
    );
    let revision =
        serde_json::from_str::<Value>(&first.body).unwrap()["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned();
    let path = format!(
        "/api/v1/namespaces/pf/configmaps?labelSelector=no%3Dmatch&resourceVersionMatch=Exact&resourceVersion={revision}"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let (threads, done, _) = flood(&s, &path, 40, &stop);
    // Let the backlog build.
    let deadline = Instant::now() + Duration::from_secs(30);
    while done.load(Ordering::Relaxed) < 200 {
        assert!(Instant::now() < deadline, "the flood made no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut overtaken = Vec::new();
    let mut backlog = Vec::new();
    for i in 0..15 {
        backlog.push(waiting_in(&s, "global-default"));
        let before = done.load(Ordering::Relaxed);
        let cm = json!({"metadata": {"name": format!("w{i}")}, "data": {"w": "1"}});
        let made = call(
            &s,
            "write-token",
            "POST",
            "/api/v1/namespaces/pf/configmaps",
            Some(&cm),
        );
        overtaken.push(done.load(Ordering::Relaxed) - before);
        assert_eq!(made.code, 201, "write {i}: {}", made.body);
    }
    stop.store(true, Ordering::Relaxed);
    for thread in threads {
        thread.join().unwrap();
    }
    backlog.sort_unstable();
    overtaken.sort_unstable();
    let median_backlog = backlog[backlog.len() / 2];
    let median_overtaken = overtaken[overtaken.len() / 2];
    eprintln!("lists done per write: {overtaken:?}; backlog: {backlog:?}");
    // The flood really queued: a first-come-first-served server would serve
    // every one of these before a write that arrives behind them ...
    assert!(median_backlog >= 20, "the flood did not queue: {backlog:?}");
    // ... yet a write waits only for the flooder's queues' turns ahead of
    // it (about half a round of its hand of six), however deep they are.
    assert!(
        median_overtaken * 3 <= median_backlog as u64,
        "writes waited behind the flood: {overtaken:?} lists done per write, backlog {backlog:?}"
    );
}

/// A level that rejects: its 429 is kube-apiserver's (plain text,
/// Retry-After) and names the FlowSchema and PriorityLevel by uid; the
/// rejections are counted. A FlowSchema whose level is missing is Dangling.
#[test]
fn a_reject_level_refuses_with_upstreams_answer_and_dangling_schemas_are_marked() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(
        dir.path(),
        &[
            "--max-requests-inflight",
            "1",
            "--max-mutating-requests-inflight",
            "1",
        ],
    );
    wait_configured(&s);
    populate(&s, "rj", 200);
    let plc = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration", "metadata": {"name": "tiny"},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1,
            "limitResponse": {"type": "Reject"}}}});
    let plc = call(
        &s,
        "write-token",
        "POST",
        "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
        Some(&plc),
    );
    assert_eq!(plc.code, 201, "{}", plc.body);
    let plc_uid = serde_json::from_str::<Value>(&plc.body).unwrap()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let schema = |name: &str, level: &str| {
        json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": name},
            "spec": {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": 100,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "flooder"}}],
                    "resourceRules": [{"verbs": ["list"], "apiGroups": [""],
                        "resources": ["configmaps"], "namespaces": ["*"]}]}]}})
    };
    let fs = call(
        &s,
        "write-token",
        "POST",
        "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        Some(&schema("flooders", "tiny")),
    );
    assert_eq!(fs.code, 201, "{}", fs.body);
    let fs_uid = serde_json::from_str::<Value>(&fs.body).unwrap()["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let dangling = call(
        &s,
        "write-token",
        "POST",
        "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        Some(&schema("lost", "nowhere")),
    );
    assert_eq!(dangling.code, 201, "{}", dangling.body);

    // The flooder's lists now go to `tiny` (one seat, no queue).
    let path = "/api/v1/namespaces/rj/configmaps";
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answer = call(&s, "flood-token", "GET", path, None);
        if answer.header("x-kubernetes-pf-prioritylevel-uid") == [plc_uid.as_str()] {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "tiny never took the flooder's lists"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let refusal = catch_refusal(&s, path);
    assert_eq!(refusal.body, "Too many requests, please try again later.\n");
    assert_eq!(
        refusal.header("content-type"),
        ["text/plain; charset=utf-8"]
    );
    let retry: u64 = refusal.header("retry-after")[0].parse().unwrap();
    assert!((1..=32).contains(&retry), "{retry}");
    assert_eq!(
        refusal.header("x-kubernetes-pf-flowschema-uid"),
        [fs_uid.as_str()]
    );
    assert_eq!(
        refusal.header("x-kubernetes-pf-prioritylevel-uid"),
        [plc_uid.as_str()]
    );
    // The writer is not the flooder: its reads are not refused.
    assert_eq!(call(&s, "write-token", "GET", path, None).code, 200);
    let metrics = call(&s, "write-token", "GET", "/metrics", None).body;
    let line = metrics
        .lines()
        .find(|l| {
            l.starts_with("apiserver_flowcontrol_rejected_requests_total")
                && l.contains("flow_schema=\"flooders\"")
                && l.contains("reason=\"concurrency-limit\"")
        })
        .unwrap_or_else(|| panic!("no rejection metric"));
    let count: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(count >= 1.0, "{line}");

    // Dangling, with upstream's words.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let lost = call(
            &s,
            "write-token",
            "GET",
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/lost",
            None,
        );
        let lost: Value = serde_json::from_str(&lost.body).unwrap();
        let condition = &lost["status"]["conditions"][0];
        if condition["type"] == "Dangling" {
            assert_eq!(condition["status"], "True");
            assert_eq!(condition["reason"], "NotFound");
            assert_eq!(
                condition["message"],
                "This FlowSchema references the PriorityLevelConfiguration object named \"nowhere\" but there is no such object"
            );
            let managers: Vec<&str> = lost["metadata"]["managedFields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["manager"].as_str().unwrap())
                .collect();
            assert!(
                managers.contains(&"api-priority-and-fairness-config-consumer-v1"),
                "{managers:?}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "never marked Dangling: {lost}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// With priority and fairness off, `--max-requests-inflight` refuses what
/// does not fit at once, with `Retry-After: 1` and no PF headers.
#[test]
fn without_priority_and_fairness_the_in_flight_limit_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(
        dir.path(),
        &[
            "--enable-priority-and-fairness=false",
            "--max-requests-inflight",
            "1",
        ],
    );
    populate(&s, "mi", 200);
    let path = "/api/v1/namespaces/mi/configmaps";
    let refusal = catch_refusal(&s, path);
    assert_eq!(refusal.header("retry-after"), ["1"]);
    assert_eq!(refusal.body, "Too many requests, please try again later.\n");
    assert!(refusal.header("x-kubernetes-pf-flowschema-uid").is_empty());
}

/// The sum of a metric's series whose line starts with `name` (every label
/// set, or those `name` itself selects).
fn metric_sum(s: &Server, name: &str) -> f64 {
    let answer = call(s, "write-token", "GET", "/metrics", None);
    answer
        .body
        .lines()
        .filter(|line| line.starts_with(name))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Creates a ConfigMap in `default` as the writer.
fn create_configmap(s: &Server, cm: &Value) {
    let made = call(
        s,
        "write-token",
        "POST",
        "/api/v1/namespaces/default/configmaps",
        Some(cm),
    );
    assert_eq!(made.code, 201, "{}", made.body);
}

/// A watch of `default`'s ConfigMaps over HTTP/1.1 whose answer nobody reads
/// until the caller does.
fn open_watch(s: &Server, token: &str) -> kapi_test_support::Stream {
    use std::io::Write;

    let mut stream = kapi_test_support::Stream::connect_as(
        s.address,
        kapi_test_support::Identity::NoCertificate,
        None,
    )
    .unwrap();
    write!(
        stream,
        "GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: kapi\r\n\
         Authorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    stream.flush().unwrap();
    stream
}

#[test]
fn a_write_seen_by_many_watches_costs_a_seat_per_ten_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), &["--controllers=-*"]);
    // The suggested levels first: before they apply, a write may land on a
    // level whose requests take one seat at most (seen on a loaded machine).
    wait_configured(&s);
    let cm = json!({"metadata": {"name": "watched"}, "data": {"v": "1"}});
    create_configmap(&s, &cm);

    // Twelve watches of the namespace's ConfigMaps, held open.
    let mut watches = Vec::new();
    for _ in 0..12 {
        watches.push(open_watch(&s, "write-token"));
    }
    // They count once admitted: wait for the twelfth.
    let deadline = Instant::now() + Duration::from_secs(20);
    let samples = "apiserver_flowcontrol_watch_count_samples_sum";
    let wide = |s: &Server| {
        metric_sum(
            s,
            "apiserver_flowcontrol_work_estimated_seats_bucket{le=\"2.0\"",
        ) - metric_sum(
            s,
            "apiserver_flowcontrol_work_estimated_seats_bucket{le=\"1.0\"",
        )
    };
    // A request's seats are observed as it ends, which may come after its
    // answer: read the counters once they hold still, so that the window
    // holds this write's observation and no earlier one's.
    let settled = |s: &Server| {
        let mut last = (metric_sum(s, samples), wide(s));
        for _ in 0..40 {
            std::thread::sleep(Duration::from_millis(50));
            let now = (metric_sum(s, samples), wide(s));
            if now == last {
                break;
            }
            last = now;
        }
        last
    };
    loop {
        let before = settled(&s);
        let cm = json!({"metadata": {"name": "watched"}, "data": {"v": before.0.to_string()}});
        let put = call(
            &s,
            "write-token",
            "PUT",
            "/api/v1/namespaces/default/configmaps/watched",
            Some(&cm),
        );
        assert_eq!(put.code, 200, "{}", put.body);
        let after = settled(&s);
        if after.0 - before.0 == 12.0 {
            // Two seats: one for the write, one for its twelve watchers.
            assert_eq!(after.1 - before.1, 1.0);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the watches were not all counted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Watches that end are no longer counted.
    watches.truncate(0);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let before = metric_sum(&s, samples);
        let cm = json!({"metadata": {"name": "watched"}, "data": {"v": format!("{before}-gone")}});
        call(
            &s,
            "write-token",
            "PUT",
            "/api/v1/namespaces/default/configmaps/watched",
            Some(&cm),
        );
        if metric_sum(&s, samples) == before {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "ended watches were still counted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_watch_holds_its_seat_until_its_initial_events_are_sent() {
    use std::io::Read;

    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), &["--controllers=-*"]);
    // About 12 MiB of ConfigMaps: more than the socket buffers hold, so a
    // client that does not read stops the initial events.
    let big = "x".repeat(60 * 1024);
    for i in 0..200 {
        let cm = json!({"metadata": {"name": format!("big-{i}")}, "data": {"v": big}});
        create_configmap(&s, &cm);
    }
    let executing = |s: &Server| {
        metric_sum(
            s,
            "apiserver_flowcontrol_current_executing_requests{priority_level=\"global-default\"",
        )
    };
    // Only the metrics request itself executes.
    assert_eq!(executing(&s), 1.0);

    let mut stream = open_watch(&s, "flood-token");
    // Unread, the watch stays in its initial events, and on its seat.
    let deadline = Instant::now() + Duration::from_secs(20);
    while executing(&s) < 2.0 {
        assert!(Instant::now() < deadline, "the watch never held a seat");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(executing(&s), 2.0, "the watch gave its seat back unread");

    // Read it all: the seat comes back while the watch goes on.
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buffer = vec![0u8; 1 << 20];
    let mut read = 0usize;
    let deadline = Instant::now() + Duration::from_secs(30);
    while read < 200 * 60 * 1024 {
        match stream.read(&mut buffer) {
            Ok(0) => panic!("the watch ended"),
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => panic!("{e}"),
        }
        assert!(Instant::now() < deadline, "read only {read} bytes");
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while executing(&s) > 1.0 {
        assert!(Instant::now() < deadline, "the watch kept its seat");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(stream);
}
