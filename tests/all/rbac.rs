//! RBAC against kube-apiserver 1.32: the roles and bindings it was given
//! (with kube-controller-manager's aggregation controller beside it), then
//! the questions it answered — who may do what, where — as
//! SubjectAccessReviews, as requests (their 403 Status) and as `kubectl auth
//! can-i --list`, asked of kapi and checked against its recorded answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use kapi_test_support::{Server, kubectl_path, text};

use crate::recorded;
use serde_json::{Value, json};

/// The objects both servers get.
const POLICY: &str = r#"
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
- {apiVersion: v1, kind: Namespace, metadata: {name: team-b}}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: "test:pod-reader"}
  rules:
  - {apiGroups: [""], resources: [pods, pods/log], verbs: [get, list, watch]}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: "test:node-viewer"}
  rules:
  - {apiGroups: [""], resources: [nodes], verbs: [get, list]}
  - {nonResourceURLs: [/metrics, "/logs/*"], verbs: [get]}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: "test:app-config"}
  rules:
  - {apiGroups: [""], resources: [configmaps], resourceNames: [app-config], verbs: [get, update]}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: "test:scaler"}
  rules:
  - {apiGroups: ["*"], resources: ["*/scale"], verbs: [get, patch]}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: "test:aggregated"}
  aggregationRule:
    clusterRoleSelectors:
    - matchLabels: {example.com/aggregate-to-test: "true"}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata:
    name: "test:aggregated-part"
    labels: {example.com/aggregate-to-test: "true"}
  rules:
  - {apiGroups: [apps], resources: [deployments], verbs: [list, delete]}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: Role
  metadata: {name: secret-writer, namespace: team-a}
  rules:
  - {apiGroups: [""], resources: [secrets], verbs: [create, update, delete]}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata: {name: "test:alice-reads-pods"}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "test:pod-reader"}
  subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata: {name: "test:ops-view-nodes"}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "test:node-viewer"}
  subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: ops}]
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata: {name: "test:erin-aggregated"}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "test:aggregated"}
  subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: erin}]
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: carol-secrets, namespace: team-a}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: secret-writer}
  subjects:
  - {apiGroup: rbac.authorization.k8s.io, kind: User, name: carol}
  - {kind: ServiceAccount, name: bot}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: ops-pods, namespace: team-a}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "test:pod-reader"}
  subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: ops}]
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: carol-config, namespace: team-b}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "test:app-config"}
  subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: carol}]
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: bot-scales, namespace: team-b}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "test:scaler"}
  subjects: [{kind: ServiceAccount, name: bot, namespace: team-a}]
- apiVersion: rbac.authorization.k8s.io/v1
  kind: RoleBinding
  metadata: {name: dangling, namespace: team-b}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "test:missing"}
  subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: dave}]
"#;

/// The users asked about: name and groups.
const USERS: &[(&str, &[&str])] = &[
    ("alice", &["system:authenticated"]),
    ("bob", &["ops", "system:authenticated"]),
    ("carol", &["system:authenticated"]),
    ("dave", &["system:authenticated"]),
    ("erin", &["system:authenticated"]),
    (
        "system:serviceaccount:team-a:bot",
        &[
            "system:serviceaccounts",
            "system:serviceaccounts:team-a",
            "system:authenticated",
        ],
    ),
    ("system:anonymous", &["system:unauthenticated"]),
];

/// (group, resource, subresource, name) asked about.
const RESOURCES: &[(&str, &str, &str, &str)] = &[
    ("", "pods", "", ""),
    ("", "pods", "log", "p1"),
    ("", "pods", "status", "p1"),
    ("", "secrets", "", ""),
    ("", "configmaps", "", "app-config"),
    ("", "configmaps", "", "other"),
    ("", "nodes", "", ""),
    ("apps", "deployments", "", ""),
    ("apps", "deployments", "scale", "d1"),
    ("rbac.authorization.k8s.io", "roles", "", ""),
];

const VERBS: &[&str] = &[
    "get", "list", "watch", "create", "update", "patch", "delete",
];
const NAMESPACES: &[&str] = &["team-a", "team-b", ""];
const PATHS: &[&str] = &[
    "/metrics",
    "/logs/x",
    "/healthz",
    "/version",
    "/api",
    "/apis/apps",
];

/// kubectl on a kubeconfig.
pub(crate) fn kubectl(
    kubeconfig: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> (bool, String, String) {
    use std::io::Write;
    let mut child = Command::new(kubectl_path())
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// Every SubjectAccessReview of the matrix, as one List kubectl creates in
/// one call.
fn reviews() -> Vec<Value> {
    let mut reviews = Vec::new();
    for (user, groups) in USERS {
        let who = json!({"user": user, "groups": groups});
        for verb in VERBS {
            for namespace in NAMESPACES {
                for (group, resource, subresource, name) in RESOURCES {
                    let mut spec = who.clone();
                    spec["resourceAttributes"] = json!({"namespace": namespace, "verb": verb,
                        "group": group, "resource": resource, "subresource": subresource,
                        "name": name});
                    reviews.push(spec);
                }
            }
        }
        for path in PATHS {
            let mut spec = who.clone();
            spec["nonResourceAttributes"] = json!({"verb": "get", "path": path});
            reviews.push(spec);
        }
    }
    reviews
}

/// The answers of `kubeconfig`'s server to `specs`: allowed or not, each.
fn answers(kubeconfig: &Path, specs: &[Value]) -> Vec<bool> {
    statuses(kubeconfig, specs)
        .iter()
        .map(|status| status["allowed"] == true)
        .collect()
}

/// The statuses `kubeconfig`'s server answers `specs` with.
pub(crate) fn statuses(kubeconfig: &Path, specs: &[Value]) -> Vec<Value> {
    let items: Vec<Value> = specs
        .iter()
        .map(|spec| {
            json!({"apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview", "spec": spec})
        })
        .collect();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
    let (ok, out, err) = kubectl(
        kubeconfig,
        &["create", "-f", "-", "-o", "json"],
        Some(&list.to_string()),
    );
    assert!(ok, "{err}");
    let items: Vec<Value> = serde_json::Deserializer::from_str(&out)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .flat_map(|doc| match doc["items"].as_array() {
            Some(items) => items.clone(),
            None => vec![doc],
        })
        .collect();
    assert_eq!(items.len(), specs.len());
    items
        .into_iter()
        .map(|review| review["status"].clone())
        .collect()
}

/// What one user sees for one request: the 403's message, or success.
pub(crate) fn as_user(kubeconfig: &Path, user: &str, groups: &[&str], args: &[&str]) -> String {
    let mut all: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    all.push(format!("--as={user}"));
    for group in groups {
        all.push(format!("--as-group={group}"));
    }
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let (ok, out, err) = kubectl(kubeconfig, &all, None);
    if ok { format!("ok: {out}") } else { err }
}

/// `kubectl auth can-i --list` as one user, its lines sorted (the order of
/// bindings is the server's).
fn can_i_list(kubeconfig: &Path, user: &str, groups: &[&str], namespace: &str) -> Vec<String> {
    let out = as_user(
        kubeconfig,
        user,
        groups,
        &["auth", "can-i", "--list", "-n", namespace],
    );
    let mut lines: Vec<String> = out
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    lines.sort();
    lines
}

/// Requests as the users: kubectl's arguments.
const REQUESTS: &[(&str, &[&str], &[&str])] = &[
    (
        "alice",
        &["system:authenticated"],
        &["get", "pods", "-n", "team-a"],
    ),
    (
        "alice",
        &["system:authenticated"],
        &["get", "secrets", "-n", "team-a"],
    ),
    ("bob", &["ops", "system:authenticated"], &["get", "nodes"]),
    (
        "bob",
        &["ops", "system:authenticated"],
        &["get", "--raw", "/metrics"],
    ),
    (
        "carol",
        &["system:authenticated"],
        &["get", "configmap", "app-config", "-n", "team-b"],
    ),
    (
        "carol",
        &["system:authenticated"],
        &["delete", "secret", "s1", "-n", "team-b"],
    ),
    ("erin", &["system:authenticated"], &["get", "pods", "-A"]),
    (
        "system:anonymous",
        &["system:unauthenticated"],
        &["get", "--raw", "/api"],
    ),
];

/// One review of the matrix as a line: who, what, where.
fn review_line(spec: &Value) -> String {
    let who = format!(
        "{} {}",
        spec["user"].as_str().unwrap_or_default(),
        spec["groups"]
    );
    match spec.get("resourceAttributes") {
        Some(r) => format!(
            "{who} {} ns={} {}/{}/{} name={}",
            r["verb"].as_str().unwrap_or_default(),
            r["namespace"].as_str().unwrap_or_default(),
            r["group"].as_str().unwrap_or_default(),
            r["resource"].as_str().unwrap_or_default(),
            r["subresource"].as_str().unwrap_or_default(),
            r["name"].as_str().unwrap_or_default()
        ),
        None => format!(
            "{who} get {}",
            spec["nonResourceAttributes"]["path"]
                .as_str()
                .unwrap_or_default()
        ),
    }
}

/// What one server answers after [`POLICY`]: every review of the matrix
/// (allowed or not), the requests as users (success, or kubectl's error
/// with the 403's message) and `kubectl auth can-i --list` per user and
/// namespace.
fn access(kubeconfig: &Path) -> Value {
    let (ok, _, err) = kubectl(kubeconfig, &["apply", "-f", "-"], Some(POLICY));
    assert!(ok, "{err}");
    // The aggregated role is filled (by the server's aggregation controller).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (_, out, _) = kubectl(
            kubeconfig,
            &[
                "get",
                "clusterrole",
                "test:aggregated",
                "-o",
                "jsonpath={.rules}",
            ],
            None,
        );
        if out.contains("deployments") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never aggregated: {out}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let specs = reviews();
    let reviews: serde_json::Map<String, Value> = specs
        .iter()
        .map(review_line)
        .zip(answers(kubeconfig, &specs))
        .map(|(line, allowed)| (line, Value::Bool(allowed)))
        .collect();
    let requests: Vec<Value> = REQUESTS
        .iter()
        .map(|(user, groups, args)| {
            let answer = as_user(kubeconfig, user, groups, args);
            let answer = if answer.starts_with("ok") {
                "ok".to_owned()
            } else {
                answer
            };
            json!({"user": user, "args": args, "answer": answer})
        })
        .collect();
    // kube-apiserver's openshift build adds system:openshift:public-info-viewer
    // (/.well-known/*), which upstream does not have.
    let mut lists = Vec::new();
    for (user, groups) in USERS.iter().take(6) {
        for namespace in ["team-a", "team-b"] {
            let mut lines = can_i_list(kubeconfig, user, groups, namespace);
            lines.retain(|line| {
                line != "[/.well-known/*] [] [get]" && line != "[/.well-known] [] [get]"
            });
            lists.push(json!({"user": user, "namespace": namespace, "lines": lines}));
        }
    }
    json!({"reviews": reviews, "requests": requests, "canIList": lists})
}

/// The same roles and bindings on kapi as on kube-apiserver 1.32 (with
/// kube-controller-manager's aggregation controller): the same answers,
/// recorded in `tests/fixtures/reference/rbac-access.json`.
#[test]
fn access_matches_kube_apiserver() {
    let upstream = recorded::answers("rbac-access", access);
    if recorded::recording() {
        return;
    }
    let kapi = Server::start_args(
        Path::new(env!("CARGO_BIN_EXE_kapi")),
        &["--controllers=clusterrole-aggregation-controller"],
    );
    let ours = access(&kapi.kubeconfig());

    let (want, have) = (&upstream["reviews"], &ours["reviews"]);
    let want = want.as_object().expect("recorded reviews");
    assert_eq!(want.len(), have.as_object().map_or(0, |h| h.len()));
    let differing: Vec<String> = want
        .iter()
        .filter(|(line, u)| have.get(line.as_str()) != Some(*u))
        .map(|(line, u)| format!("{line}: kube-apiserver {u}, kapi {}", have[line.as_str()]))
        .collect();
    assert!(
        differing.is_empty(),
        "{} differ:\n{}",
        differing.len(),
        differing.join("\n")
    );
    let allowed = want.values().filter(|a| **a == true).count();
    assert!(
        allowed > 40 && allowed < want.len() - 100,
        "a matrix that says something: {allowed}"
    );

    // Requests as the users: the same answers, the same 403 messages.
    assert_eq!(ours["requests"], upstream["requests"]);
    assert!(
        upstream["requests"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["answer"] != "ok")),
        "refusals are compared: {}",
        upstream["requests"]
    );
    // What each may do, as kubectl lists it.
    for (want, have) in upstream["canIList"]
        .as_array()
        .expect("recorded lists")
        .iter()
        .zip(ours["canIList"].as_array().expect("lists"))
    {
        assert_eq!(have, want, "can-i --list");
    }
}

/// A user who may write roles and bindings in a namespace may grant only
/// what they hold; kube-apiserver 1.32's answers to the same requests.
#[test]
fn escalation_is_refused_as_upstream() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let kubeconfig = s.kubeconfig();
    for args in [
        &["create", "namespace", "esc"][..],
        &["-n", "esc", "create", "serviceaccount", "e"],
        &[
            "-n",
            "esc",
            "create",
            "role",
            "rbac-writer",
            "--verb=create,update,get",
            "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,pods",
        ],
        &[
            "-n",
            "esc",
            "create",
            "rolebinding",
            "e-rbac",
            "--role=rbac-writer",
            "--serviceaccount=esc:e",
        ],
    ] {
        let (ok, _, err) = kubectl(&kubeconfig, args, None);
        assert!(ok, "{args:?}: {err}");
    }
    let (_, token, _) = kubectl(&kubeconfig, &["-n", "esc", "create", "token", "e"], None);
    let post = |plural: &str, body: Value| {
        let answer = kapi_test_support::http_exchange(
            s.address,
            "POST",
            &format!("/apis/rbac.authorization.k8s.io/v1/namespaces/esc/{plural}"),
            &[
                ("Authorization", &format!("Bearer {}", token.trim())),
                ("Content-Type", "application/json"),
            ],
            body.to_string().as_bytes(),
        )
        .unwrap();
        let status: Value = serde_json::from_str(&answer.body).unwrap();
        (
            answer.code,
            status["message"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let rule = |verbs: &[&str], resources: &[&str]| json!({"verbs": verbs, "apiGroups": [""], "resources": resources});
    assert_eq!(
        post(
            "roles",
            json!({"metadata": {"name": "ok"}, "rules": [rule(&["get"], &["pods"])]})
        )
        .0,
        201
    );
    assert_eq!(
        post("roles", json!({"metadata": {"name": "more"}, "rules": [
            rule(&["get", "delete", "patch"], &["pods", "secrets"]),
            {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"],
                "resourceNames": ["x"]}]})),
        (
            403,
            "roles.rbac.authorization.k8s.io \"more\" is forbidden: user \"system:serviceaccount:esc:e\" \
             (groups=[\"system:serviceaccounts\" \"system:serviceaccounts:esc\" \"system:authenticated\"]) \
             is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\" \"patch\"]}\n\
             {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"delete\" \"patch\"]}\n\
             {APIGroups:[\"apps\"], Resources:[\"deployments\"], ResourceNames:[\"x\"], Verbs:[\"get\"]}"
                .to_owned()
        )
    );
    let binding = |name: &str, kind: &str, role: &str| {
        json!({"metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
            "subjects": [{"kind": "User", "name": "x"}]})
    };
    assert_eq!(post("rolebindings", binding("b1", "Role", "ok")).0, 201);
    assert_eq!(
        post("rolebindings", binding("b2", "Role", "nope")),
        (
            404,
            "rolebindings.rbac.authorization.k8s.io \"nope\" not found".to_owned()
        )
    );
    let (code, message) = post(
        "rolebindings",
        binding("b3", "ClusterRole", "cluster-admin"),
    );
    assert_eq!(code, 403, "{message}");
    assert!(
        message.starts_with("rolebindings.rbac.authorization.k8s.io \"b3\" is forbidden: user \"system:serviceaccount:esc:e\""),
        "{message}"
    );
    // With the bind verb on it, the role may be bound all the same.
    let (ok, _, err) = kubectl(
        &kubeconfig,
        &[
            "-n",
            "esc",
            "create",
            "role",
            "binder",
            "--verb=bind",
            "--resource=clusterroles.rbac.authorization.k8s.io",
            "--resource-name=cluster-admin",
        ],
        None,
    );
    assert!(ok, "{err}");
    let (ok, _, err) = kubectl(
        &kubeconfig,
        &[
            "-n",
            "esc",
            "create",
            "rolebinding",
            "e-binder",
            "--role=binder",
            "--serviceaccount=esc:e",
        ],
        None,
    );
    assert!(ok, "{err}");
    assert_eq!(
        post(
            "rolebindings",
            binding("b3", "ClusterRole", "cluster-admin")
        )
        .0,
        201
    );
}

/// At every start the bootstrap policy is reconciled with what is stored,
/// as upstream's RBAC bootstrap hook: rules, subjects, labels and
/// aggregation selectors a bootstrap object lacks come back, what it has
/// beyond the policy stays, and an object annotated
/// `rbac.authorization.kubernetes.io/autoupdate: "false"` is left alone.
#[test]
fn the_bootstrap_policy_is_reconciled_at_start() {
    let mut s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let get = |s: &Server, what: &str| -> Value {
        serde_json::from_str(&s.kubectl_ok(&["get", what, "-o", "json"])).unwrap()
    };
    // system:basic-user loses its rules but gains one and a label of its own.
    let mut basic = get(&s, "clusterrole/system:basic-user");
    let policy_rules = basic["rules"].clone();
    basic["rules"] = json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]);
    basic["metadata"]["labels"]["mine"] = json!("yes");
    // system:discovery, opted out, loses its rules for good.
    let mut discovery = get(&s, "clusterrole/system:discovery");
    discovery["rules"] = json!([]);
    discovery["metadata"]["annotations"][AUTOUPDATE] = json!("false");
    // system:basic-user's binding loses its subject; edit's aggregation has
    // another selector than the policy's.
    let mut binding = get(&s, "clusterrolebinding/system:basic-user");
    let policy_subjects = binding["subjects"].clone();
    binding["subjects"] = json!([{"kind": "User", "name": "someone",
        "apiGroup": "rbac.authorization.k8s.io"}]);
    let mut edit = get(&s, "clusterrole/edit");
    let policy_selectors = edit["aggregationRule"]["clusterRoleSelectors"].clone();
    let mine = json!({"matchLabels": {"mine": "true"}});
    edit["aggregationRule"]["clusterRoleSelectors"] = json!([mine]);
    for object in [&basic, &discovery, &binding, &edit] {
        s.kubectl_stdin_ok(&["replace", "-f", "-"], &object.to_string());
    }
    s.terminate();
    s.restart();

    let basic = get(&s, "clusterrole/system:basic-user");
    assert_eq!(basic["metadata"]["labels"]["mine"], "yes");
    let rules = basic["rules"].as_array().unwrap();
    assert_eq!(
        rules[0],
        json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
    );
    // The policy's rules come back broken down to one verb and resource
    // each, as upstream's reconciler adds them.
    for rule in policy_rules.as_array().unwrap() {
        for verb in rule["verbs"].as_array().unwrap() {
            for resource in rule["resources"].as_array().unwrap() {
                let back = rules.iter().any(|r| {
                    r["verbs"] == json!([verb])
                        && r["resources"] == json!([resource])
                        && r["apiGroups"] == rule["apiGroups"]
                });
                assert!(back, "{verb} {resource}: {rules:?}");
            }
        }
    }
    let discovery = get(&s, "clusterrole/system:discovery");
    assert_eq!(discovery["rules"], json!([]), "{discovery}");
    let binding = get(&s, "clusterrolebinding/system:basic-user");
    let subjects = binding["subjects"].as_array().unwrap();
    assert_eq!(subjects[0]["name"], "someone");
    assert_eq!(subjects[1..], policy_subjects.as_array().unwrap()[..]);
    let edit = get(&s, "clusterrole/edit");
    let mut selectors = vec![mine];
    selectors.extend(policy_selectors.as_array().unwrap().iter().cloned());
    assert_eq!(
        edit["aggregationRule"]["clusterRoleSelectors"],
        json!(selectors)
    );
    // Nothing lacking: a further start writes nothing.
    let versions = |s: &Server| {
        let list = get(s, "clusterroles,clusterrolebindings,roles,rolebindings");
        let items = list["items"].as_array().unwrap().clone();
        items
            .into_iter()
            .map(|i| i["metadata"]["resourceVersion"].clone())
            .collect::<Vec<_>>()
    };
    let before = versions(&s);
    s.terminate();
    s.restart();
    assert_eq!(versions(&s), before);
}

const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";

/// A user who may update a role but lacks its rules may change only what
/// the garbage collector changes (finalizers, owner references); a label or
/// an annotation is refused as an escalation, as kube-apiserver 1.32
/// answered the same requests.
#[test]
fn only_garbage_collector_fields_change_without_holding_the_rules() {
    let s = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    for args in [
        &["create", "namespace", "esc"][..],
        &["-n", "esc", "create", "serviceaccount", "e"],
        &[
            "-n",
            "esc",
            "create",
            "role",
            "rbac-writer",
            "--verb=update,get,patch",
            "--resource=roles.rbac.authorization.k8s.io",
        ],
        &[
            "-n",
            "esc",
            "create",
            "rolebinding",
            "e-rbac",
            "--role=rbac-writer",
            "--serviceaccount=esc:e",
        ],
        &[
            "-n",
            "esc",
            "create",
            "role",
            "wide",
            "--verb=delete",
            "--resource=secrets",
        ],
    ] {
        s.kubectl_ok(args);
    }
    let patch = |patch: &str| {
        let args = [
            "-n",
            "esc",
            "--as=system:serviceaccount:esc:e",
            "patch",
            "role",
            "wide",
            "--type=merge",
            "-p",
            patch,
        ];
        let (ok, out, err) = kubectl(&s.kubeconfig(), &args, None);
        if ok {
            out.trim().to_owned()
        } else {
            err.trim().to_owned()
        }
    };
    let refused = "Error from server (Forbidden): roles.rbac.authorization.k8s.io \"wide\" is \
        forbidden: user \"system:serviceaccount:esc:e\" (groups=[\"system:serviceaccounts\" \
        \"system:serviceaccounts:esc\" \"system:authenticated\"]) is attempting to grant RBAC \
        permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"delete\"]}";
    assert_eq!(patch(r#"{"metadata":{"labels":{"x":"y"}}}"#), refused);
    assert_eq!(patch(r#"{"metadata":{"annotations":{"a":"b"}}}"#), refused);
    let patched = "role.rbac.authorization.k8s.io/wide patched";
    assert_eq!(
        patch(r#"{"metadata":{"finalizers":["example.com/f"]}}"#),
        patched
    );
    let owner = r#"{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap",
        "name":"x","uid":"6f2e1a4e-0000-4000-8000-000000000001"}]}}"#;
    assert_eq!(patch(owner), patched);
}
