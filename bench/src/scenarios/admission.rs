//! `create-webhooks` and `create-policy`: the `create` scenario with
//! admission from outside the server on every create, to set beside a plain
//! `create` of the same run.
//!
//! - `create-webhooks`: a MutatingWebhookConfiguration (a JSONPatch adding
//!   an annotation) and a ValidatingWebhookConfiguration (allowing), both
//!   served over TLS by a webhook inside kapi-bench (so its CPU is not the
//!   server's).
//! - `create-policy`: a ValidatingAdmissionPolicy with one CEL validation,
//!   bound with `Deny`.
//!
//! Each runs in a namespace of its own (the run's may hold `create`'s
//! ConfigMaps already) and removes what it made afterwards.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::{Context, Report, create};
use crate::http::Client;
use crate::namespace;
use crate::objects::body;

/// Which admission the scenario adds.
#[derive(Clone, Copy)]
pub enum Kind {
    Webhooks,
    Policy,
}

const REGISTRATION: &str = "/apis/admissionregistration.k8s.io/v1";

/// Runs `create` with the admission of `kind` in place.
pub async fn run(cx: &Context, kind: Kind) -> Result<Report> {
    let suffix = match kind {
        Kind::Webhooks => "webhooks",
        Kind::Policy => "policy",
    };
    let ns = format!("{}-{suffix}", cx.namespace);
    let mut client = Client::new(cx.target.clone());
    namespace::create(&mut client, &ns).await?;
    let mut made: Vec<String> = Vec::new();
    let webhook = match kind {
        Kind::Webhooks => {
            let webhook = Webhook::start().await?;
            made.extend(webhook.configure(&mut client, &ns).await?);
            Some(webhook)
        }
        Kind::Policy => {
            made.extend(policy(&mut client, &ns).await?);
            None
        }
    };
    wait_until_active(&mut client, &ns, kind).await?;
    let sub = Context {
        target: cx.target.clone(),
        namespace: ns.clone(),
        clients: cx.clients,
        duration: cx.duration,
        working_set: cx.working_set,
        pods: cx.pods,
        watch_rate: cx.watch_rate,
        streams_per_connection: cx.streams_per_connection,
        server: cx.server.clone(),
        working_set_ready: AtomicBool::new(false),
        extension: None,
    };
    let report = create::run(&sub).await;
    for path in made {
        let _ = client.call(Method::DELETE, &path, None).await;
    }
    let _ = namespace::delete(&mut client, &ns).await;
    drop(webhook);
    report
}

/// Creates probe ConfigMaps until the admission shows it is in place: the
/// webhook's annotation, or the policy's refusal of a marked ConfigMap.
async fn wait_until_active(client: &mut Client, ns: &str, kind: Kind) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    for n in 0.. {
        let mut probe = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("probe-{n}")}, "data": {"a": "b"}});
        if let Kind::Policy = kind {
            probe["metadata"]["labels"] = json!({"bench-deny": "yes"});
        }
        let (status, answer) = client.call(Method::POST, &path, Some(body(&probe))).await?;
        let active = match kind {
            Kind::Webhooks => {
                status.is_success()
                    && serde_json::from_slice::<Value>(&answer)
                        .is_ok_and(|o| o["metadata"]["annotations"]["kapi-bench/mutated"] == "yes")
            }
            Kind::Policy => status == StatusCode::UNPROCESSABLE_ENTITY,
        };
        if active {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the admission configuration took no effect in 30 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// A ValidatingAdmissionPolicy refusing ConfigMaps labelled
/// `bench-deny: "yes"`, bound to the namespace with Deny; the paths made.
async fn policy(client: &mut Client, ns: &str) -> Result<Vec<String>> {
    let name = format!("{ns}.kapi-bench");
    let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
        "spec": {"failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}},
            "validations": [{
                "expression": "!has(object.metadata.labels) || !('bench-deny' in object.metadata.labels)",
                "message": "marked to be refused"}]}});
    let binding = json!({"apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
        "spec": {"policyName": name, "validationActions": ["Deny"]}});
    client
        .call_ok(
            Method::POST,
            &format!("{REGISTRATION}/validatingadmissionpolicies"),
            Some(body(&policy)),
        )
        .await?;
    client
        .call_ok(
            Method::POST,
            &format!("{REGISTRATION}/validatingadmissionpolicybindings"),
            Some(body(&binding)),
        )
        .await?;
    Ok(vec![
        format!("{REGISTRATION}/validatingadmissionpolicybindings/{name}"),
        format!("{REGISTRATION}/validatingadmissionpolicies/{name}"),
    ])
}

/// The benchmark's own webhook: TLS on a loopback port, a certificate of
/// its own CA.
struct Webhook {
    port: u16,
    ca_pem: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Webhook {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Webhook {
    async fn start() -> Result<Webhook> {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
        let ca_key = KeyPair::generate().context("a CA key")?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);
        let key = KeyPair::generate().context("a webhook key")?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.subject_alt_names = vec![SanType::IpAddress("127.0.0.1".parse()?)];
        let cert = params.signed_by(&key, &issuer)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )?;
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let _ = tcp.set_nodelay(true);
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(answer);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        Ok(Webhook {
            port,
            ca_pem: ca.pem(),
            task,
        })
    }

    /// Registers a mutating and a validating webhook for the ConfigMaps of
    /// `ns`; the paths made.
    async fn configure(&self, client: &mut Client, ns: &str) -> Result<Vec<String>> {
        let name = format!("{ns}.kapi-bench");
        let hook = |path: &str| {
            json!({"name": format!("{}.{name}", path.trim_start_matches('/')),
                "clientConfig": {"url": format!("https://127.0.0.1:{}{path}", self.port),
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)},
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                    "resources": ["configmaps"]}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Fail"})
        };
        let mut made = Vec::new();
        for (plural, kind, path) in [
            (
                "mutatingwebhookconfigurations",
                "MutatingWebhookConfiguration",
                "/mutate",
            ),
            (
                "validatingwebhookconfigurations",
                "ValidatingWebhookConfiguration",
                "/validate",
            ),
        ] {
            let config = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                "metadata": {"name": name}, "webhooks": [hook(path)]});
            client
                .call_ok(
                    Method::POST,
                    &format!("{REGISTRATION}/{plural}"),
                    Some(body(&config)),
                )
                .await?;
            made.push(format!("{REGISTRATION}/{plural}/{name}"));
        }
        Ok(made)
    }
}

/// The webhook's answer to one AdmissionReview: allowed; `/mutate` adds an
/// annotation with a JSONPatch when it is not there yet.
async fn answer(
    request: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let mutate = request.uri().path() == "/mutate";
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let uid = review["request"]["uid"].clone();
    let mut response = json!({"uid": uid, "allowed": true});
    let annotated = !review["request"]["object"]["metadata"]["annotations"].is_null();
    if mutate && !annotated {
        let patch = json!([{"op": "add", "path": "/metadata/annotations",
            "value": {"kapi-bench/mutated": "yes"}}]);
        response["patchType"] = json!("JSONPatch");
        response["patch"] =
            json!(base64::engine::general_purpose::STANDARD.encode(patch.to_string()));
    }
    let answer = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "response": response});
    let mut reply = hyper::Response::new(Full::new(Bytes::from(answer.to_string())));
    reply.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(reply)
}
