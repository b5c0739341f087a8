//! TLS and authentication: the kubeconfig kapi writes works on
//! its own, credentials no authenticator accepts get kube-apiserver's 401, and
//! kube-apiserver's certificate flags replace what kapi makes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use kapi_test_support::{Server, text};
use serde_json::Value;

fn kapi() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_kapi"))
}

/// `curl` of `path` on `s` with `args` (trust, credentials): the status code
/// and the body as JSON (`Null` when it is not).
///
/// An exchange that got no answer at all (code 0: curl's transport failed)
/// is tried once more, with curl's reason printed: under a loaded CI machine
/// one such failure was seen where the server answers at once otherwise.
/// The cases that expect no answer (a certificate curl must not trust) get
/// none on the second try either.
fn curl(s: &Server, path: &str, args: &[&str]) -> (u16, Value) {
    let mut answer = (0, Value::Null);
    for _ in 0..2 {
        let out = Command::new("curl")
            .args(["-sS", "--max-time", "20", "-w", "\n%{http_code}"])
            .args(args)
            .arg(format!("{}{path}", s.url()))
            .output()
            .expect("curl runs");
        let stdout = text(&out.stdout);
        let (body, code) = stdout.rsplit_once('\n').unwrap_or(("", "0"));
        answer = (
            code.trim().parse().unwrap_or(0),
            serde_json::from_str(body).unwrap_or(Value::Null),
        );
        if answer.0 != 0 {
            break;
        }
        eprintln!("curl {path}: no answer: {}", text(&out.stderr).trim());
    }
    answer
}

fn file(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

fn unauthorized() -> Value {
    serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
}

#[test]
fn credentials_no_one_accepts_get_a_401_and_none_at_all_are_anonymous() {
    let s = Server::start(kapi());
    let other = Server::start(kapi());
    let ca = file(s.data_dir(), "ca.crt");
    let namespaces = "/api/v1/namespaces";

    // The admin certificate of the kubeconfig's own directory.
    let admin = [
        "--cacert",
        &ca,
        "--cert",
        &file(s.data_dir(), "admin.crt"),
        "--key",
        &file(s.data_dir(), "admin.key"),
    ];
    assert_eq!(curl(&s, namespaces, &admin).0, 200);

    // Another CA's certificate, and a token no one knows: 401, as upstream.
    let foreign = [
        "--cacert",
        &ca,
        "--cert",
        &file(other.data_dir(), "admin.crt"),
        "--key",
        &file(other.data_dir(), "admin.key"),
    ];
    assert_eq!(curl(&s, namespaces, &foreign), (401, unauthorized()));
    let token = [
        "--cacert",
        &ca,
        "-H",
        "Authorization: Bearer nobody-knows-me",
    ];
    assert_eq!(curl(&s, namespaces, &token), (401, unauthorized()));

    // No credentials: anonymous, who may read /version and the health
    // checks (system:public-info-viewer) and nothing else.
    assert_eq!(curl(&s, "/version", &["--cacert", &ca]).0, 200);
    assert_eq!(curl(&s, "/readyz", &["--cacert", &ca]).0, 200);
    assert_eq!(
        curl(&s, namespaces, &["--cacert", &ca]),
        (
            403,
            serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure", "message": "namespaces is forbidden: User \"system:anonymous\" \
                cannot list resource \"namespaces\" in API group \"\" at the cluster scope",
                "reason": "Forbidden", "details": {"kind": "namespaces"}, "code": 403})
        )
    );

    // The serving certificate is the CA's, for the loopback address: plain
    // trust in the system's CAs fails.
    assert_eq!(curl(&s, namespaces, &[]).0, 0);
}

#[test]
fn anonymous_requests_can_be_refused() {
    let s = Server::start_args(kapi(), &["--anonymous-auth=false"]);
    let ca = file(s.data_dir(), "ca.crt");
    assert_eq!(
        curl(&s, "/api/v1/namespaces", &["--cacert", &ca]),
        (401, unauthorized())
    );
    s.kubectl_ok(&["get", "namespaces"]);
}

#[test]
fn given_certificates_replace_kapis_own() {
    // Another server's CA, serving certificate and admin certificate stand
    // for the files of an operator's own CA.
    let pki = Server::start(kapi());
    let dir = pki.data_dir();
    let s = Server::start_args(
        kapi(),
        &[
            "--tls-cert-file",
            &file(dir, "apiserver.crt"),
            "--tls-private-key-file",
            &file(dir, "apiserver.key"),
            "--client-ca-file",
            &file(dir, "ca.crt"),
            // The kubeconfig's CA: the serving chain ends below it.
            "--root-ca-file",
            &file(dir, "ca.crt"),
        ],
    );
    let theirs = [
        "--cacert",
        &file(dir, "ca.crt"),
        "--cert",
        &file(dir, "admin.crt"),
        "--key",
        &file(dir, "admin.key"),
    ];
    assert_eq!(curl(&s, "/api/v1/namespaces", &theirs).0, 200);
    // kapi's own CA signs no certificate that server accepts.
    assert!(!s.data_dir().join("admin.crt").exists());
    assert!(!s.data_dir().join("apiserver.crt").exists());
    let kubeconfig = std::fs::read_to_string(s.kubeconfig()).unwrap();
    assert!(
        !kubeconfig.contains("client-certificate-data"),
        "{kubeconfig}"
    );
    // It trusts the operator's CA: kubectl gets through with their
    // certificate (the kubeconfig names no user of its own).
    s.kubectl_ok(&[
        "get",
        "namespaces",
        "--client-certificate",
        &file(dir, "admin.crt"),
        "--client-key",
        &file(dir, "admin.key"),
    ]);
    let ours = file(s.data_dir(), "ca.crt");
    assert_eq!(curl(&s, "/version", &["--cacert", &ours]).0, 0);
}

#[test]
fn a_lone_tls_flag_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let out = Command::new(kapi())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert-file",
            "x.crt",
            "--data-dir",
        ])
        .arg(temp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--tls-private-key-file"),
        "{}",
        text(&out.stderr)
    );
}

/// A certificate an operator signs with kapi's CA (openssl, as kubeadm's
/// users do) names its user and groups, with the fingerprint upstream 1.32
/// adds; `kubectl auth whoami` reads them back, as against kube-apiserver.
#[test]
fn a_client_certificate_names_its_user_and_groups() {
    let s = Server::start(kapi());
    let dir = tempfile::tempdir().unwrap();
    let (key, csr, crt) = (
        file(dir.path(), "bob.key"),
        file(dir.path(), "bob.csr"),
        file(dir.path(), "bob.crt"),
    );
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl").args(args).output();
        let Ok(out) = out else {
            return false;
        };
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            text(&out.stderr)
        );
        true
    };
    if !kapi_test_support::require::require(
        openssl(&["version"]),
        "openssl",
        "apt-get install -y openssl",
    ) {
        return;
    }
    let ext = dir.path().join("ext");
    std::fs::write(&ext, "extendedKeyUsage=clientAuth\n").unwrap();
    openssl(&[
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        &key,
        "-out",
        &csr,
        "-subj",
        "/O=team-b/O=team-a/CN=bob",
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &file(s.data_dir(), "ca.crt"),
        "-CAkey",
        &file(s.data_dir(), "ca.key"),
        "-CAcreateserial",
        "-out",
        &crt,
        "-days",
        "1",
        "-extfile",
        &ext.display().to_string(),
    ]);
    // Another kubeconfig's user: kubectl on flags alone.
    let whoami = Command::new(kapi_test_support::kubectl_path())
        .args(["--kubeconfig", "/dev/null", "--server", &s.url()])
        .args(["--certificate-authority", &file(s.data_dir(), "ca.crt")])
        .args(["--client-certificate", &crt, "--client-key", &key])
        .args(["auth", "whoami", "-o", "json"])
        .output()
        .unwrap();
    assert!(whoami.status.success(), "{}", text(&whoami.stderr));
    let whoami = text(&whoami.stdout);
    let review: Value = serde_json::from_str(&whoami).unwrap();
    let info = &review["status"]["userInfo"];
    assert_eq!(info["username"], "bob");
    assert_eq!(
        info["groups"],
        serde_json::json!(["team-b", "team-a", "system:authenticated"])
    );
    let der = Command::new("openssl")
        .args(["x509", "-outform", "der", "-in", &crt])
        .output()
        .unwrap()
        .stdout;
    let fingerprint = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(&der)?;
            child.wait_with_output()
        })
        .unwrap();
    let fingerprint = text(&fingerprint.stdout);
    let fingerprint = fingerprint.split_whitespace().next().unwrap();
    assert_eq!(
        info["extra"]["authentication.kubernetes.io/credential-id"],
        serde_json::json!([format!("X509SHA256={fingerprint}")])
    );
    // The kubeconfig's own user is the admin.
    let admin: Value =
        serde_json::from_str(&s.kubectl_ok(&["auth", "whoami", "-o", "json"])).unwrap();
    assert_eq!(admin["status"]["userInfo"]["username"], "kapi-admin");
}

/// A TokenReview answers as kube-apiserver 1.32 did for a static token, a
/// token no one knows, another audience and no token at all.
#[test]
fn token_reviews_answer_as_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "tok1,alice,alice-uid,\"dev,ops\"\n").unwrap();
    let s = Server::start_args(kapi(), &["--token-auth-file", tokens.to_str().unwrap()]);
    let review = |spec: Value| {
        let body = serde_json::json!({"apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview", "spec": spec});
        let out = s.kubectl_stdin(&["create", "-f", "-", "-o", "json"], &body.to_string());
        if out.status.success() {
            serde_json::from_slice::<Value>(&out.stdout).unwrap()["status"].clone()
        } else {
            Value::String(text(&out.stderr).trim().to_owned())
        }
    };
    assert_eq!(
        review(serde_json::json!({"token": "tok1"})),
        serde_json::json!({"authenticated": true,
            "user": {"username": "alice", "uid": "alice-uid",
                "groups": ["dev", "ops", "system:authenticated"]},
            "audiences": ["https://kubernetes.default.svc.cluster.local"]})
    );
    let refused = serde_json::json!({"user": {}, "error": "invalid bearer token"});
    assert_eq!(review(serde_json::json!({"token": "bogus"})), refused);
    assert_eq!(
        review(serde_json::json!({"token": "tok1", "audiences": ["foo"]})),
        refused
    );
    assert_eq!(
        review(serde_json::json!({})),
        Value::String(
            "Error from server (BadRequest): error when creating \"STDIN\": \
             token is required for TokenReview in authentication"
                .to_owned()
        )
    );
}

/// The service account tokens kapi issues authenticate their service
/// account, bound to what they name, for the audiences they carry; the
/// TokenReview answers are the reference's (kube-apiserver 1.32, with a
/// token file beside, as there).
#[test]
fn service_account_tokens_authenticate_while_what_they_name_exists() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "tok1,alice,alice-uid\n").unwrap();
    let s = Server::start_args(kapi(), &["--token-auth-file", tokens.to_str().unwrap()]);
    s.kubectl_ok(&["create", "serviceaccount", "robot"]);
    s.kubectl_stdin_ok(
        &["create", "-f", "-"],
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\"},\
         \"spec\":{\"serviceAccountName\":\"robot\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
    );
    let token = |extra: &[&str]| {
        let mut args = vec!["create", "token", "robot"];
        args.extend_from_slice(extra);
        s.kubectl_ok(&args).trim().to_owned()
    };
    let review = |token: &str, audiences: Option<&[&str]>| {
        let mut spec = serde_json::json!({"token": token});
        if let Some(audiences) = audiences {
            spec["audiences"] = serde_json::json!(audiences);
        }
        let body = serde_json::json!({"apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview", "spec": spec});
        let out = s.kubectl_stdin_ok(&["create", "-f", "-", "-o", "json"], &body.to_string());
        serde_json::from_str::<Value>(&out).unwrap()["status"].clone()
    };
    let uid = s.kubectl_ok(&["get", "sa", "robot", "-o", "jsonpath={.metadata.uid}"]);
    let pod_uid = s.kubectl_ok(&["get", "pod", "p1", "-o", "jsonpath={.metadata.uid}"]);

    let plain = token(&[]);
    let status = review(&plain, None);
    assert_eq!(status["authenticated"], true, "{status}");
    assert_eq!(
        status["audiences"],
        serde_json::json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let user = &status["user"];
    assert_eq!(user["username"], "system:serviceaccount:default:robot");
    assert_eq!(user["uid"], uid.as_str());
    assert_eq!(
        user["groups"],
        serde_json::json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    let id = user["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap();
    assert!(id.starts_with("JTI="), "{id}");

    // The token as a credential: the same user answers whoami.
    let (code, whoami) = curl(
        &s,
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        &[
            "--cacert",
            &file(s.data_dir(), "ca.crt"),
            "-H",
            &format!("Authorization: Bearer {plain}"),
            "-H",
            "Content-Type: application/json",
            "-d",
            r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#,
        ],
    );
    assert_eq!(code, 201, "{whoami}");
    assert_eq!(whoami["status"]["userInfo"], *user);

    // Bound to the pod: its name and uid ride along, until it is gone.
    let bound = token(&["--bound-object-kind", "Pod", "--bound-object-name", "p1"]);
    let status = review(&bound, None);
    let extra = &status["user"]["extra"];
    assert_eq!(
        extra["authentication.kubernetes.io/pod-name"],
        serde_json::json!(["p1"])
    );
    assert_eq!(
        extra["authentication.kubernetes.io/pod-uid"],
        serde_json::json!([pod_uid])
    );

    // Another audience: good only where it is asked for.
    let foo = token(&["--audience", "foo"]);
    assert_eq!(
        review(&foo, None),
        serde_json::json!({"user": {}, "error": "[invalid bearer token, token audiences [\"foo\"] \
            is invalid for the target audiences [\"https://kubernetes.default.svc.cluster.local\"]]"})
    );
    assert_eq!(
        review(&foo, Some(&["foo", "bar"]))["audiences"],
        serde_json::json!(["foo"])
    );

    // Tokens not reviewed yet (a success is remembered for ten seconds, as
    // kube-apiserver's token cache does).
    let bound_later = token(&["--bound-object-kind", "Pod", "--bound-object-name", "p1"]);
    let plain_later = token(&[]);
    s.kubectl_ok(&["delete", "pod", "p1", "--grace-period=0", "--force"]);
    assert_eq!(
        review(&bound_later, None),
        serde_json::json!({"user": {}, "error": "[invalid bearer token, pods \"p1\" not found]"})
    );
    s.kubectl_ok(&["delete", "serviceaccount", "robot"]);
    assert_eq!(
        review(&plain_later, None),
        serde_json::json!({"user": {},
            "error": "[invalid bearer token, serviceaccounts \"robot\" not found]"})
    );
    // A token with a changed signature, and no token at all.
    let forged = format!("{}x", &plain[..plain.len() - 1]);
    let refused = review(&forged, None);
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .starts_with("[invalid bearer token, ")
    );
    assert_eq!(
        review("abc.def.ghi", None),
        serde_json::json!({"user": {}, "error": "invalid bearer token"})
    );
}

/// With `--enable-bootstrap-token-auth`, a bootstrap token authenticates
/// while its Secret allows it, as upstream's authenticator.
#[test]
fn bootstrap_tokens_authenticate_by_their_secret() {
    let s = Server::start_args(kapi(), &["--enable-bootstrap-token-auth"]);
    let secret = |id: &str, extra: &str| {
        format!(
            "{{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{{\"name\":\"bootstrap-token-{id}\",\
             \"namespace\":\"kube-system\"}},\"type\":\"bootstrap.kubernetes.io/token\",\
             \"stringData\":{{\"token-id\":\"{id}\",\"token-secret\":\"0123456789abcdef\",\
             \"usage-bootstrap-authentication\":\"true\"{extra}}}}}"
        )
    };
    let ca = file(s.data_dir(), "ca.crt");
    let whoami = |token: &str| {
        curl(
            &s,
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &[
                "--cacert",
                &ca,
                "-H",
                &format!("Authorization: Bearer {token}"),
                "-H",
                "Content-Type: application/json",
                "-d",
                r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#,
            ],
        )
    };
    let token = "abcdef.0123456789abcdef";
    assert_eq!(whoami(token).0, 401, "no secret yet");
    s.kubectl_stdin_ok(
        &["apply", "-f", "-"],
        &secret(
            "abcdef",
            ",\"auth-extra-groups\":\"system:bootstrappers:kubeadm:default-node-token\"",
        ),
    );
    let (code, review) = whoami(token);
    assert_eq!(code, 201, "{review}");
    assert_eq!(
        review["status"]["userInfo"],
        serde_json::json!({"username": "system:bootstrap:abcdef",
            "groups": ["system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token",
                "system:authenticated"]})
    );
    assert_eq!(whoami("abcdef.0123456789abcdee").0, 401, "another secret");
    // An expired one. (A success is remembered for ten seconds, as
    // kube-apiserver's token cache does: a token that worked may work that
    // much longer after its Secret changed, so this is another token.)
    s.kubectl_stdin_ok(
        &["apply", "-f", "-"],
        &secret("ghijkl", ",\"expiration\":\"2001-01-01T00:00:00Z\""),
    );
    assert_eq!(whoami("ghijkl.0123456789abcdef").0, 401, "expired");
}

/// Impersonation needs the `impersonate` verb on each user, service
/// account, group, extra value and uid asked for; the 403s are the
/// reference's, word for word.
#[test]
fn impersonation_is_authorized_part_by_part() {
    let s = Server::start(kapi());
    s.kubectl_ok(&["create", "serviceaccount", "imp"]);
    let token = s.kubectl_ok(&["create", "token", "imp"]).trim().to_owned();
    let ca = file(s.data_dir(), "ca.crt");
    let as_imp = |headers: &[&str]| {
        let auth = format!("Authorization: Bearer {token}");
        let mut args = vec!["--cacert", ca.as_str(), "-H", auth.as_str()];
        for header in headers {
            args.extend(["-H", header]);
        }
        let (code, body) = curl(&s, "/api/v1/namespaces/default/pods", &args);
        (
            code,
            body["message"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let who = "User \"system:serviceaccount:default:imp\" cannot impersonate resource";
    assert_eq!(
        as_imp(&["Impersonate-User: bob"]),
        (
            403,
            format!(
                "users \"bob\" is forbidden: {who} \"users\" in API group \"\" at the cluster scope"
            )
        )
    );
    assert_eq!(
        as_imp(&["Impersonate-User: system:serviceaccount:ns1:sa1"]),
        (
            403,
            format!(
                "serviceaccounts \"sa1\" is forbidden: {who} \"serviceaccounts\" in API group \"\" in the namespace \"ns1\""
            )
        )
    );
    s.kubectl_ok(&[
        "create",
        "clusterrole",
        "imp-users",
        "--verb=impersonate",
        "--resource=users",
    ]);
    s.kubectl_ok(&[
        "create",
        "clusterrolebinding",
        "imp-users",
        "--clusterrole=imp-users",
        "--serviceaccount=default:imp",
    ]);
    assert_eq!(
        as_imp(&["Impersonate-User: bob", "Impersonate-Group: g1"]),
        (
            403,
            format!(
                "groups \"g1\" is forbidden: {who} \"groups\" in API group \"\" at the cluster scope"
            )
        )
    );
    assert_eq!(
        as_imp(&["Impersonate-User: bob", "Impersonate-Extra-Scopes: view"]),
        (
            403,
            format!(
                "userextras.authentication.k8s.io \"view\" is forbidden: {who} \"userextras/scopes\" in API group \"authentication.k8s.io\" at the cluster scope"
            )
        )
    );
    assert_eq!(
        as_imp(&["Impersonate-User: bob", "Impersonate-Uid: 123"]),
        (
            403,
            format!(
                "uids.authentication.k8s.io \"123\" is forbidden: {who} \"uids\" in API group \"authentication.k8s.io\" at the cluster scope"
            )
        )
    );
    // Allowed: the request is bob's, whom RBAC grants nothing.
    assert_eq!(
        as_imp(&["Impersonate-User: bob"]),
        (403, "pods is forbidden: User \"bob\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"".to_owned())
    );
}

/// A CertificateSigningRequest names who asked, whatever its spec says, as
/// upstream's strategy records the request's user.
#[test]
fn a_certificate_signing_request_records_its_requester() {
    let s = Server::start(kapi());
    // Any PEM block: the request is not parsed before the spec is filled.
    let request = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlITU1IUUNBUUF3RWpFUU1BNEdBMVVFQXd3SGMyOXRaVzl1WlRCWk1CTUdCeXFHU000OUFnRUdDQ3FHU000OQpBd0VIQTBJQUJNd3ZTSm1jbjFtOERwK0V3STZOUEQ3VUJRcWtUdForcDJWdmI0bXcrWGtabVY3L0lGY1lsK2lkCjBseWY1aFVVN3FYdXhVQmdJY3Vwb1lXUTZzZkhJeHVnQURBS0JnZ3Foa2pPUFFRREFnTklBREJGQWlBUnViT2UKVEt3eUFuOGtPbVBPUDVaMjZPTlRVSVZaQlhLNU9YVGd3WWhWdGdJaEFMdExuMHdTUHMzUng0bzBobFk5OFROMApZc1IxMlVsZ2taY0FhVGpyaGRrKwotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K";
    let csr = serde_json::json!({"apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest", "metadata": {"name": "c1"},
        "spec": {"request": request, "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"], "username": "fake", "groups": ["fake"]}});
    let out = s.kubectl_stdin_ok(&["create", "-f", "-", "-o", "json"], &csr.to_string());
    let created: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(created["spec"]["username"], "kapi-admin");
    assert_eq!(
        created["spec"]["groups"],
        serde_json::json!(["system:masters", "system:authenticated"])
    );
    assert!(
        created["spec"]["extra"]["authentication.kubernetes.io/credential-id"][0]
            .as_str()
            .is_some_and(|id| id.starts_with("X509SHA256=")),
        "{created}"
    );
}
