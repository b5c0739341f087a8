//! Service account keys and issuers against kube-apiserver 1.32: both were
//! started with two issuers and a second verifying key (an EC key, as
//! kube-controller-manager's legacy token signer could be); kapi signs with
//! an RSA key file. Tokens the test signs (bound ones of the second issuer,
//! legacy Secret-based ones, ones of strangers) are reviewed by kapi, and
//! the answers, warnings, Secret labels and published keys compared with
//! kube-apiserver's, recorded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use kapi_server::authn::service_account::key::{Signer, signer_from_pem};
use kapi_test_support::{Server, text};
use serde_json::{Value, json};

use crate::rbac::kubectl;

const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
const SECOND_ISSUER: &str = "https://two.example";

/// One server as the test sees it: kubectl as its admin, its URL.
struct Side {
    kubeconfig: PathBuf,
    url: String,
    /// Its audit log (self-subject reviews at Metadata level).
    audit: PathBuf,
}

impl Side {
    fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, out, err) = kubectl(&self.kubeconfig, args, stdin);
        assert!(ok, "kubectl {args:?}: {err}");
        out
    }

    fn create(&self, object: &Value) {
        self.kubectl(&["create", "-f", "-"], Some(&object.to_string()));
    }

    /// A TokenReview's status, uids and token ids masked.
    fn review(&self, token: &str, audiences: Option<&[&str]>) -> Value {
        let mut spec = json!({"token": token});
        if let Some(audiences) = audiences {
            spec["audiences"] = json!(audiences);
        }
        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": spec});
        let out = self.kubectl(
            &["create", "-f", "-", "-o", "json"],
            Some(&body.to_string()),
        );
        let mut status = serde_json::from_str::<Value>(&out).unwrap()["status"].take();
        mask(&mut status["user"]["uid"]);
        let id = status
            .pointer_mut("/user/extra/authentication.kubernetes.io~1credential-id/0")
            .filter(|id| id.as_str().is_some_and(|i| i.starts_with("JTI=")));
        if let Some(id) = id {
            *id = json!("JTI=<masked>");
        }
        status
    }

    /// `whoami` with `token` as the credential: the code, the user and the
    /// warnings.
    fn whoami(&self, token: &str) -> (u16, Value, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let headers = dir.path().join("headers");
        let out = Command::new("curl")
            .args([
                "-sS",
                "-k",
                "--max-time",
                "20",
                "-w",
                "\n%{http_code}",
                "-D",
            ])
            .arg(&headers)
            .args(["-H", &format!("Authorization: Bearer {token}")])
            .args(["-H", "Content-Type: application/json", "-d"])
            .arg(r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#)
            .arg(format!(
                "{}/apis/authentication.k8s.io/v1/selfsubjectreviews",
                self.url
            ))
            .output()
            .unwrap();
        let stdout = text(&out.stdout);
        let (body, code) = stdout.rsplit_once('\n').unwrap();
        let mut body: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        mask(&mut body["status"]["userInfo"]["uid"]);
        let warnings = std::fs::read_to_string(&headers)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("warning")
                    .then(|| value.trim().to_owned())
            })
            .collect();
        (
            code.trim().parse().unwrap(),
            body["status"]["userInfo"].take(),
            warnings,
        )
    }

    /// The annotations of the last self-subject review's ResponseComplete
    /// event.
    fn last_review_annotations(&self) -> Value {
        let log = std::fs::read_to_string(&self.audit).unwrap_or_default();
        log.lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|event| event["stage"] == "ResponseComplete")
            .last()
            .map(|event| event["annotations"].clone())
            .unwrap_or(Value::Null)
    }

    fn uid(&self, what: &str) -> String {
        self.kubectl(&["get", what, "-o", "jsonpath={.metadata.uid}"], None)
    }
}

fn mask(value: &mut Value) {
    if value.is_string() {
        *value = json!("<uid>");
    }
}

/// A compact JWS of `claims` by `signer`.
fn sign(signer: &Signer, claims: &Value) -> String {
    signer.sign(claims).unwrap()
}

/// What the two servers answer, case by case.
fn answers(side: &Side, keys: &Keys) -> Vec<(String, Value)> {
    let mut seen = Vec::new();
    let mut note = |case: &str, answer: Value| seen.push((case.to_owned(), answer));
    side.kubectl(&["create", "serviceaccount", "robot"], None);
    let uid = side.uid("serviceaccount/robot");
    let now = jiff::Timestamp::now().as_second();

    // A token the server issues: its header and issuer, and its review.
    let issued = side.kubectl(&["create", "token", "robot"], None);
    let issued = issued.trim();
    let parts: Vec<&str> = issued.split('.').collect();
    let part =
        |p: &str| serde_json::from_slice::<Value>(&URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap();
    note("issued alg", part(parts[0])["alg"].clone());
    note("issued iss", part(parts[1])["iss"].clone());
    note("issued aud", part(parts[1])["aud"].clone());
    note("issued review", side.review(issued, None));
    // Its signature changed: the key is found by its id, and refuses it.
    let (signed, signature) = issued.rsplit_once('.').unwrap();
    let flipped = if signature.starts_with('A') { 'B' } else { 'A' };
    let forged = format!("{signed}.{flipped}{}", &signature[1..]);
    note("issued with another signature", side.review(&forged, None));

    // Bound tokens the test signs.
    let bound = |issuer: &str, audiences: Value| {
        json!({"iss": issuer, "aud": audiences, "sub": "system:serviceaccount:default:robot",
            "iat": now, "nbf": now, "exp": now + 3600, "jti": "j-1",
            "kubernetes.io": {"namespace": "default",
                "serviceaccount": {"name": "robot", "uid": uid}}})
    };
    let second = sign(&keys.legacy, &bound(SECOND_ISSUER, json!([SECOND_ISSUER])));
    note("second issuer", side.review(&second, None));
    note(
        "second issuer for its own audience",
        side.review(&second, Some(&[SECOND_ISSUER, "foo"])),
    );
    let third = sign(
        &keys.legacy,
        &bound("https://three.example", json!([DEFAULT_ISSUER])),
    );
    note("unknown issuer", side.review(&third, None));
    let stranger = sign(
        &keys.stranger,
        &bound(DEFAULT_ISSUER, json!([DEFAULT_ISSUER])),
    );
    note("unknown key", side.review(&stranger, None));
    let no_audience = sign(&keys.legacy, &bound(DEFAULT_ISSUER, json!([])));
    note("no audience", side.review(&no_audience, None));

    // Legacy tokens, each in a Secret of its own (a success is cached for
    // ten seconds, so no token is reviewed twice across a change).
    let legacy = |secret: &str, account_uid: &str| {
        json!({"iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "default",
            "kubernetes.io/serviceaccount/secret.name": secret,
            "kubernetes.io/serviceaccount/service-account.name": "robot",
            "kubernetes.io/serviceaccount/service-account.uid": account_uid,
            "sub": "system:serviceaccount:default:robot"})
    };
    let secret = |name: &str, token: &str, labels: Value| {
        side.create(&json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "labels": labels,
                "annotations": {"kubernetes.io/service-account.name": "robot",
                    "kubernetes.io/service-account.uid": uid}},
            "type": "kubernetes.io/service-account-token",
            "data": {"token": STANDARD.encode(token)}}));
    };
    let good = sign(&keys.legacy, &legacy("t-good", &uid));
    secret("t-good", &good, json!({}));
    note("legacy review", side.review(&good, None));
    let labels = side.kubectl(
        &[
            "get",
            "secret",
            "t-good",
            "-o",
            "jsonpath={.metadata.labels}",
        ],
        None,
    );
    let today = jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
    note("legacy last used", json!(labels.replace(&today, "<today>")));
    let listed = sign(&keys.legacy, &legacy("t-listed", &uid));
    secret("t-listed", &listed, json!({}));
    side.kubectl(
        &[
            "patch",
            "serviceaccount",
            "robot",
            "-p",
            r#"{"secrets":[{"name":"t-listed"}]}"#,
        ],
        None,
    );
    let (code, user, warnings) = side.whoami(&listed);
    note("legacy listed whoami", json!([code, user, warnings]));
    note("legacy listed audit", side.last_review_annotations());
    let (code, user, warnings) = side.whoami(&good);
    note("legacy whoami", json!([code, user, warnings]));
    note("legacy audit", side.last_review_annotations());

    let copy = sign(&keys.legacy, &legacy("t-copy", &uid));
    secret("t-copy", "another token", json!({}));
    note("legacy not the secret's", side.review(&copy, None));
    let gone = sign(&keys.legacy, &legacy("t-gone", &uid));
    note("legacy without its secret", side.review(&gone, None));
    let wrong_uid = sign(&keys.legacy, &legacy("t-uid", "not-the-uid"));
    secret("t-uid", &wrong_uid, json!({}));
    let refused = side.review(&wrong_uid, None).to_string();
    note(
        "legacy of another uid",
        json!(refused.replace(&uid, "<uid>")),
    );
    let invalid = sign(&keys.legacy, &legacy("t-invalid", &uid));
    secret(
        "t-invalid",
        &invalid,
        json!({"kubernetes.io/legacy-token-invalid-since": "2020-01-01"}),
    );
    note("legacy marked invalid", side.review(&invalid, None));
    let labels = side.kubectl(
        &[
            "get",
            "secret",
            "t-invalid",
            "-o",
            "jsonpath={.metadata.labels}",
        ],
        None,
    );
    note(
        "legacy marked invalid labels",
        json!(labels.replace(&today, "<today>")),
    );
    let other_audience = sign(&keys.legacy, &legacy("t-aud", &uid));
    secret("t-aud", &other_audience, json!({}));
    note(
        "legacy for another audience",
        side.review(&other_audience, Some(&["foo"])),
    );
    let mut no_secret_claim = legacy("t-claims", &uid);
    no_secret_claim["kubernetes.io/serviceaccount/secret.name"] = json!("");
    let no_secret_claim = sign(&keys.legacy, &no_secret_claim);
    note(
        "legacy without a secret claim",
        side.review(&no_secret_claim, None),
    );
    let mut bad_subject = legacy("t-sub", &uid);
    bad_subject["sub"] = json!("system:serviceaccount:default:someone");
    let bad_subject = sign(&keys.legacy, &bad_subject);
    note(
        "legacy with another subject",
        side.review(&bad_subject, None),
    );
    seen
}

/// The keys, fixed test keys of `tests/fixtures/reference/service-account-keys/`
/// (so that a reference server can be started with them when its answers are
/// recorded): kapi's signing key (RSA), the second verifying key (EC, the
/// legacy signer) and a stranger's.
struct Keys {
    dir: PathBuf,
    /// Where the audit policy and kapi's audit log go.
    run: tempfile::TempDir,
    legacy: Signer,
    stranger: Signer,
}

impl Keys {
    fn load() -> Keys {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/reference/service-account-keys");
        let read = |name: &str| signer_from_pem(&std::fs::read(dir.join(name)).unwrap()).unwrap();
        Keys {
            legacy: read("legacy.key"),
            stranger: read("stranger.key"),
            dir,
            run: tempfile::tempdir().unwrap(),
        }
    }

    /// An audit policy: self-subject reviews at Metadata level, nothing else
    /// (the same as `service-account-keys/audit-policy.yaml`).
    fn audit_policy(&self) -> String {
        self.path("audit-policy.yaml")
    }

    /// A fixed key's (or the policy's) path.
    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// The published key set: the legacy key alike on both; the signing keys
/// RSA keys of the same shape.
fn published(side: &Side) -> (Value, Value) {
    let get = |path: &str| {
        let out = side.kubectl(&["get", "--raw", path], None);
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let mut discovery = get("/.well-known/openid-configuration");
    discovery["jwks_uri"] = json!("<masked>");
    let mut keys: Vec<Value> = get("/openid/v1/jwks")["keys"].as_array().unwrap().clone();
    for key in &mut keys {
        if key["kty"] == "RSA" {
            for member in ["n", "kid"] {
                key[member] = json!("<masked>");
            }
        }
    }
    keys.sort_by_key(|k| k["kty"].to_string());
    (discovery, json!(keys))
}

/// What one server answers: the cases, then the published discovery
/// document and key set.
fn record(side: &Side, keys: &Keys) -> Value {
    let cases: Vec<Value> = answers(side, keys)
        .into_iter()
        .map(|(case, answer)| json!({"case": case, "answer": answer}))
        .collect();
    let (discovery, jwks) = published(side);
    json!({"cases": cases, "discovery": discovery, "keys": jwks})
}

/// kube-apiserver 1.32 was started with the issuers default +
/// [`SECOND_ISSUER`], `--service-account-key-file legacy.pub` and the audit
/// policy of the fixture directory; kapi gets the same issuers and keys (and
/// signs with `signing.key`). Their answers, recorded in
/// `tests/fixtures/reference/service-account-keys.json`, are compared.
#[test]
fn issuers_and_keys_verify_tokens_as_kube_apiserver() {
    let keys = Keys::load();
    let expected = crate::recorded::answers("service-account-keys", |kubeconfig| {
        let url = crate::recorded::server_url(kubeconfig);
        let theirs = Side {
            kubeconfig: kubeconfig.to_owned(),
            url,
            audit: crate::recorded::reference_audit_log(),
        };
        record(&theirs, &keys)
    });
    if crate::recorded::recording() {
        return;
    }
    let policy = keys.audit_policy();
    let signing = keys.path("signing.key");
    let legacy = keys.path("legacy.pub");
    let audit = keys.run.path().join("kapi-audit.log");
    let s = Server::start_args(
        Path::new(env!("CARGO_BIN_EXE_kapi")),
        &[
            // kube-apiserver ran without kube-controller-manager.
            "--controllers=-*",
            "--service-account-issuer",
            DEFAULT_ISSUER,
            "--service-account-issuer",
            SECOND_ISSUER,
            "--service-account-signing-key-file",
            &signing,
            "--service-account-key-file",
            &legacy,
            "--audit-policy-file",
            &policy,
            "--audit-log-path",
            &audit.display().to_string(),
        ],
    );
    let ours = Side {
        kubeconfig: s.data_dir().join("kubeconfig"),
        url: s.url(),
        audit,
    };
    let got = record(&ours, &keys);
    let mut differences = Vec::new();
    let (want, have) = (
        expected["cases"].as_array().expect("recorded cases"),
        got["cases"].as_array().expect("cases"),
    );
    assert_eq!(want.len(), have.len());
    for (want, have) in want.iter().zip(have) {
        if want != have {
            differences.push(format!(
                "{}:\n  kube-apiserver: {}\n  kapi:           {}",
                want["case"], want["answer"], have["answer"]
            ));
        }
    }
    for part in ["discovery", "keys"] {
        if expected[part] != got[part] {
            differences.push(format!(
                "published {part}:\n  kube-apiserver: {}\n  kapi:           {}",
                expected[part], got[part]
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
