//! ValidatingAdmissionPolicy and its bindings, answered as kube-apiserver
//! 1.32 answers them (k8s.io/apiserver's validating policy plugin; upstream's
//! e2e test/e2e/apimachinery/validatingadmissionpolicy.go for the policy
//! against Deployments and the one with variables).

use std::path::Path;
use std::time::{Duration, Instant};

use kapi_test_support::{Answer, Server, http_exchange};
use serde_json::{Value, json};

fn send(server: &Server, method: &str, path: &str, body: &Value) -> Answer {
    http_exchange(
        server.address,
        method,
        path,
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .unwrap()
}

fn created(answer: Answer) -> Value {
    assert_eq!(answer.code, 201, "{}", answer.body);
    serde_json::from_str(&answer.body).unwrap()
}

fn namespace(server: &Server, name: &str) {
    created(send(
        server,
        "POST",
        "/api/v1/namespaces",
        &json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": name, "labels": {"policy-test": name}}}),
    ));
}

fn policy(server: &Server, name: &str, spec: Value) {
    created(send(
        server,
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        &json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name}, "spec": spec}),
    ));
}

fn binding(server: &Server, name: &str, spec: Value) {
    created(send(
        server,
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        &json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name}, "spec": spec}),
    ));
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

/// Creates deployments named `<prefix>-<n>` until one answers `code`.
fn until(server: &Server, namespace: &str, prefix: &str, replicas: i64, code: u16) -> Answer {
    let deadline = Instant::now() + Duration::from_secs(30);
    for n in 0.. {
        let answer = send(
            server,
            "POST",
            &format!("/apis/apps/v1/namespaces/{namespace}/deployments"),
            &deployment(&format!("{prefix}-{n}"), replicas),
        );
        if answer.code == code {
            return answer;
        }
        assert!(
            Instant::now() < deadline,
            "waited 30 s for {code}: {}",
            answer.body
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    unreachable!()
}

fn deployments_rule() -> Value {
    json!({"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
        "resources": ["deployments"]})
}

/// Upstream's "should validate against a Deployment": a refusal is 422
/// Invalid, its message the failed expression (the messageExpression adds a
/// string to an int and fails, so upstream falls back too); a ReplicaSet is
/// not selected; `namespaceObject` is the request's namespace.
#[test]
fn a_policy_refuses_deployments_as_upstream() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    namespace(&server, "vap");
    let selector = json!({"matchLabels": {"policy-test": "vap"}});
    policy(
        &server,
        "replicas.policy.example.com",
        json!({"matchConstraints": {"resourceRules": [deployments_rule()],
                "namespaceSelector": selector},
            "validations": [
                {"expression": "object.spec.replicas > 1",
                 "messageExpression": "'wants replicas > 1, got ' + object.spec.replicas"},
                {"expression": "namespaceObject.metadata.name == 'vap'",
                 "message": "wants namespace vap"}]}),
    );
    binding(
        &server,
        "replicas.binding.example.com",
        json!({"policyName": "replicas.policy.example.com", "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": selector}}),
    );
    let refused = until(&server, "vap", "one", 1, 422);
    let body: Value = serde_json::from_str(&refused.body).unwrap();
    let name = body["details"]["name"].as_str().unwrap().to_owned();
    let why = "ValidatingAdmissionPolicy 'replicas.policy.example.com' with binding 'replicas.binding.example.com' denied request: failed expression: object.spec.replicas > 1";
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("deployments.apps \"{name}\" is forbidden: {why}"),
            "reason": "Invalid",
            "details": {"name": name, "group": "apps", "kind": "deployments",
                "causes": [{"message": why}]},
            "code": 422})
    );
    created(send(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/vap/deployments",
        &deployment("two", 2),
    ));
    let mut replica_set = deployment("rs", 1);
    replica_set["kind"] = json!("ReplicaSet");
    created(send(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/vap/replicasets",
        &replica_set,
    ));
    // Updates are checked too.
    let mut fewer = deployment("two", 1);
    fewer["metadata"]["resourceVersion"] = json!(null);
    let answer = send(
        &server,
        "PUT",
        "/apis/apps/v1/namespaces/vap/deployments/two",
        &fewer,
    );
    assert_eq!(answer.code, 422, "{}", answer.body);
}

/// Upstream's "should allow expressions to refer variables."; a param
/// object (a ConfigMap the binding names) feeds the checks, and a missing
/// one is refused under `parameterNotFoundAction: Deny`; Warn and Audit
/// actions let the write through with a warning.
#[test]
fn variables_params_and_actions() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    // An expression that does not compile is refused with the policy.
    let bad = send(
        &server,
        "POST",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        &json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "bad"},
            "spec": {"matchConstraints": {"resourceRules": [deployments_rule()]},
                "validations": [{"expression": "object.x [] bad expression"}]}}),
    );
    assert_eq!(bad.code, 422, "{}", bad.body);
    assert!(
        bad.body.contains("ValidatingAdmissionPolicy.admissionregistration.k8s.io \\\"bad\\\" is invalid: spec.validations[0].expression: Invalid value: \\\"object.x [] bad expression\\\": compilation failed: "),
        "{}",
        bad.body
    );
    namespace(&server, "vars");
    let selector = json!({"matchLabels": {"policy-test": "vars"}});
    policy(
        &server,
        "odd.policy.example.com",
        json!({"matchConstraints": {"resourceRules": [deployments_rule()],
                "namespaceSelector": selector},
            "variables": [
                {"name": "replicas", "expression": "object.spec.replicas"},
                {"name": "oddReplicas", "expression": "variables.replicas % 2 == 1"}],
            "validations": [
                {"expression": "variables.replicas > 1"},
                {"expression": "variables.oddReplicas"}]}),
    );
    binding(
        &server,
        "odd.binding.example.com",
        json!({"policyName": "odd.policy.example.com", "validationActions": ["Deny"]}),
    );
    let refused = until(&server, "vars", "one", 1, 422);
    assert!(
        refused
            .body
            .contains("denied request: failed expression: variables.replicas > 1"),
        "{}",
        refused.body
    );
    created(send(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/vars/deployments",
        &deployment("three", 3),
    ));
    let four = send(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/vars/deployments",
        &deployment("four", 4),
    );
    assert!(
        four.body
            .contains("denied request: failed expression: variables.oddReplicas"),
        "{}",
        four.body
    );

    // Params: the most replicas a namespace allows, from its ConfigMap.
    namespace(&server, "params");
    let selector = json!({"matchLabels": {"policy-test": "params"}});
    policy(
        &server,
        "max.policy.example.com",
        json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [deployments_rule()],
                "namespaceSelector": selector},
            "validations": [{"expression": "object.spec.replicas <= int(params.data.max)",
                "message": "too many replicas", "reason": "Forbidden"}]}),
    );
    binding(
        &server,
        "max.binding.example.com",
        json!({"policyName": "max.policy.example.com", "validationActions": ["Deny"],
            "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"}}),
    );
    let missing = until(&server, "params", "none", 1, 422);
    assert!(
        missing.body.contains("ValidatingAdmissionPolicy 'max.policy.example.com' with binding 'max.binding.example.com' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"),
        "{}",
        missing.body
    );
    created(send(
        &server,
        "POST",
        "/api/v1/namespaces/params/configmaps",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits"},
            "data": {"max": "3"}}),
    ));
    created(send(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/params/deployments",
        &deployment("fits", 3),
    ));
    let too_many = send(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/params/deployments",
        &deployment("big", 5),
    );
    let body: Value = serde_json::from_str(&too_many.body).unwrap();
    assert_eq!(body["code"], 403, "{body}");
    assert_eq!(body["reason"], "Forbidden");
    assert_eq!(
        body["message"],
        "deployments.apps \"big\" is forbidden: ValidatingAdmissionPolicy 'max.policy.example.com' with binding 'max.binding.example.com' denied request: too many replicas"
    );

    // Warn and Audit: the write goes through with a warning.
    namespace(&server, "warned");
    policy(
        &server,
        "warn.policy.example.com",
        json!({"matchConstraints": {"resourceRules": [deployments_rule()],
                "namespaceSelector": {"matchLabels": {"policy-test": "warned"}}},
            "validations": [{"expression": "object.spec.replicas > 1",
                "message": "one replica is fragile"}]}),
    );
    binding(
        &server,
        "warn.binding.example.com",
        json!({"policyName": "warn.policy.example.com", "validationActions": ["Warn", "Audit"]}),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    let warned = loop {
        n += 1;
        let answer = send(
            &server,
            "POST",
            "/apis/apps/v1/namespaces/warned/deployments",
            &deployment(&format!("w-{n}"), 1),
        );
        assert_eq!(answer.code, 201, "{}", answer.body);
        if !answer.header("warning").is_empty() {
            break answer;
        }
        assert!(Instant::now() < deadline, "no warning in 30 s");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        warned.header("warning"),
        vec![
            r#"299 - "Validation failed for ValidatingAdmissionPolicy 'warn.policy.example.com' with binding 'warn.binding.example.com': one replica is fragile""#
        ]
    );
}

/// The status of policy `name` once its type checking is written (upstream's
/// e2e waits for `status.typeChecking` to be present), at `generation`.
fn type_checked(server: &Server, name: &str, generation: i64) -> Value {
    let path = format!("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/{name}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = http_exchange(server.address, "GET", &path, &[], b"").unwrap();
        let policy: Value = serde_json::from_str(&answer.body).unwrap();
        // The first check of a policy leaves `typeChecking` (empty when
        // nothing was found); a later one that finds nothing where the last
        // found something leaves none, as server-side apply drops the map
        // it emptied.
        let first = generation == 1;
        if policy["status"]["observedGeneration"] == generation
            && (!first || policy["status"]["typeChecking"].is_object())
        {
            return policy;
        }
        assert!(
            Instant::now() < deadline,
            "waited 30 s for the type checking: {}",
            answer.body
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Upstream's "should type check validation expressions" and "should type
/// check a CRD" (test/e2e/apimachinery/validatingadmissionpolicy.go), with
/// the whole warnings as upstream's type checker words them, and the
/// status written by server-side apply as kube-controller-manager writes it.
#[test]
fn policies_are_type_checked_as_upstream() {
    let server = Server::start_args(
        Path::new(env!("CARGO_BIN_EXE_kapi")),
        &["--controllers=validatingadmissionpolicy-status-controller"],
    );
    policy(
        &server,
        "correct.example.com",
        json!({"matchConstraints": {"resourceRules": [deployments_rule()]},
            "validations": [{"expression": "object.spec.replicas > 1"}]}),
    );
    policy(
        &server,
        "confused.example.com",
        json!({"matchConstraints": {"resourceRules": [deployments_rule()]},
            "validations": [{"expression": "object.spec.replicas > '1'",
                "messageExpression": "'wants replicas > 1, got ' + object.spec.replicas"}]}),
    );
    let correct = type_checked(&server, "correct.example.com", 1);
    assert_eq!(
        correct["status"],
        json!({"observedGeneration": 1, "typeChecking": {}})
    );
    let managers = correct["metadata"]["managedFields"].as_array().unwrap();
    let status = managers
        .iter()
        .find(|m| m["manager"] == "validatingadmissionpolicy-status")
        .unwrap();
    assert_eq!(
        (
            &status["operation"],
            &status["subresource"],
            &status["fieldsV1"]
        ),
        (
            &json!("Apply"),
            &json!("status"),
            &json!({"f:status": {"f:observedGeneration": {}, "f:typeChecking": {}}})
        ),
        "{correct}"
    );
    let confused = type_checked(&server, "confused.example.com", 1);
    assert_eq!(
        confused["status"]["typeChecking"]["expressionWarnings"],
        json!([
            {"fieldRef": "spec.validations[0].expression",
             "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > '1'\n | .....................^\n"},
            {"fieldRef": "spec.validations[0].messageExpression",
             "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:28: found no matching overload for '_+_' applied to '(string, int)'\n | 'wants replicas > 1, got ' + object.spec.replicas\n | ...........................^\n"}])
    );

    // A change of the spec is checked again.
    let fixed = http_exchange(
        server.address,
        "PATCH",
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/confused.example.com",
        &[("Content-Type", "application/json-patch+json")],
        json!([{"op": "replace", "path": "/spec/validations/0",
            "value": {"expression": "object.spec.replicas > 1"}}])
        .to_string()
        .as_bytes(),
    )
    .unwrap();
    assert_eq!(fixed.code, 200, "{}", fixed.body);
    let confused = type_checked(&server, "confused.example.com", 2);
    let warnings = &confused["status"]["typeChecking"]["expressionWarnings"];
    assert!(warnings.is_null(), "{confused}");

    // A custom resource's schema comes from its OpenAPI document.
    created(send(
        &server,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {"group": "stable.example.com", "scope": "Namespaced",
                "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab",
                    "shortNames": ["ct"]},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "cronSpec": {"type": "string"}, "image": {"type": "string"},
                            "replicas": {"type": "integer"}}}}}}}]}}),
    ));
    let deadline = Instant::now() + Duration::from_secs(30);
    while http_exchange(
        server.address,
        "GET",
        "/openapi/v3/apis/stable.example.com/v1",
        &[],
        b"",
    )
    .unwrap()
    .code
        != 200
    {
        assert!(
            Instant::now() < deadline,
            "the CRD's OpenAPI document never came"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let crontabs = json!({"apiGroups": ["stable.example.com"], "apiVersions": ["v1"],
        "operations": ["CREATE", "UPDATE"], "resources": ["crontabs"]});
    policy(
        &server,
        "correct-crd.example.com",
        json!({"matchConstraints": {"resourceRules": [crontabs]},
            "validations": [{"expression": "object.spec.replicas > 1"}]}),
    );
    policy(
        &server,
        "confused-crd.example.com",
        json!({"matchConstraints": {"resourceRules": [crontabs]},
            "validations": [{"expression": "object.spec.replicas > '1'"},
                {"expression": "object.spec.maxRetries < 10"}]}),
    );
    let correct = type_checked(&server, "correct-crd.example.com", 1);
    assert_eq!(correct["status"]["typeChecking"], json!({}));
    let confused = type_checked(&server, "confused-crd.example.com", 1);
    assert_eq!(
        confused["status"]["typeChecking"]["expressionWarnings"],
        json!([
            {"fieldRef": "spec.validations[0].expression",
             "warning": "stable.example.com/v1, Kind=CronTab: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > '1'\n | .....................^\n"},
            {"fieldRef": "spec.validations[1].expression",
             "warning": "stable.example.com/v1, Kind=CronTab: ERROR: <input>:1:12: undefined field 'maxRetries'\n | object.spec.maxRetries < 10\n | ...........^\n"}])
    );
}

/// The `authorizer` variable: a policy that lets ConfigMaps be written only
/// while a service account may list the namespace's Secrets, decided by the
/// server's RBAC as it changes (upstream's authorizer library).
#[test]
fn the_authorizer_variable_asks_rbac() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    namespace(&server, "authz");
    let selector = json!({"matchLabels": {"policy-test": "authz"}});
    let configmaps = json!({"apiGroups": [""], "apiVersions": ["v1"],
        "operations": ["CREATE"], "resources": ["configmaps"]});
    policy(
        &server,
        "robot.policy.example.com",
        json!({"matchConstraints": {"resourceRules": [configmaps], "namespaceSelector": selector},
            "validations": [
                {"expression": "authorizer.requestResource.check('create').allowed()",
                 "message": "the writer may not create it"},
                {"expression": "authorizer.serviceAccount('authz', 'robot').group('').resource('secrets').namespace('authz').check('list').allowed()",
                 "messageExpression": "'robot may not list secrets: ' + authorizer.serviceAccount('authz', 'robot').group('').resource('secrets').namespace('authz').check('list').reason()"}]}),
    );
    binding(
        &server,
        "robot.binding.example.com",
        json!({"policyName": "robot.policy.example.com", "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": selector}}),
    );
    let configmap =
        |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    // Bounded: the policy and then the role reach the caches shortly.
    let until = |name: &str, code: u16| -> Answer {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let answer = send(
                &server,
                "POST",
                "/api/v1/namespaces/authz/configmaps",
                &configmap(name),
            );
            if answer.code == code {
                return answer;
            }
            assert!(
                Instant::now() < deadline,
                "waited 30 s for {code}: {}",
                answer.body
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    // RBAC gives no reason for what it does not allow; the message is
    // trimmed, as upstream trims a messageExpression's.
    let refused = until("first", 422);
    let body: Value = serde_json::from_str(&refused.body).unwrap();
    assert_eq!(
        body["message"],
        "configmaps \"first\" is forbidden: ValidatingAdmissionPolicy 'robot.policy.example.com' \
         with binding 'robot.binding.example.com' denied request: robot may not list secrets:",
        "{body}"
    );
    created(send(
        &server,
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/authz/roles",
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "secret-lister"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]}),
    ));
    created(send(
        &server,
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/authz/rolebindings",
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "robot-lists-secrets"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "secret-lister"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "authz"}]}),
    ));
    until("second", 201);
}

/// Cost limits as kube-apiserver counts them (cel-go's actual cost): one
/// expression past the per-call limit fails with cel-go's words; a
/// policy's validations together past the runtime budget fail the policy
/// with upstream's words. Each `contains` of a 3000-character value in
/// itself costs 300 × 300 units.
#[test]
fn policies_keep_to_cel_cost_limits() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    namespace(&server, "costly");
    let configmaps = json!({"apiGroups": [""], "apiVersions": ["v1"],
        "operations": ["CREATE"], "resources": ["configmaps"]});
    let every = "object.data.all(k, object.data[k].contains(object.data[k]))";
    // One expression for the per-call limit; twelve (each under it) for
    // the budget of the policy.
    policy(
        &server,
        "one.costly.example.com",
        json!({"matchConstraints": {"resourceRules": [configmaps.clone()]},
            "matchConditions": [{"name": "one", "expression": "object.metadata.name.startsWith('one')"}],
            "validations": [{"expression": every}]}),
    );
    let twelve: Vec<Value> = (0..12).map(|_| json!({"expression": every})).collect();
    policy(
        &server,
        "twelve.costly.example.com",
        json!({"matchConstraints": {"resourceRules": [configmaps]},
            "matchConditions": [{"name": "twelve", "expression": "object.metadata.name.startsWith('twelve')"}],
            "validations": twelve}),
    );
    for name in ["one", "twelve"] {
        binding(
            &server,
            &format!("{name}.costly.binding"),
            json!({"policyName": format!("{name}.costly.example.com"),
                "validationActions": ["Deny"],
                "matchResources": {"namespaceSelector": {"matchLabels": {"policy-test": "costly"}}}}),
        );
    }
    let configmap = |name: &str, keys: usize| {
        let data: serde_json::Map<String, Value> = (0..keys)
            .map(|i| (format!("k{i}"), json!("x".repeat(3000))))
            .collect();
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name}, "data": data})
    };
    let create = |name: &str, keys: usize| {
        send(
            &server,
            "POST",
            "/api/v1/namespaces/costly/configmaps",
            &configmap(name, keys),
        )
    };
    // Bindings take effect on a later request: wait for the first refusal.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    let refused = loop {
        n += 1;
        let answer = create(&format!("one-{n}"), 12);
        if answer.code != 201 {
            break answer;
        }
        assert!(Instant::now() < deadline, "the policy never took effect");
        std::thread::sleep(Duration::from_millis(100));
    };
    let body: Value = serde_json::from_str(&refused.body).unwrap();
    assert_eq!(
        body["message"],
        format!(
            "configmaps \"one-{n}\" is forbidden: ValidatingAdmissionPolicy 'one.costly.example.com' with binding 'one.costly.binding' denied request: expression '{every}' resulted in error: operation cancelled: actual cost limit exceeded"
        ),
        "{body}"
    );
    // Ten values: each expression is under the limit, and one policy's
    // twelve together are over the budget.
    assert_eq!(create("one-small", 10).code, 201);
    let over = create("twelve-a", 10);
    let body: Value = serde_json::from_str(&over.body).unwrap();
    assert_eq!(
        body["message"],
        "configmaps \"twelve-a\" is forbidden: ValidatingAdmissionPolicy 'twelve.costly.example.com' with binding 'twelve.costly.binding' denied request: validation failed due to running out of cost budget, no further validation rules will be run",
        "{body}"
    );
    assert_eq!(create("twelve-b", 1).code, 201);
    // Upstream's metrics of the two refusals (by the error's words), and a
    // latency for each.
    let metrics = http_exchange(server.address, "GET", "/metrics", &[], b"").unwrap();
    for line in [
        "apiserver_validating_admission_policy_check_total{policy=\"one.costly.example.com\",policy_binding=\"one.costly.binding\",error_type=\"invalid_error\",enforcement_action=\"deny\"} 1",
        "apiserver_validating_admission_policy_check_total{policy=\"twelve.costly.example.com\",policy_binding=\"twelve.costly.binding\",error_type=\"out_of_budget\",enforcement_action=\"deny\"} 1",
        "apiserver_validating_admission_policy_check_duration_seconds_count{policy=\"twelve.costly.example.com\",policy_binding=\"twelve.costly.binding\",error_type=\"out_of_budget\",enforcement_action=\"deny\"} 1",
    ] {
        assert!(metrics.body.contains(line), "{line} in\n{}", metrics.body);
    }
}

/// `matchPolicy: Equivalent` (the default): a policy whose rules name
/// autoscaling/v1 sees a HorizontalPodAutoscaler written as autoscaling/v2
/// in v1, and so does its `request`; under `Exact` it does not see it.
#[test]
fn policies_see_equivalent_versions_in_their_own() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    namespace(&server, "equivalent");
    for (name, policy_of_match) in [("b-equivalent", "Equivalent"), ("a-exact", "Exact")] {
        policy(
            &server,
            &format!("{name}.hpa.example.com"),
            json!({"matchConstraints": {"matchPolicy": policy_of_match,
                    "resourceRules": [{"apiGroups": ["autoscaling"], "apiVersions": ["v1"],
                        "operations": ["CREATE"], "resources": ["horizontalpodautoscalers"]}]},
                "validations": [{"expression": "false",
                    "messageExpression": "'seen as ' + object.apiVersion + ' ' + request.kind.version + '/' + request.resource.version + ' of ' + request.requestKind.version + ', cpu ' + string(object.spec.targetCPUUtilizationPercentage)"}]}),
        );
        binding(
            &server,
            &format!("{name}.hpa.binding"),
            json!({"policyName": format!("{name}.hpa.example.com"), "validationActions": ["Deny"],
                "matchResources": {"namespaceSelector": {"matchLabels": {"policy-test": "equivalent"}}}}),
        );
    }
    let hpa = |name: &str| {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "minReplicas": 1, "maxReplicas": 3,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 50}}}]}})
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    let refused = loop {
        n += 1;
        let answer = send(
            &server,
            "POST",
            "/apis/autoscaling/v2/namespaces/equivalent/horizontalpodautoscalers",
            &hpa(&format!("h{n}")),
        );
        if answer.code != 201 {
            break answer;
        }
        assert!(Instant::now() < deadline, "the policy never took effect");
        std::thread::sleep(Duration::from_millis(100));
    };
    let body: Value = serde_json::from_str(&refused.body).unwrap();
    assert_eq!(
        body["message"],
        format!(
            "horizontalpodautoscalers.autoscaling \"h{n}\" is forbidden: ValidatingAdmissionPolicy 'b-equivalent.hpa.example.com' with binding 'b-equivalent.hpa.binding' denied request: seen as autoscaling/v1 v1/v1 of v2, cpu 50"
        ),
        "{body}"
    );
    // Written as v1, both policies see it as it is (the first, by name,
    // answers).
    let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "plain"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "maxReplicas": 3, "targetCPUUtilizationPercentage": 40}});
    let answer = send(
        &server,
        "POST",
        "/apis/autoscaling/v1/namespaces/equivalent/horizontalpodautoscalers",
        &v1,
    );
    assert!(
        answer.body.contains("'a-exact.hpa.example.com' with binding 'a-exact.hpa.binding' denied request: seen as autoscaling/v1 v1/v1 of v1, cpu 40"),
        "{}",
        answer.body
    );
}
