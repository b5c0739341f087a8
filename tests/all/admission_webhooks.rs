//! Admission webhooks against a real HTTPS webhook server the test starts
//! (`tests/fixtures/admission/webhook.py`, trusted through the caBundle of a
//! CA the test makes): the answers are asserted whole as kube-apiserver 1.32
//! gives them (k8s.io/apiserver's webhook admission plugins: `ToStatusErr`,
//! `ErrCallingWebhook`, `VerifyAdmissionResponse`, the dispatchers).
//!
//! Each scenario's configuration selects its own namespace (a
//! `namespaceSelector` on the label `scenario`), so scenarios never see each
//! other's webhooks.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use kapi_test_support::{Answer, Server, http_exchange};
use serde_json::{Value, json};

use super::custom_resources::{Webhook, eventually, start_webhook, webhook_tools};

struct Setup {
    server: Server,
    _webhook: Webhook,
    port: String,
    ca: String,
    dir: tempfile::TempDir,
}

fn setup() -> Setup {
    setup_with(|_| Vec::new())
}

/// A webhook, its certificates and its port, without a server.
struct Hooked {
    _webhook: Webhook,
    port: String,
    ca: String,
    _dir: tempfile::TempDir,
}

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/admission/webhook.py"
);

fn webhook_alone() -> Hooked {
    let dir = tempfile::tempdir().unwrap();
    let (webhook, port, ca) = start_webhook(SCRIPT, dir.path());
    Hooked {
        _webhook: webhook,
        port,
        ca: base64::engine::general_purpose::STANDARD.encode(&ca),
        _dir: dir,
    }
}

/// A webhook, and a server started with the flags `args` gives for the
/// test's directory.
fn setup_with(args: impl Fn(&Path) -> Vec<String>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let (webhook, port, ca) = start_webhook(SCRIPT, dir.path());
    let args = args(dir.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start_args(Path::new(env!("CARGO_BIN_EXE_kapi")), &args);
    Setup {
        server,
        _webhook: webhook,
        port,
        ca: base64::engine::general_purpose::STANDARD.encode(&ca),
        dir,
    }
}

impl Setup {
    fn send(&self, method: &str, path: &str, body: &Value) -> Answer {
        http_exchange(
            self.server.address,
            method,
            path,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        )
        .unwrap()
    }

    /// A namespace labelled `scenario=<name>`.
    fn namespace(&self, name: &str) {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"scenario": name}}});
        assert_eq!(self.send("POST", "/api/v1/namespaces", &ns).code, 201);
    }

    /// A webhook entry calling `path` for `resources` in the scenario's
    /// namespace; `extra` is merged over it.
    fn hook(
        &self,
        name: &str,
        path: &str,
        scenario: &str,
        resources: &[&str],
        extra: Value,
    ) -> Value {
        let mut hook = json!({
            "name": name,
            "clientConfig": {"url": format!("https://127.0.0.1:{}{path}", self.port), "caBundle": self.ca},
            "rules": [{"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": [""],
                "apiVersions": ["v1"], "resources": resources}],
            "namespaceSelector": {"matchLabels": {"scenario": scenario}},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        });
        if let (Value::Object(hook), Value::Object(extra)) = (&mut hook, extra) {
            hook.extend(extra);
        }
        hook
    }

    fn configure(&self, kind: &str, name: &str, hooks: Vec<Value>) {
        let plural = if kind == "MutatingWebhookConfiguration" {
            "mutatingwebhookconfigurations"
        } else {
            "validatingwebhookconfigurations"
        };
        let config = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
            "metadata": {"name": name}, "webhooks": hooks});
        let answer = self.send(
            "POST",
            &format!("/apis/admissionregistration.k8s.io/v1/{plural}"),
            &config,
        );
        assert_eq!(answer.code, 201, "{}", answer.body);
    }

    fn configmap(&self, namespace: &str, name: &str, data: Value) -> Answer {
        self.send(
            "POST",
            &format!("/api/v1/namespaces/{namespace}/configmaps"),
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": data}),
        )
    }

    /// Waits until a ConfigMap create in `namespace` answers `code` (the
    /// configuration has reached the admission chain), and gives that answer.
    fn first(&self, namespace: &str, data: Value, code: u16) -> Answer {
        let mut n = 0;
        let mut last = None;
        eventually("the webhook configuration to take effect", || {
            n += 1;
            let answer = self.configmap(namespace, &format!("probe-{n}"), data.clone());
            let done = answer.code == code;
            last = Some(answer);
            done
        });
        last.unwrap()
    }

    /// The reviews the webhook received on `path`.
    fn reviews(&self, path: &str) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("reviews.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["path"] == path)
            .collect()
    }
}

fn status(code: u16, reason: &str, message: &str) -> Value {
    let mut status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message});
    if !reason.is_empty() {
        status["reason"] = json!(reason);
    }
    status["code"] = json!(code);
    status
}

fn internal(message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("Internal error occurred: {message}"), "reason": "InternalError",
        "details": {"causes": [{"message": message}]}, "code": 500})
}

fn body(answer: &Answer) -> Value {
    serde_json::from_str(&answer.body).unwrap()
}

/// A validating webhook refuses what upstream's e2e webhook refuses, on
/// create, update and delete, with the webhook's reason as the message; it
/// is told the request as upstream tells it; a namespace it does not select
/// is left alone; kubectl shows the refusal.
#[test]
fn a_validating_webhook_refuses_creates_updates_and_deletes() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("deny");
    let skipped = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}});
    assert_eq!(s.send("POST", "/api/v1/namespaces", &skipped).code, 201);
    s.configure(
        "ValidatingWebhookConfiguration",
        "deny-configmaps",
        vec![s.hook(
            "deny-unwanted-configmap-data.k8s.io",
            "/configmaps",
            "deny",
            &["configmaps"],
            json!({}),
        )],
    );
    let refused = "admission webhook \"deny-unwanted-configmap-data.k8s.io\" denied the request: the configmap contains unwanted key and value";
    let answer = s.first("deny", json!({"webhook-e2e-test": "webhook-disallow"}), 400);
    assert_eq!(
        body(&answer),
        status(
            400,
            "the configmap contains unwanted key and value",
            refused
        )
    );
    // Allowed, then refused on update (PUT and a strategic merge patch).
    let created = s.configmap(
        "deny",
        "kept",
        json!({"webhook-e2e-test": "webhook-nondeletable"}),
    );
    assert_eq!(created.code, 201, "{}", created.body);
    let mut changed = body(&created);
    changed["data"]["webhook-e2e-test"] = json!("webhook-disallow");
    let put = s.send("PUT", "/api/v1/namespaces/deny/configmaps/kept", &changed);
    assert_eq!(
        body(&put),
        status(
            400,
            "the configmap contains unwanted key and value",
            refused
        )
    );
    let patch = http_exchange(
        s.server.address,
        "PATCH",
        "/api/v1/namespaces/deny/configmaps/kept",
        &[("Content-Type", "application/strategic-merge-patch+json")],
        br#"{"data":{"webhook-e2e-test":"webhook-disallow"}}"#,
    )
    .unwrap();
    assert_eq!(patch.code, 400, "{}", patch.body);
    // Deleting it is refused on the stored object's data.
    let delete = s.send(
        "DELETE",
        "/api/v1/namespaces/deny/configmaps/kept",
        &json!({}),
    );
    assert_eq!(
        body(&delete),
        status(
            400,
            "the configmap cannot be deleted because it contains unwanted key and value",
            "admission webhook \"deny-unwanted-configmap-data.k8s.io\" denied the request: the configmap cannot be deleted because it contains unwanted key and value"
        )
    );
    assert_eq!(
        s.send("GET", "/api/v1/namespaces/deny/configmaps/kept", &json!({}))
            .code,
        200
    );
    // A namespace the selector leaves out is not asked about.
    let other = s.configmap(
        "other",
        "free",
        json!({"webhook-e2e-test": "webhook-disallow"}),
    );
    assert_eq!(other.code, 201, "{}", other.body);
    // What the webhook was told about the create that was refused.
    let reviews = s.reviews("/configmaps");
    let create = reviews
        .iter()
        .find(|r| r["review"]["request"]["operation"] == "CREATE")
        .unwrap();
    assert_eq!(create["query"], "timeout=10s");
    assert_eq!(create["userAgent"], "kube-apiserver-admission");
    let review = &create["review"];
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    let request = &review["request"];
    assert!(request["uid"].as_str().is_some_and(|u| u.len() == 36));
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(request["requestKind"], request["kind"]);
    assert_eq!(request["requestResource"], request["resource"]);
    assert_eq!(request["namespace"], "deny");
    assert_eq!(request["oldObject"], Value::Null);
    assert_eq!(request["dryRun"], false);
    assert_eq!(
        request["options"],
        json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"})
    );
    assert_eq!(request["object"]["kind"], "ConfigMap");
    assert_eq!(request["object"]["metadata"]["namespace"], "deny");
    assert!(request["userInfo"]["username"].is_string());
    let delete = reviews
        .iter()
        .find(|r| r["review"]["request"]["operation"] == "DELETE")
        .unwrap();
    let request = &delete["review"]["request"];
    assert_eq!(request["name"], "kept");
    assert_eq!(request["object"], Value::Null);
    assert_eq!(
        request["oldObject"]["data"]["webhook-e2e-test"],
        "webhook-nondeletable"
    );
    assert_eq!(request["options"]["kind"], "DeleteOptions");
    // kubectl shows the webhook's refusal.
    let err = s.server.kubectl_err(&[
        "create",
        "configmap",
        "by-kubectl",
        "-n",
        "deny",
        "--from-literal=webhook-e2e-test=webhook-disallow",
    ]);
    assert!(err.contains(refused), "{err}");
}

/// Mutating webhooks run one after the other, each on what the one before
/// left (upstream's e2e "should mutate configmap"), and a pod's patched
/// init container gets its defaults after the patch ("should mutate pod and
/// apply defaults after mutation"); warnings and a 403 answer pass through.
#[test]
fn mutating_webhooks_patch_in_order_and_defaults_follow() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("mutate");
    // The test's server runs no controllers: the pod's service account is
    // made here.
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    let made = s.send(
        "POST",
        "/api/v1/namespaces/mutate/serviceaccounts",
        &account,
    );
    assert_eq!(made.code, 201, "{}", made.body);
    s.configure(
        "MutatingWebhookConfiguration",
        "mutate-configmaps",
        vec![
            s.hook(
                "adding-configmap-data-stage-1.k8s.io",
                "/mutating-configmaps",
                "mutate",
                &["configmaps"],
                json!({}),
            ),
            s.hook(
                "adding-configmap-data-stage-2.k8s.io",
                "/mutating-configmaps",
                "mutate",
                &["configmaps"],
                json!({}),
            ),
            s.hook(
                "adding-init-container.k8s.io",
                "/mutating-pods",
                "mutate",
                &["pods"],
                json!({}),
            ),
            s.hook("warning.k8s.io", "/warn", "mutate", &["secrets"], json!({})),
            s.hook(
                "deny-403.k8s.io",
                "/deny-403",
                "mutate",
                &["services"],
                json!({}),
            ),
        ],
    );
    let mut n = 0;
    eventually("the mutating webhooks to take effect", || {
        n += 1;
        let answer = s.configmap(
            "mutate",
            &format!("m-{n}"),
            json!({"mutation-start": "yes"}),
        );
        assert_eq!(answer.code, 201, "{}", answer.body);
        body(&answer)["data"].as_object().unwrap().len() == 3
    });
    let stored = s.send(
        "GET",
        &format!("/api/v1/namespaces/mutate/configmaps/m-{n}"),
        &json!({}),
    );
    assert_eq!(
        body(&stored)["data"],
        json!({"mutation-start": "yes", "mutation-stage-1": "yes", "mutation-stage-2": "yes"})
    );
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "webhook-to-be-mutated"},
        "spec": {"containers": [{"name": "example", "image": "nginx"}]}});
    let created = s.send("POST", "/api/v1/namespaces/mutate/pods", &pod);
    assert_eq!(created.code, 201, "{}", created.body);
    let inits = &body(&created)["spec"]["initContainers"];
    assert_eq!(inits.as_array().unwrap().len(), 1);
    assert_eq!(inits[0]["name"], "webhook-added-init-container");
    assert_eq!(inits[0]["terminationMessagePolicy"], "File");
    // An image without a tag is pulled always.
    assert_eq!(inits[0]["imagePullPolicy"], "Always");
    // Warnings go to the client as Warning headers.
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
    let warned = s.send("POST", "/api/v1/namespaces/mutate/secrets", &secret);
    assert_eq!(warned.code, 201, "{}", warned.body);
    assert_eq!(
        warned.header("warning"),
        vec![r#"299 - "first warning""#, r#"299 - "second warning""#]
    );
    // A refusal keeps the webhook's code and reason.
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"},
        "spec": {"ports": [{"port": 80}]}});
    let refused = s.send("POST", "/api/v1/namespaces/mutate/services", &service);
    assert_eq!(
        body(&refused),
        status(
            403,
            "Forbidden",
            "admission webhook \"deny-403.k8s.io\" denied the request: not you"
        )
    );
}

/// A webhook that cannot be called, or answers what cannot be used, fails
/// the request with upstream's 500 under `failurePolicy: Fail` and is passed
/// by under `Ignore`; a webhook with side effects refuses dry runs.
#[test]
fn failed_calls_answer_as_upstream() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    let port = s.port.clone();
    let url = |path: &str| format!("https://127.0.0.1:{port}{path}");
    let cases: Vec<(&str, Value, String)> = vec![
        (
            "status-500",
            json!({"clientConfig": {"url": url("/status-500"), "caBundle": s.ca}}),
            "failed to call webhook: an error on the server (\"boom\") has prevented the request from succeeding".to_owned(),
        ),
        (
            "no-response",
            json!({"clientConfig": {"url": url("/no-response"), "caBundle": s.ca}}),
            "received invalid webhook response: webhook response was absent".to_owned(),
        ),
        (
            "untrusted",
            json!({"clientConfig": {"url": url("/allow")}}),
            format!("failed to call webhook: Post \"{}?timeout=10s\": tls: failed to verify certificate: x509: certificate signed by unknown authority", url("/allow")),
        ),
        (
            "wrong-name",
            json!({"clientConfig": {"url": format!("https://localhost:{port}/allow"), "caBundle": s.ca}}),
            format!("failed to call webhook: Post \"https://localhost:{port}/allow?timeout=10s\": tls: failed to verify certificate: x509: certificate is valid for converter.default.svc, webhook.default.svc, not localhost"),
        ),
        (
            "refused",
            json!({"clientConfig": {"url": "https://127.0.0.1:1/allow", "caBundle": s.ca}}),
            "failed to call webhook: Post \"https://127.0.0.1:1/allow?timeout=10s\": dial tcp 127.0.0.1:1: connect: connection refused".to_owned(),
        ),
        (
            "slow",
            json!({"clientConfig": {"url": url("/delay-5s"), "caBundle": s.ca}, "timeoutSeconds": 1}),
            format!("failed to call webhook: Post \"{}?timeout=1s\": context deadline exceeded", url("/delay-5s")),
        ),
    ];
    let mut hooks = Vec::new();
    for (scenario, extra, _) in &cases {
        s.namespace(scenario);
        s.namespace(&format!("{scenario}-ignored"));
        hooks.push(s.hook(
            &format!("{scenario}.k8s.io"),
            "/allow",
            scenario,
            &["configmaps"],
            extra.clone(),
        ));
        let mut ignored = extra.clone();
        ignored["failurePolicy"] = json!("Ignore");
        hooks.push(s.hook(
            &format!("{scenario}-ignored.k8s.io"),
            "/allow",
            &format!("{scenario}-ignored"),
            &["configmaps"],
            ignored,
        ));
    }
    s.namespace("bad-uid");
    hooks.push(s.hook(
        "bad-uid.k8s.io",
        "/bad-uid",
        "bad-uid",
        &["configmaps"],
        json!({}),
    ));
    s.namespace("dry-run");
    hooks.push(s.hook(
        "dry-run.k8s.io",
        "/allow",
        "dry-run",
        &["configmaps"],
        json!({"sideEffects": "NoneOnDryRun"}),
    ));
    s.configure("ValidatingWebhookConfiguration", "failing", hooks);
    for (scenario, _, reason) in &cases {
        let answer = s.first(scenario, json!({}), 500);
        assert_eq!(
            body(&answer),
            internal(&format!(
                "failed calling webhook \"{scenario}.k8s.io\": {reason}"
            )),
            "{scenario}"
        );
        let passed = s.configmap(&format!("{scenario}-ignored"), "passed", json!({}));
        assert_eq!(passed.code, 201, "{scenario}: {}", passed.body);
    }
    // The calls are counted under upstream's metrics.
    let metrics = http_exchange(s.server.address, "GET", "/metrics", &[], b"").unwrap();
    for line in [
        "apiserver_admission_webhook_fail_open_count{name=\"status-500-ignored.k8s.io\",type=\"validating\"} 1",
        "apiserver_admission_webhook_rejection_count{name=\"status-500.k8s.io\",type=\"validating\",operation=\"CREATE\",error_type=\"calling_webhook_error\",rejection_code=\"500\"} 1",
        "apiserver_admission_webhook_request_total{name=\"status-500.k8s.io\",type=\"validating\",operation=\"CREATE\",code=\"500\",rejected=\"true\"} 1",
        "apiserver_admission_webhook_request_total{name=\"refused-ignored.k8s.io\",type=\"validating\",operation=\"CREATE\",code=\"400\",rejected=\"false\"} 1",
        "apiserver_admission_webhook_request_total{name=\"no-response.k8s.io\",type=\"validating\",operation=\"CREATE\",code=\"503\",rejected=\"true\"} 1",
    ] {
        assert!(
            metrics.body.lines().any(|l| l == line),
            "{line}\n{}",
            metrics.body
        );
    }
    let slow = "apiserver_admission_webhook_admission_duration_seconds_bucket{le=\"2.5\",name=\"slow.k8s.io\",type=\"validating\",operation=\"CREATE\",rejected=\"true\"} 1";
    assert!(
        metrics.body.lines().any(|l| l == slow),
        "{}",
        metrics
            .body
            .lines()
            .filter(|l| l.contains("slow.k8s.io"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let answer = s.first("bad-uid", json!({}), 500);
    let message = body(&answer)["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with("Internal error occurred: failed calling webhook \"bad-uid.k8s.io\": received invalid webhook response: expected response.uid=\"")
            && message.ends_with("\", got \"not-the-uid\""),
        "{message}"
    );
    // A webhook without side effects on dry runs is told the write is one
    // (v1 allows no other: `Some` and `Unknown` are refused when the
    // configuration is written).
    let dry = http_exchange(
        s.server.address,
        "POST",
        "/api/v1/namespaces/dry-run/configmaps?dryRun=All&fieldManager=tester",
        &[("Content-Type", "application/json")],
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dry"}})
            .to_string()
            .as_bytes(),
    )
    .unwrap();
    assert_eq!(dry.code, 201, "{}", dry.body);
    let told = s.reviews("/allow");
    let request = told
        .iter()
        .map(|r| &r["review"]["request"])
        .find(|r| r["name"] == "dry")
        .unwrap();
    assert_eq!(request["dryRun"], true);
    assert_eq!(
        request["options"],
        json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
            "dryRun": ["All"], "fieldManager": "tester"})
    );
}

/// `matchConditions` decide which requests a webhook sees (upstream's e2e
/// "should mutate everything except 'skip-me' configmaps"); a condition
/// that does not compile is refused when the configuration is written.
#[test]
fn match_conditions_select_requests() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("conditions");
    let bad = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "bad"},
        "webhooks": [s.hook("bad.k8s.io", "/allow", "conditions", &["configmaps"],
            json!({"matchConditions": [{"name": "bad", "expression": "object.x [] bad expression"}]}))]});
    let refused = s.send(
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        &bad,
    );
    assert_eq!(refused.code, 422, "{}", refused.body);
    let message = body(&refused)["message"].as_str().unwrap().to_owned();
    assert!(
        message.starts_with("ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: webhooks[0].matchConditions[0].expression: Invalid value: \"object.x [] bad expression\": compilation failed: "),
        "{message}"
    );
    s.configure(
        "MutatingWebhookConfiguration",
        "skip-me",
        vec![s.hook(
            "adding-configmap-data-stage-1.k8s.io",
            "/mutating-configmaps",
            "conditions",
            &["configmaps"],
            json!({"matchConditions": [{"name": "skip-me",
                "expression": "object.metadata.name != 'skip-me'"}]}),
        )],
    );
    let mut n = 0;
    eventually("the mutating webhook to take effect", || {
        n += 1;
        let answer = s.configmap(
            "conditions",
            &format!("c-{n}"),
            json!({"mutation-start": "yes"}),
        );
        assert_eq!(answer.code, 201, "{}", answer.body);
        body(&answer)["data"] == json!({"mutation-start": "yes", "mutation-stage-1": "yes"})
    });
    let skipped = s.configmap("conditions", "skip-me", json!({"mutation-start": "yes"}));
    assert_eq!(body(&skipped)["data"], json!({"mutation-start": "yes"}));
    // A condition that fails to evaluate fails the request under Fail.
    s.namespace("conditions-error");
    s.configure(
        "ValidatingWebhookConfiguration",
        "erring",
        vec![s.hook(
            "erring.k8s.io",
            "/allow",
            "conditions-error",
            &["configmaps"],
            json!({"matchConditions": [{"name": "missing",
                "expression": "object.data.missing == 'x'"}]}),
        )],
    );
    let answer = s.first("conditions-error", json!({"present": "y"}), 403);
    let message = body(&answer)["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("is forbidden: expression 'object.data.missing == 'x'' resulted in error: no such key: missing"),
        "{message}"
    );
}

/// An IfNeeded webhook is called again when a later webhook changed the
/// object, and the calls are recorded in the request's audit events with
/// upstream's annotation keys (`mutation.webhook.admission.k8s.io/...`,
/// `patch.webhook.admission.k8s.io/...`, the webhook's own).
#[test]
fn reinvocation_and_audit_annotations() {
    if !webhook_tools() {
        return;
    }
    let s = setup_with(|dir| {
        // Request level in `again`, where a webhook's patch is recorded;
        // Metadata elsewhere, where it is not (upstream's
        // AddAnnotationWithLevel).
        std::fs::write(dir.join("policy.yaml"), "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n  namespaces: [\"again\"]\n  resources:\n  - group: \"\"\n    resources: [\"configmaps\"]\n- level: Metadata\n  resources:\n  - group: \"\"\n    resources: [\"configmaps\"]\n").unwrap();
        vec![
            format!("--audit-policy-file={}", dir.join("policy.yaml").display()),
            format!("--audit-log-path={}", dir.join("audit.log").display()),
        ]
    });
    s.namespace("again");
    s.configure(
        "MutatingWebhookConfiguration",
        "reinvoke",
        vec![
            s.hook(
                "first.k8s.io",
                "/mark-first",
                "again",
                &["configmaps"],
                json!({"reinvocationPolicy": "IfNeeded"}),
            ),
            s.hook(
                "second.k8s.io",
                "/mark-second",
                "again",
                &["configmaps"],
                json!({}),
            ),
            s.hook("warn.k8s.io", "/warn", "again", &["configmaps"], json!({})),
        ],
    );
    let mut n = 0;
    eventually("the mutating webhooks to take effect", || {
        n += 1;
        let answer = s.configmap("again", &format!("r-{n}"), json!({"start": "x"}));
        assert_eq!(answer.code, 201, "{}", answer.body);
        body(&answer)["data"] == json!({"start": "x", "first": "after-second", "second": "yes"})
    });
    let log = std::fs::read_to_string(s.dir.path().join("audit.log")).unwrap();
    let event = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| {
            e["stage"] == "ResponseComplete"
                && e["verb"] == "create"
                && e["objectRef"]["namespace"] == "again"
                && e["responseStatus"]["code"] == 201
        })
        .last()
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(
        event["annotations"]["warn.k8s.io/checked"], "yes",
        "{event}"
    );
    let annotations = &event["annotations"];
    let mutation = |round: u32, index: u32| {
        annotations[format!("mutation.webhook.admission.k8s.io/round_{round}_index_{index}")]
            .as_str()
            .map(|v| serde_json::from_str::<Value>(v).unwrap())
    };
    assert_eq!(
        mutation(0, 0),
        Some(json!({"configuration": "reinvoke", "webhook": "first.k8s.io", "mutated": true}))
    );
    assert_eq!(
        mutation(0, 1),
        Some(json!({"configuration": "reinvoke", "webhook": "second.k8s.io", "mutated": true}))
    );
    assert_eq!(
        mutation(1, 0),
        Some(json!({"configuration": "reinvoke", "webhook": "first.k8s.io", "mutated": true}))
    );
    let patch = annotations["patch.webhook.admission.k8s.io/round_1_index_0"]
        .as_str()
        .map(|v| serde_json::from_str::<Value>(v).unwrap());
    assert_eq!(
        patch,
        Some(
            json!({"configuration": "reinvoke", "webhook": "first.k8s.io",
            "patch": [{"op": "add", "path": "/data/first", "value": "after-second"}],
            "patchType": "JSONPatch"})
        )
    );
    // At Metadata level the mutations are recorded, their patches not.
    let quiet = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "again-quiet", "labels": {"scenario": "again"}}});
    assert_eq!(s.send("POST", "/api/v1/namespaces", &quiet).code, 201);
    let answer = s.configmap("again-quiet", "q", json!({"start": "x"}));
    assert_eq!(answer.code, 201, "{}", answer.body);
    let log = std::fs::read_to_string(s.dir.path().join("audit.log")).unwrap();
    let event = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| {
            e["stage"] == "ResponseComplete"
                && e["verb"] == "create"
                && e["objectRef"]["namespace"] == "again-quiet"
        })
        .last()
        .unwrap_or_else(|| panic!("{log}"));
    let annotations = event["annotations"].as_object().unwrap();
    assert!(annotations.contains_key("mutation.webhook.admission.k8s.io/round_0_index_0"));
    assert!(
        !annotations.keys().any(|k| k.starts_with("patch.webhook")),
        "{event}"
    );
}

/// Webhooks see custom resources too (upstream's e2e "should be able to deny
/// custom resource creation, update and deletion", "should mutate custom
/// resource" and "... with pruning": what a webhook adds outside the schema
/// is pruned after admission).
#[test]
fn webhooks_see_custom_resources() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("crs");
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "e2es.webhook.example.com"},
        "spec": {"group": "webhook.example.com", "scope": "Namespaced",
            "names": {"plural": "e2es", "kind": "E2e"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "data": {"type": "object", "properties": {
                        "mutation-start": {"type": "string"},
                        "mutation-stage-1": {"type": "string"},
                        "webhook-e2e-test": {"type": "string"}}}}}}}]}});
    let created = s.send(
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &crd,
    );
    assert_eq!(created.code, 201, "{}", created.body);
    let path = "/apis/webhook.example.com/v1/namespaces/crs/e2es";
    eventually("the custom resource to be served", || {
        s.send("GET", path, &json!({})).code == 200
    });
    let rule = |ops: &[&str]| {
        json!({"rules": [{"operations": ops, "apiGroups": ["webhook.example.com"],
            "apiVersions": ["*"], "resources": ["e2es"]}]})
    };
    s.configure(
        "ValidatingWebhookConfiguration",
        "deny-crs",
        vec![s.hook(
            "deny-unwanted-custom-resource-data.k8s.io",
            "/configmaps",
            "crs",
            &[],
            rule(&["CREATE", "UPDATE", "DELETE"]),
        )],
    );
    s.configure(
        "MutatingWebhookConfiguration",
        "mutate-crs",
        vec![
            s.hook(
                "mutate-custom-resource-data-stage-1.k8s.io",
                "/mutating-configmaps",
                "crs",
                &[],
                rule(&["CREATE"]),
            ),
            s.hook(
                "mutate-custom-resource-data-stage-2.k8s.io",
                "/mutating-configmaps",
                "crs",
                &[],
                rule(&["CREATE"]),
            ),
        ],
    );
    let object = |name: &str, data: Value| {
        json!({"apiVersion": "webhook.example.com/v1", "kind": "E2e",
            "metadata": {"name": name}, "data": data})
    };
    let mut n = 0;
    let mut refused = None;
    eventually("the webhooks to take effect", || {
        n += 1;
        let answer = s.send(
            "POST",
            path,
            &object(
                &format!("bad-{n}"),
                json!({"webhook-e2e-test": "webhook-disallow"}),
            ),
        );
        let done = answer.code == 400;
        refused = Some(answer);
        done
    });
    assert_eq!(
        body(&refused.unwrap()),
        status(
            400,
            "the configmap contains unwanted key and value",
            "admission webhook \"deny-unwanted-custom-resource-data.k8s.io\" denied the request: the configmap contains unwanted key and value"
        )
    );
    // Both mutations ran; stage 2 is not in the schema and is pruned.
    eventually("both mutating webhooks", || {
        n += 1;
        let answer = s.send(
            "POST",
            path,
            &object(&format!("m-{n}"), json!({"mutation-start": "yes"})),
        );
        assert_eq!(answer.code, 201, "{}", answer.body);
        body(&answer)["data"] == json!({"mutation-start": "yes", "mutation-stage-1": "yes"})
    });
    let reviews = s.reviews("/mutating-configmaps");
    assert!(
        reviews
            .iter()
            .any(|r| r["review"]["request"]["object"]["data"]["mutation-stage-1"] == "yes"),
        "the second webhook saw the first one's change"
    );
}

/// A webhook named by a Service is reached through it (an ExternalName
/// Service: loopback addresses may not be endpoints) and presents the name
/// `<service>.<namespace>.svc`; a webhook that hangs holds up only the
/// requests it is called for; one body's repeated warning is sent once.
#[test]
fn services_hanging_webhooks_and_repeated_warnings() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    let port: u16 = s.port.parse().unwrap();
    let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "webhook"},
        "spec": {"type": "ExternalName", "externalName": "localhost",
            "ports": [{"port": port}]}});
    let made = s.send("POST", "/api/v1/namespaces/default/services", &service);
    assert_eq!(made.code, 201, "{}", made.body);
    s.namespace("by-service");
    s.namespace("hanging");
    s.namespace("free");
    s.configure(
        "ValidatingWebhookConfiguration",
        "by-service",
        vec![
            s.hook(
                "by-service.k8s.io",
                "/always-deny",
                "by-service",
                &["configmaps"],
                json!({"clientConfig": {"caBundle": s.ca, "service": {"namespace": "default",
                    "name": "webhook", "port": port, "path": "/always-deny"}}}),
            ),
            s.hook(
                "hanging.k8s.io",
                "/delay-5s",
                "hanging",
                &["configmaps"],
                json!({}),
            ),
        ],
    );
    let answer = s.first("by-service", json!({}), 400);
    assert_eq!(
        body(&answer),
        status(
            400,
            "",
            "admission webhook \"by-service.k8s.io\" denied the request: this webhook denies all requests"
        )
    );
    let denied = s.reviews("/always-deny");
    assert!(!denied.is_empty());
    // While one create waits for the hanging webhook, others are answered.
    let address = s.server.address;
    let hanging = std::thread::spawn(move || {
        let started = Instant::now();
        let answer = http_exchange(
            address,
            "POST",
            "/api/v1/namespaces/hanging/configmaps",
            &[("Content-Type", "application/json")],
            br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"slow"}}"#,
        )
        .unwrap();
        (answer.code, started.elapsed())
    });
    eventually("the hanging webhook to be called", || {
        !s.reviews("/delay-5s").is_empty()
    });
    for n in 0..20 {
        let started = Instant::now();
        let answer = s.configmap("free", &format!("quick-{n}"), json!({}));
        assert_eq!(answer.code, 201);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "a create beside a hanging webhook took {:?}",
            started.elapsed()
        );
    }
    assert!(!hanging.is_finished(), "the hanging webhook answered early");
    let (code, took) = hanging.join().unwrap();
    assert_eq!(code, 201);
    assert!(took >= Duration::from_secs(5), "{took:?}");
    // A body naming a field 300 times: one warning, as upstream's recorder.
    let mut repeated =
        String::from(r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"}"#);
    for _ in 0..300 {
        repeated.push_str(r#","data":{"a":"b"}"#);
    }
    repeated.push('}');
    let answer = http_exchange(
        s.server.address,
        "POST",
        "/api/v1/namespaces/free/configmaps",
        &[("Content-Type", "application/json")],
        repeated.as_bytes(),
    )
    .unwrap();
    assert_eq!(answer.code, 201, "{}", answer.body);
    assert_eq!(
        answer.header("warning"),
        vec![r#"299 - "duplicate field \"data\"""#]
    );
}

/// `matchPolicy: Equivalent` (the default) calls a webhook registered for
/// autoscaling/v2 for a HorizontalPodAutoscaler written through
/// autoscaling/v1, with the object converted to v2 and the request's own
/// kind in `requestKind`; `Exact` leaves it out.
#[test]
fn equivalent_versions_reach_a_webhook_in_its_version() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("equivalent");
    let rule = |policy: &str| {
        json!({"matchPolicy": policy, "rules": [{"operations": ["CREATE"],
            "apiGroups": ["autoscaling"], "apiVersions": ["v2"],
            "resources": ["horizontalpodautoscalers"]}]})
    };
    s.configure(
        "ValidatingWebhookConfiguration",
        "hpa",
        vec![
            s.hook(
                "equivalent.k8s.io",
                "/allow",
                "equivalent",
                &[],
                rule("Equivalent"),
            ),
            s.hook(
                "exact.k8s.io",
                "/always-deny",
                "equivalent",
                &[],
                rule("Exact"),
            ),
        ],
    );
    let hpa = |name: &str| {
        json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}})
    };
    let mut n = 0;
    eventually("the webhook to be called", || {
        n += 1;
        let answer = s.send(
            "POST",
            "/apis/autoscaling/v1/namespaces/equivalent/horizontalpodautoscalers",
            &hpa(&format!("h-{n}")),
        );
        assert_eq!(answer.code, 201, "{}", answer.body);
        !s.reviews("/allow").is_empty()
    });
    let review = &s.reviews("/allow")[0]["review"]["request"];
    assert_eq!(
        review["kind"],
        json!({"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"})
    );
    assert_eq!(
        review["resource"],
        json!({"group": "autoscaling", "version": "v2", "resource": "horizontalpodautoscalers"})
    );
    assert_eq!(
        review["requestKind"],
        json!({"group": "autoscaling", "version": "v1", "kind": "HorizontalPodAutoscaler"})
    );
    assert_eq!(review["object"]["apiVersion"], "autoscaling/v2");
    assert_eq!(
        review["object"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        50
    );
    assert!(
        s.reviews("/always-deny").is_empty(),
        "the Exact webhook was called"
    );
    // A mutating webhook in v2 patches the v2 object; the v1 write keeps it.
    s.configure(
        "MutatingWebhookConfiguration",
        "hpa",
        vec![s.hook(
            "annotate.k8s.io",
            "/annotate",
            "equivalent",
            &[],
            rule("Equivalent"),
        )],
    );
    eventually("the mutating webhook to take effect", || {
        n += 1;
        let answer = s.send(
            "POST",
            "/apis/autoscaling/v1/namespaces/equivalent/horizontalpodautoscalers",
            &hpa(&format!("h-{n}")),
        );
        assert_eq!(answer.code, 201, "{}", answer.body);
        let created = body(&answer);
        created["metadata"]["annotations"]["webhook"] == "autoscaling/v2"
            && created["apiVersion"] == "autoscaling/v1"
            && created["spec"]["targetCPUUtilizationPercentage"] == 50
    });
}

/// An eviction is admitted as upstream admits it: a CREATE of
/// `pods/eviction` whose object is the policy/v1 Eviction.
#[test]
fn webhooks_see_evictions() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("evict");
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    let made = s.send("POST", "/api/v1/namespaces/evict/serviceaccounts", &account);
    assert_eq!(made.code, 201, "{}", made.body);
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "victim"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let made = s.send("POST", "/api/v1/namespaces/evict/pods", &pod);
    assert_eq!(made.code, 201, "{}", made.body);
    s.configure(
        "ValidatingWebhookConfiguration",
        "no-evictions",
        vec![s.hook(
            "no-evictions.k8s.io",
            "/always-deny",
            "evict",
            &["pods/eviction"],
            json!({"rules": [{"operations": ["CREATE"], "apiGroups": [""],
                "apiVersions": ["v1"], "resources": ["pods/eviction"]}]}),
        )],
    );
    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "victim", "namespace": "evict"}});
    let mut refused = None;
    eventually("the eviction webhook to take effect", || {
        let answer = s.send(
            "POST",
            "/api/v1/namespaces/evict/pods/victim/eviction",
            &eviction,
        );
        let done = answer.code == 400;
        refused = Some(answer);
        done
    });
    assert_eq!(
        body(&refused.unwrap()),
        status(
            400,
            "",
            "admission webhook \"no-evictions.k8s.io\" denied the request: this webhook denies all requests"
        )
    );
    let request = &s.reviews("/always-deny")[0]["review"]["request"];
    assert_eq!(
        request["kind"],
        json!({"group": "policy", "version": "v1", "kind": "Eviction"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "pods"})
    );
    assert_eq!(request["subResource"], "eviction");
    assert_eq!(request["requestSubResource"], "eviction");
    assert_eq!(request["name"], "victim");
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(request["object"]["kind"], "Eviction");
    // The pod is still there.
    assert_eq!(
        s.send("GET", "/api/v1/namespaces/evict/pods/victim", &json!({}))
            .code,
        200
    );
}

/// A webhook that lists only `v1beta1` is sent an `admission.k8s.io/v1beta1`
/// review; its answer is read as v1beta1 (no uid or kind check).
#[test]
fn a_v1beta1_webhook_gets_a_v1beta1_review() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("beta");
    s.configure(
        "ValidatingWebhookConfiguration",
        "beta",
        vec![s.hook(
            "beta.k8s.io",
            "/always-deny",
            "beta",
            &["configmaps"],
            json!({"admissionReviewVersions": ["v2", "v1beta1"]}),
        )],
    );
    let answer = s.first("beta", json!({}), 400);
    assert_eq!(
        body(&answer),
        status(
            400,
            "",
            "admission webhook \"beta.k8s.io\" denied the request: this webhook denies all requests"
        )
    );
    let review = &s.reviews("/always-deny")[0]["review"];
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1beta1");
    assert_eq!(review["request"]["operation"], "CREATE");
}

/// Two replicas on one etcd: a configuration written through one takes
/// effect on the other without a restart.
#[test]
fn a_configuration_reaches_every_replica_on_etcd() {
    if !webhook_tools() || !kapi_test_support::etcd::etcd_available() {
        return;
    }
    let hooked = webhook_alone();
    let etcd = kapi_test_support::etcd::EtcdCluster::start(1);
    let endpoints = etcd.endpoints();
    let kapi = Path::new(env!("CARGO_BIN_EXE_kapi"));
    let a = Server::start_args(kapi, &["--etcd-servers", &endpoints]);
    let b = Server::start_args(kapi, &["--etcd-servers", &endpoints]);
    let send = |server: &Server, method: &str, path: &str, body: &Value| {
        http_exchange(
            server.address,
            method,
            path,
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        )
        .unwrap()
    };
    let config = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "everywhere"},
        "webhooks": [{"name": "everywhere.k8s.io",
            "clientConfig": {"url": format!("https://127.0.0.1:{}/always-deny", hooked.port),
                "caBundle": hooked.ca},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                "resources": ["configmaps"]}],
            "objectSelector": {"matchLabels": {"denied": "yes"}},
            "sideEffects": "None", "admissionReviewVersions": ["v1"]}]});
    let made = send(
        &a,
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        &config,
    );
    assert_eq!(made.code, 201, "{}", made.body);
    let mut n = 0;
    eventually("the other replica to call the webhook", || {
        n += 1;
        let answer = send(
            &b,
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("r-{n}"), "labels": {"denied": "yes"}}}),
        );
        answer.code == 400
    });
    // And it stops when the configuration goes, on both.
    let gone = send(
        &b,
        "DELETE",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/everywhere",
        &json!({}),
    );
    assert_eq!(gone.code, 200, "{}", gone.body);
    eventually("the first replica to stop calling it", || {
        n += 1;
        let answer = send(
            &a,
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("r-{n}"), "labels": {"denied": "yes"}}}),
        );
        answer.code == 201
    });
}

/// A policy engine's usual set, end to end: a mutating webhook gives every
/// pod a `team` label, and a ValidatingAdmissionPolicy refuses pods whose
/// team its param (a ConfigMap of allowed teams) does not list.
#[test]
fn a_policy_engine_end_to_end() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("engine");
    let account =
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    assert_eq!(
        s.send(
            "POST",
            "/api/v1/namespaces/engine/serviceaccounts",
            &account
        )
        .code,
        201
    );
    let teams = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "teams"},
        "data": {"default": "yes", "web": "yes"}});
    assert_eq!(
        s.send("POST", "/api/v1/namespaces/engine/configmaps", &teams)
            .code,
        201
    );
    s.configure(
        "MutatingWebhookConfiguration",
        "inject-team",
        vec![s.hook(
            "inject-team.k8s.io",
            "/inject-team",
            "engine",
            &["pods"],
            json!({}),
        )],
    );
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "known-teams"},
        "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["pods"]}],
                "namespaceSelector": {"matchLabels": {"scenario": "engine"}}},
            "validations": [{"expression": "has(object.metadata.labels) && 'team' in object.metadata.labels",
                    "message": "pods need a team"},
                {"expression": "object.metadata.labels.team in params.data",
                    "messageExpression": "'team ' + object.metadata.labels.team + ' is not known'"}]}});
    let made = s.send(
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        &policy,
    );
    assert_eq!(made.code, 201, "{}", made.body);
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "known-teams"},
        "spec": {"policyName": "known-teams", "validationActions": ["Deny"],
            "paramRef": {"name": "teams", "parameterNotFoundAction": "Deny"}}});
    let made = s.send(
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        &binding,
    );
    assert_eq!(made.code, 201, "{}", made.body);
    let pod = |name: &str, team: Option<&str>| {
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        if let Some(team) = team {
            pod["metadata"]["labels"] = json!({"team": team});
        }
        pod
    };
    // Both in place: a pod of an unknown team is refused.
    let mut n = 0;
    let mut refused = None;
    eventually("the webhook and the policy to take effect", || {
        n += 1;
        let answer = s.send(
            "POST",
            "/api/v1/namespaces/engine/pods",
            &pod(&format!("p-{n}"), Some("ops")),
        );
        let done = answer.code == 422;
        refused = Some(answer);
        done
    });
    let refused = body(&refused.unwrap());
    assert_eq!(
        refused["message"],
        format!(
            "pods \"p-{n}\" is forbidden: ValidatingAdmissionPolicy 'known-teams' with binding 'known-teams' denied request: team ops is not known"
        )
    );
    // A pod without a team gets the default one and is allowed; a known
    // team is kept.
    let created = s.send(
        "POST",
        "/api/v1/namespaces/engine/pods",
        &pod("plain", None),
    );
    assert_eq!(created.code, 201, "{}", created.body);
    assert_eq!(
        body(&created)["metadata"]["labels"],
        json!({"team": "default"})
    );
    let created = s.send(
        "POST",
        "/api/v1/namespaces/engine/pods",
        &pod("web", Some("web")),
    );
    assert_eq!(created.code, 201, "{}", created.body);
    assert_eq!(body(&created)["metadata"]["labels"], json!({"team": "web"}));
    // kubectl sees the refusal too.
    let err = s.server.kubectl_err(&[
        "run",
        "by-kubectl",
        "-n",
        "engine",
        "--image=nginx",
        "--labels=team=ops",
    ]);
    assert!(err.contains("team ops is not known"), "{err}");
}

/// A write through `/scale` is admitted as upstream admits it: an UPDATE of
/// `deployments/scale` whose object is the autoscaling/v1 Scale; a mutating
/// webhook's change of the Scale's replicas reaches the Deployment.
#[test]
fn webhooks_see_scale_writes_as_scales() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("scaled");
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let made = s.send(
        "POST",
        "/apis/apps/v1/namespaces/scaled/deployments",
        &deployment,
    );
    assert_eq!(made.code, 201, "{}", made.body);
    let scale_rule = json!({"rules": [{"operations": ["UPDATE"], "apiGroups": ["apps"],
        "apiVersions": ["v1"], "resources": ["deployments/scale"]}]});
    s.configure(
        "MutatingWebhookConfiguration",
        "scale",
        vec![s.hook(
            "replicas-5.k8s.io",
            "/replicas-5",
            "scaled",
            &[],
            scale_rule.clone(),
        )],
    );
    s.configure(
        "ValidatingWebhookConfiguration",
        "scale",
        vec![s.hook("seen.k8s.io", "/allow", "scaled", &[], scale_rule)],
    );
    eventually("the scale webhooks to take effect", || {
        let out =
            s.server
                .kubectl_ok(&["scale", "deployment", "d", "-n", "scaled", "--replicas=2"]);
        assert!(out.contains("scaled"), "{out}");
        let got = s.send(
            "GET",
            "/apis/apps/v1/namespaces/scaled/deployments/d",
            &json!({}),
        );
        body(&got)["spec"]["replicas"] == 5
    });
    let seen = s.reviews("/allow");
    let request = &seen[0]["review"]["request"];
    assert_eq!(
        request["kind"],
        json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "apps", "version": "v1", "resource": "deployments"})
    );
    assert_eq!(request["subResource"], "scale");
    assert_eq!(request["operation"], "UPDATE");
    assert_eq!(request["object"]["kind"], "Scale");
    assert_eq!(request["object"]["spec"]["replicas"], 5);
    assert_eq!(request["oldObject"]["kind"], "Scale");
    // A write of the Deployment itself is not a scale write.
    let mut changed = body(&s.send(
        "GET",
        "/apis/apps/v1/namespaces/scaled/deployments/d",
        &json!({}),
    ));
    changed["spec"]["replicas"] = json!(3);
    let put = s.send(
        "PUT",
        "/apis/apps/v1/namespaces/scaled/deployments/d",
        &changed,
    );
    assert_eq!(put.code, 200, "{}", put.body);
    assert_eq!(body(&put)["spec"]["replicas"], 3);
}

/// Equivalent resources of another group: core/v1 and events.k8s.io/v1
/// Events are the same stored objects, so a webhook registered for
/// events.k8s.io/v1 is called for a core/v1 Event, with the object in
/// events.k8s.io/v1, and its patch reaches the core Event.
#[test]
fn equivalent_resources_of_another_group_reach_a_webhook() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("events");
    s.configure(
        "MutatingWebhookConfiguration",
        "events",
        vec![s.hook(
            "annotate.events.k8s.io",
            "/annotate",
            "events",
            &[],
            json!({"rules": [{"operations": ["CREATE"], "apiGroups": ["events.k8s.io"],
                "apiVersions": ["v1"], "resources": ["events"]}]}),
        )],
    );
    let event = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "name": "web", "namespace": "events"},
            "reason": "Started", "message": "started", "count": 1,
            "source": {"component": "kubelet"}})
    };
    let mut n = 0;
    eventually("the webhook to patch core Events", || {
        n += 1;
        let answer = s.send(
            "POST",
            "/api/v1/namespaces/events/events",
            &event(&format!("e-{n}")),
        );
        assert_eq!(answer.code, 201, "{}", answer.body);
        let created = body(&answer);
        created["metadata"]["annotations"]["webhook"] == "events.k8s.io/v1"
            && created["apiVersion"] == "v1"
            && created["involvedObject"]["name"] == "web"
    });
    let review = &s.reviews("/annotate")[0]["review"]["request"];
    assert_eq!(
        review["kind"],
        json!({"group": "events.k8s.io", "version": "v1", "kind": "Event"})
    );
    assert_eq!(
        review["requestKind"],
        json!({"group": "", "version": "v1", "kind": "Event"})
    );
    assert_eq!(review["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(review["object"]["regarding"]["name"], "web");
    assert_eq!(review["object"]["note"], "started");
}

/// A mutating webhook's change runs the mutating chain once more, built-in
/// plugins included (upstream's reinvoker): an init container a webhook
/// adds gets its LimitRange defaults from the LimitRanger, which ran before
/// the webhook in the first run.
#[test]
fn built_in_plugins_see_what_a_webhook_added() {
    if !webhook_tools() {
        return;
    }
    let s = setup();
    s.namespace("sidecar");
    // No controllers run here: the namespace's service account is made by
    // hand.
    let account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "default"}});
    assert_eq!(
        s.send(
            "POST",
            "/api/v1/namespaces/sidecar/serviceaccounts",
            &account
        )
        .code,
        201
    );
    let limits = json!({"apiVersion": "v1", "kind": "LimitRange",
        "metadata": {"name": "defaults"},
        "spec": {"limits": [{"type": "Container",
            "default": {"cpu": "200m", "memory": "64Mi"},
            "defaultRequest": {"cpu": "100m", "memory": "32Mi"}}]}});
    assert_eq!(
        s.send("POST", "/api/v1/namespaces/sidecar/limitranges", &limits)
            .code,
        201
    );
    s.configure(
        "MutatingWebhookConfiguration",
        "inject",
        vec![s.hook(
            "inject.k8s.io",
            "/mutating-pods",
            "sidecar",
            &["pods"],
            json!({}),
        )],
    );
    let pod = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    };
    let mut n = 0;
    let mut created = Value::Null;
    eventually("the webhook to add its init container", || {
        n += 1;
        let answer = s.send(
            "POST",
            "/api/v1/namespaces/sidecar/pods",
            &pod(&format!("p-{n}")),
        );
        assert_eq!(answer.code, 201, "{}", answer.body);
        created = body(&answer);
        created["spec"]["initContainers"][0]["name"] == "webhook-added-init-container"
    });
    let defaults = json!({"limits": {"cpu": "200m", "memory": "64Mi"},
        "requests": {"cpu": "100m", "memory": "32Mi"}});
    assert_eq!(created["spec"]["containers"][0]["resources"], defaults);
    assert_eq!(
        created["spec"]["initContainers"][0]["resources"], defaults,
        "{created}"
    );
}
