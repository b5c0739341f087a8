//! The subresources besides `status` and `scale`: pod eviction under
//! disruption budgets, ephemeral containers, namespace finalizers, CSR
//! approval and service account tokens, each as kube-apiserver 1.32 answers
//! (compared by curl with the reference server).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use kapi_server::stored::StorageMediaType;
use kapi_storage::Storage;

use crate::common::{Harness, harness};

const PODS: &str = "/api/v1/namespaces/default/pods";
const BUDGETS: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";

fn pod(name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"serviceAccountName": "default", "containers": [{"name": "c", "image": "busybox"}]}})
}

fn eviction(name: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}})
}

async fn running_ready_pod(h: &Harness, name: &str, app: &str) {
    let (code, v) = h.call("POST", PODS, pod(name, app)).await;
    assert_eq!(code, 201, "{v}");
    let status = json!({"status": {"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]}});
    let (code, v) = merge_patch(h, &format!("{PODS}/{name}/status"), &status).await;
    assert_eq!(code, 200, "{v}");
}

async fn budget(h: &Harness, name: &str, app: &str, status: Value) {
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}}});
    let (code, v) = h.call("POST", BUDGETS, pdb).await;
    assert_eq!(code, 201, "{v}");
    let patch = json!({ "status": status });
    let (code, v) = merge_patch(h, &format!("{BUDGETS}/{name}/status"), &patch).await;
    assert_eq!(code, 200, "{v}");
}

async fn merge_patch(h: &Harness, uri: &str, patch: &Value) -> (u16, Value) {
    let body = patch.to_string().into_bytes();
    let (code, v, _) = h
        .send("PATCH", uri, "application/merge-patch+json", body, None)
        .await;
    (code.as_u16(), v)
}

async fn evict(h: &Harness, name: &str, query: &str) -> (u16, Value) {
    let uri = format!("{PODS}/{name}/eviction{query}");
    let (code, v) = h.call("POST", &uri, eviction(name)).await;
    (code.as_u16(), v)
}

#[tokio::test]
async fn eviction_without_a_budget_deletes_the_pod() {
    let h = harness().await;
    let (code, _) = h.call("POST", PODS, pod("p", "x")).await;
    assert_eq!(code, 201);
    let (code, v) = h
        .call("POST", &format!("{PODS}/p/eviction"), eviction("other"))
        .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "name in URL does not match name in Eviction object"
    );
    let (code, v) = h
        .call("POST", &format!("{PODS}/p/eviction"), pod("p", "x"))
        .await;
    assert_eq!(code, 400, "a Pod is no Eviction: {v}");
    let (code, v) = evict(&h, "nope", "").await;
    assert_eq!(code, 404, "{v}");
    assert_eq!(v["message"], "pods \"nope\" not found");
    let (code, v) = evict(&h, "p", "").await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    );
    let (code, _) = h.call("GET", &format!("{PODS}/p"), Value::Null).await;
    assert_eq!(code, 404, "evicted");
    let (code, _) = h
        .call("GET", &format!("{PODS}/p/eviction"), Value::Null)
        .await;
    assert_eq!(code, 405, "eviction is create-only");
}

#[tokio::test]
async fn eviction_spends_the_budget_or_is_refused() {
    let h = harness().await;
    running_ready_pod(&h, "p", "y").await;
    budget(
        &h,
        "b",
        "y",
        json!({"observedGeneration": 1, "disruptionsAllowed": 0,
            "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 1}),
    )
    .await;
    let (code, v) = evict(&h, "p", "").await;
    assert_eq!(code, 429, "{v}");
    assert_eq!(v["reason"], "TooManyRequests");
    assert_eq!(
        v["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        v["details"]["causes"],
        json!([{"reason": "DisruptionBudget",
            "message": "The disruption budget b needs 1 healthy pods and has 1 currently"}])
    );
    let (code, _) = h.call("GET", &format!("{PODS}/p"), Value::Null).await;
    assert_eq!(code, 200, "a refused eviction deletes nothing");

    let allow = json!({"status": {"disruptionsAllowed": 1, "currentHealthy": 2}});
    let (code, _) = merge_patch(&h, &format!("{BUDGETS}/b/status"), &allow).await;
    assert_eq!(code, 200);
    let (code, v) = evict(&h, "p", "?dryRun=All").await;
    assert_eq!(code, 201, "{v}");
    let (_, b) = h.call("GET", &format!("{BUDGETS}/b"), Value::Null).await;
    assert_eq!(
        b["status"]["disruptionsAllowed"], 1,
        "a dry run spends nothing: {b}"
    );
    let (code, p) = h.call("GET", &format!("{PODS}/p"), Value::Null).await;
    assert_eq!(code, 200);
    assert_eq!(
        p["status"]["conditions"].as_array().unwrap().len(),
        1,
        "{p}"
    );

    let (code, v) = evict(&h, "p", "").await;
    assert_eq!(code, 201, "{v}");
    let (code, _) = h.call("GET", &format!("{PODS}/p"), Value::Null).await;
    assert_eq!(code, 404, "evicted (never scheduled: deleted at once)");
    let (_, b) = h.call("GET", &format!("{BUDGETS}/b"), Value::Null).await;
    let status = &b["status"];
    assert_eq!(status["disruptionsAllowed"], 0, "{b}");
    assert!(status["disruptedPods"]["p"].is_string(), "{b}");
    let condition = &status["conditions"][0];
    assert_eq!(condition["type"], "DisruptionAllowed");
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "InsufficientPods");
    assert_eq!(condition["observedGeneration"], 1);
}

#[tokio::test]
async fn evicted_pods_are_marked_before_they_go() {
    let h = harness().await;
    running_ready_pod(&h, "p", "z").await;
    // Bound to a node, the pod terminates gracefully and stays to be seen.
    // (A dry-run binding binds nothing.)
    let bind = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
        "target": {"kind": "Node", "name": "n1"}});
    let (code, v) = h
        .call(
            "POST",
            &format!("{PODS}/p/binding?dryRun=All"),
            bind.clone(),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let (_, p) = h.call("GET", &format!("{PODS}/p"), Value::Null).await;
    assert!(p["spec"].get("nodeName").is_none(), "{p}");
    let (code, v) = h.call("POST", &format!("{PODS}/p/binding"), bind).await;
    assert_eq!(code, 201, "{v}");
    let (code, v) = evict(&h, "p", "").await;
    assert_eq!(code, 201, "{v}");
    let (code, p) = h.call("GET", &format!("{PODS}/p"), Value::Null).await;
    assert_eq!(code, 200);
    assert!(p["metadata"]["deletionTimestamp"].is_string(), "{p}");
    assert_eq!(p["spec"]["nodeName"], "n1");
    let target = p["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "DisruptionTarget")
        .cloned()
        .unwrap_or_else(|| panic!("no DisruptionTarget: {p}"));
    assert_eq!(target["status"], "True");
    assert_eq!(target["reason"], "EvictionByEvictionAPI");
    assert_eq!(target["message"], "Eviction API: evicting");
    // Terminating pods are evicted again without a budget check.
    let (code, v) = evict(&h, "p", "").await;
    assert_eq!(code, 201, "{v}");
}

#[tokio::test]
async fn eviction_edge_cases_of_budgets() {
    let h = harness().await;
    running_ready_pod(&h, "two", "w").await;
    let healthy = json!({"observedGeneration": 1, "disruptionsAllowed": 1,
        "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2});
    budget(&h, "b1", "w", healthy.clone()).await;
    budget(&h, "b2", "w", healthy.clone()).await;
    let (code, v) = evict(&h, "two", "").await;
    assert_eq!(code, 500, "{v}");
    assert_eq!(
        v["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );

    // A budget the disruption controller has not seen yet.
    running_ready_pod(&h, "fresh", "v").await;
    budget(
        &h,
        "b3",
        "v",
        json!({"observedGeneration": 0, "disruptionsAllowed": 1}),
    )
    .await;
    let (code, v) = evict(&h, "fresh", "").await;
    assert_eq!(code, 429, "{v}");
    assert_eq!(v["details"]["retryAfterSeconds"], 10, "{v}");
    assert_eq!(
        v["details"]["causes"][0]["message"],
        "The disruption budget b3 is still being processed by the server."
    );

    // An unready pod goes without spending a budget that has its healthy pods.
    let (code, _) = h.call("POST", PODS, pod("unready", "u")).await;
    assert_eq!(code, 201);
    let running = json!({"status": {"phase": "Running"}});
    let (code, _) = merge_patch(&h, &format!("{PODS}/unready/status"), &running).await;
    assert_eq!(code, 200);
    budget(
        &h,
        "b4",
        "u",
        json!({"observedGeneration": 1, "disruptionsAllowed": 0,
            "currentHealthy": 1, "desiredHealthy": 1, "expectedPods": 2}),
    )
    .await;
    let (code, v) = evict(&h, "unready", "").await;
    assert_eq!(code, 201, "{v}");
    let (_, b) = h.call("GET", &format!("{BUDGETS}/b4"), Value::Null).await;
    assert_eq!(b["status"]["disruptionsAllowed"], 0, "{b}");
    assert!(b["status"].get("disruptedPods").is_none(), "{b}");
}

#[tokio::test]
async fn ephemeral_containers_change_through_their_subresource_only() {
    let h = harness().await;
    let (code, created) = h.call("POST", PODS, pod("p", "x")).await;
    assert_eq!(code, 201, "{created}");
    let uri = format!("{PODS}/p/ephemeralcontainers");
    let debugger = json!({"name": "debugger", "image": "busybox", "stdin": true});
    let mut body = created.clone();
    body["spec"]["ephemeralContainers"] = json!([debugger]);
    body["spec"]["activeDeadlineSeconds"] = json!(5);
    body["metadata"]["labels"]["added"] = json!("yes");
    let (code, v) = h.call("PUT", &uri, body).await;
    assert_eq!(code, 200, "{v}");
    let added = &v["spec"]["ephemeralContainers"][0];
    assert_eq!(added["name"], "debugger");
    assert_eq!(
        added["terminationMessagePolicy"], "File",
        "defaulted like any container: {v}"
    );
    assert!(
        v["spec"].get("activeDeadlineSeconds").is_none(),
        "nothing else changes: {v}"
    );
    assert!(v["metadata"]["labels"].get("added").is_none(), "{v}");
    let (code, got) = h.call("GET", &uri, Value::Null).await;
    assert_eq!(code, 200);
    assert_eq!(got["kind"], "Pod");
    assert_eq!(
        got["spec"]["ephemeralContainers"],
        v["spec"]["ephemeralContainers"]
    );

    // Existing ephemeral containers may be neither changed nor removed.
    let mut changed = got.clone();
    changed["spec"]["ephemeralContainers"][0]["image"] = json!("alpine");
    let (code, v) = h.call("PUT", &uri, changed).await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["details"]["causes"][0]["field"],
        "spec.ephemeralContainers[debugger]"
    );
    let mut removed = got.clone();
    removed["spec"]["ephemeralContainers"] = json!([]);
    let (code, v) = h.call("PUT", &uri, removed).await;
    assert_eq!(code, 422, "{v}");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("existing ephemeral containers \"debugger\" may not be removed"),
        "{v}"
    );

    // A merge patch adds a second one; the main endpoint cannot.
    let patch = json!({"spec": {"ephemeralContainers": [debugger,
        {"name": "second", "image": "busybox"}]}});
    let (code, v) = merge_patch(&h, &uri, &patch).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["ephemeralContainers"][1]["name"], "second");
    let mut main = v.clone();
    main["spec"]["ephemeralContainers"] = json!([]);
    let (code, v) = h.call("PUT", &format!("{PODS}/p"), main).await;
    assert_eq!(code, 422, "the pod's own update rules apply: {v}");
}

#[tokio::test]
async fn namespace_finalizers_change_through_finalize_only() {
    let h = harness().await;
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fin"},
        "spec": {"finalizers": ["example.com/cleanup"]}});
    let (code, v) = h.call("POST", "/api/v1/namespaces", ns).await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(
        v["spec"]["finalizers"],
        json!(["example.com/cleanup", "kubernetes"])
    );
    let mut update = v.clone();
    update["spec"]["finalizers"] = json!([]);
    update["metadata"]["labels"]["team"] = json!("a");
    let (code, v) = h.call("PUT", "/api/v1/namespaces/fin", update).await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(
        v["spec"]["finalizers"],
        json!(["example.com/cleanup", "kubernetes"]),
        "the main endpoint keeps them"
    );
    assert_eq!(v["metadata"]["labels"]["team"], "a");
    let mut finalize = v.clone();
    finalize["spec"]["finalizers"] = json!(["kubernetes"]);
    finalize["status"]["phase"] = json!("Terminating");
    let (code, v) = h
        .call("PUT", "/api/v1/namespaces/fin/finalize", finalize)
        .await;
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(v["status"]["phase"], "Active", "finalize keeps the status");
    let mut bad = v.clone();
    bad["spec"]["finalizers"] = json!(["not a name"]);
    let (code, v) = h.call("PUT", "/api/v1/namespaces/fin/finalize", bad).await;
    assert_eq!(code, 422, "{v}");
    let (code, _) = h
        .call("GET", "/api/v1/namespaces/fin/finalize", Value::Null)
        .await;
    assert_eq!(code, 405, "finalize is update-only");
}

#[tokio::test]
async fn csr_conditions_change_through_approval_only() {
    let h = harness().await;
    let csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    // A real PKCS#10 request (the kind's fixture from the reference server).
    let fixture: Value = serde_json::from_str(include_str!(
        "../../../api-types/tests/fixtures/certificates/certificatesigningrequest.json"
    ))
    .unwrap();
    let csr = json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": "c"},
        "spec": {"request": fixture["spec"]["request"],
            "signerName": "example.com/signer", "usages": ["client auth"]}});
    let (code, v) = h.call("POST", csrs, csr).await;
    assert_eq!(code, 201, "{v}");
    let approved = json!([{"type": "Approved", "status": "True", "reason": "Test",
        "message": "approved by the test"}]);

    let mut through_status = v.clone();
    through_status["status"]["conditions"] = approved.clone();
    through_status["status"]["certificate"] = json!("");
    let (code, refused) = h
        .call("PUT", &format!("{csrs}/c/status"), through_status)
        .await;
    // As kube-apiserver 1.32: approval goes through /approval only.
    assert_eq!(code, 422, "{refused}");
    assert_eq!(
        refused["details"]["causes"][0]["message"],
        "Forbidden: updates may not add a condition of type \"Approved\"",
        "{refused}"
    );
    let (code, s) = h.call("GET", &format!("{csrs}/c"), Value::Null).await;
    assert_eq!(code, 200, "{s}");
    assert!(
        s["status"].get("conditions").is_none(),
        "nothing written: {s}"
    );

    let mut approval = s.clone();
    approval["status"]["conditions"] = approved;
    approval["spec"]["signerName"] = json!("example.com/other");
    let (code, a) = h.call("PUT", &format!("{csrs}/c/approval"), approval).await;
    assert_eq!(code, 200, "{a}");
    assert_eq!(a["status"]["conditions"][0]["type"], "Approved");
    assert_eq!(
        a["spec"]["signerName"], "example.com/signer",
        "approval keeps the spec"
    );

    let mut main = a.clone();
    main["spec"]["signerName"] = json!("example.com/other");
    main["status"] = json!({});
    let (code, m) = h.call("PUT", &format!("{csrs}/c"), main).await;
    assert_eq!(code, 200, "{m}");
    assert_eq!(m["spec"]["signerName"], "example.com/signer", "{m}");
    assert_eq!(m["status"]["conditions"][0]["type"], "Approved", "{m}");
}

/// The key id of a P-256 public key, as the token header names it.
fn key_id(public_key: &[u8]) -> String {
    use sha2::Digest;
    let mut spki = hex_prefix();
    spki.extend_from_slice(public_key);
    URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(&spki))
}

fn hex_prefix() -> Vec<u8> {
    let hex = "3059301306072a8648ce3d020106082a8648ce3d030107034200";
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn decode_part(part: &str) -> Value {
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

#[tokio::test]
async fn service_account_tokens_are_signed_jwts() {
    let h = harness().await;
    let accounts = "/api/v1/namespaces/default/serviceaccounts";
    // The harness made the namespace's `default` account.
    let (code, sa) = h
        .call("GET", &format!("{accounts}/default"), Value::Null)
        .await;
    assert_eq!(code, 200, "{sa}");
    let uri = format!("{accounts}/default/token");
    let (code, v) = h
        .call(
            "POST",
            &uri,
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    assert_eq!(v["kind"], "TokenRequest");
    assert_eq!(v["metadata"]["name"], "default");
    assert_eq!(v["metadata"]["namespace"], "default");
    assert_eq!(
        v["spec"],
        json!({"audiences": ["https://kubernetes.default.svc.cluster.local"],
            "expirationSeconds": 3600, "boundObjectRef": null})
    );
    let token = v["status"]["token"].as_str().unwrap();
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "{token}");
    let header = decode_part(parts[0]);
    let claims = decode_part(parts[1]);
    assert_eq!(header["alg"], "ES256");
    assert_eq!(
        claims["iss"],
        "https://kubernetes.default.svc.cluster.local"
    );
    assert_eq!(claims["sub"], "system:serviceaccount:default:default");
    assert_eq!(
        claims["kubernetes.io"],
        json!({"namespace": "default",
            "serviceaccount": {"name": "default", "uid": sa["metadata"]["uid"]}})
    );
    let iat = claims["iat"].as_i64().unwrap();
    assert_eq!(claims["nbf"].as_i64(), Some(iat));
    assert_eq!(claims["exp"].as_i64(), Some(iat + 3600));
    let keys: Vec<&str> = claims
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "aud",
            "exp",
            "iat",
            "iss",
            "jti",
            "kubernetes.io",
            "nbf",
            "sub"
        ]
    );

    // The signature verifies with the key kept in the store, whose id the
    // header names.
    let kv = h
        .store
        .get("/registry/kapi.dev/serviceaccount-signing-key")
        .await
        .unwrap()
        .expect("the signing key is stored");
    let rng = ring::rand::SystemRandom::new();
    let pair = ring::signature::EcdsaKeyPair::from_pkcs8(
        &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
        &kv.value,
        &rng,
    )
    .unwrap();
    use ring::signature::KeyPair;
    let public = pair.public_key().as_ref().to_vec();
    assert_eq!(header["kid"], key_id(&public));
    let verifier =
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, &public);
    let signed = format!("{}.{}", parts[0], parts[1]);
    let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
    verifier
        .verify(signed.as_bytes(), &signature)
        .expect("the token verifies");
    let mut forged = signed.clone().into_bytes();
    forged[signed.len() - 2] ^= 1;
    assert!(verifier.verify(&forged, &signature).is_err());

    // Bound to a pod on a node, with the kubelet's lifetime: a year, with a
    // refresh hint.
    let mut p = pod("bound", "x");
    p["spec"]["nodeName"] = json!("n1");
    let (code, created) = h.call("POST", PODS, p).await;
    assert_eq!(code, 201, "{created}");
    let (code, v) = h
        .call(
            "POST",
            &uri,
            json!({"spec": {"expirationSeconds": 3607,
                "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "bound"}}}),
        )
        .await;
    assert_eq!(code, 201, "{v}");
    let claims = decode_part(
        v["status"]["token"]
            .as_str()
            .unwrap()
            .split('.')
            .nth(1)
            .unwrap(),
    );
    let k = &claims["kubernetes.io"];
    assert_eq!(
        k["pod"],
        json!({"name": "bound", "uid": created["metadata"]["uid"]})
    );
    assert_eq!(k["node"], json!({"name": "n1"}), "no such node: name only");
    let iat = claims["iat"].as_i64().unwrap();
    assert_eq!(claims["exp"].as_i64(), Some(iat + 365 * 24 * 3600));
    assert_eq!(k["warnafter"].as_i64(), Some(iat + 3607));

    // Refusals, as upstream words them.
    let (code, v) = h
        .call("POST", &uri, json!({"spec": {"expirationSeconds": 10}}))
        .await;
    assert_eq!(code, 422, "{v}");
    assert_eq!(
        v["message"],
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 10: may not specify a duration less than 10 minutes"
    );
    let (code, v) = h
        .call("POST", &uri, json!({"metadata": {"name": "x"}, "spec": {}}))
        .await;
    assert_eq!(code, 422, "{v}");
    let (code, v) = h
        .call(
            "POST",
            &uri,
            json!({"spec": {"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "c"}}}),
        )
        .await;
    assert_eq!(code, 400, "{v}");
    assert_eq!(
        v["message"],
        "cannot bind token to object of type /v1, Kind=ConfigMap"
    );
    let (code, v) = h
        .call(
            "POST",
            &uri,
            json!({"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "bound", "uid": "zzz"}}}),
        )
        .await;
    assert_eq!(code, 409, "{v}");
    let (code, v) = h
        .call("POST", &format!("{accounts}/nope/token"), json!({}))
        .await;
    assert_eq!(code, 404, "{v}");

    // Another server on the same store signs with the same key.
    let kid = header["kid"].clone();
    let h = h.restart_stored_as(StorageMediaType::default()).await;
    let (code, v) = h.call("POST", &uri, json!({})).await;
    assert_eq!(code, 201, "{v}");
    let header = decode_part(
        v["status"]["token"]
            .as_str()
            .unwrap()
            .split('.')
            .next()
            .unwrap(),
    );
    assert_eq!(header["kid"], kid);
}

/// The issuer's OpenID discovery document and key set: a token verifies with
/// the key `/openid/v1/jwks` publishes, as a relying party checks it.
#[tokio::test]
async fn tokens_verify_with_the_published_key_set() {
    let h = harness().await;
    let accounts = "/api/v1/namespaces/default/serviceaccounts";
    let (code, v) = h
        .call("POST", &format!("{accounts}/default/token"), json!({}))
        .await;
    assert_eq!(code, 201, "{v}");
    let token = v["status"]["token"].as_str().unwrap().to_owned();
    let (code, discovery) = h
        .call("GET", "/.well-known/openid-configuration", Value::Null)
        .await;
    assert_eq!(code, 200);
    assert_eq!(
        discovery["issuer"],
        "https://kubernetes.default.svc.cluster.local"
    );
    assert_eq!(
        discovery["id_token_signing_alg_values_supported"],
        json!(["ES256"])
    );
    assert!(
        discovery["jwks_uri"]
            .as_str()
            .unwrap()
            .ends_with("/openid/v1/jwks")
    );
    let (code, jwks) = h.call("GET", "/openid/v1/jwks", Value::Null).await;
    assert_eq!(code, 200);
    let key = &jwks["keys"][0];
    assert_eq!(
        (key["kty"].as_str(), key["crv"].as_str()),
        (Some("EC"), Some("P-256"))
    );
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(decode_part(parts[0])["kid"], key["kid"]);
    let mut point = vec![4u8];
    point.extend(URL_SAFE_NO_PAD.decode(key["x"].as_str().unwrap()).unwrap());
    point.extend(URL_SAFE_NO_PAD.decode(key["y"].as_str().unwrap()).unwrap());
    let verifier =
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, &point);
    let signed = format!("{}.{}", parts[0], parts[1]);
    verifier
        .verify(
            signed.as_bytes(),
            &URL_SAFE_NO_PAD.decode(parts[2]).unwrap(),
        )
        .expect("the token verifies with the published key");
}
