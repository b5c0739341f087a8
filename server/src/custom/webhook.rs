//! Conversion webhooks of custom resources (`spec.conversion.strategy:
//! Webhook`): a `ConversionReview` (apiextensions.k8s.io/v1) POSTed through
//! the webhook client ([`crate::webhook_client`]) to the definition's URL or
//! Service, trusted through its `caBundle`, as kube-apiserver sends it, with
//! upstream's errors when the call or its answer fails.
//!
//! Not yet: `v1beta1` reviews, and the system's trusted roots when no
//! `caBundle` is given.

use std::time::Duration;

use base64::Engine as _;
use hyper::body::Bytes;
use serde_json::{Value, json};

use crate::controllers::client::Client;
use crate::controllers::resolver::Endpoints;
use crate::webhook_client::{self, Target};

/// How long a conversion may take, as upstream's default.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Where and how to reach a definition's conversion webhook.
pub struct Webhook {
    target: Result<Target, String>,
    calls: webhook_client::Client,
    resolver: Option<Endpoints>,
}

impl Webhook {
    /// The webhook of a definition's `spec.conversion`, when its strategy
    /// is `Webhook`.
    /// `client` looks up the endpoints of a Service the webhook names.
    pub fn of(conversion: &Value, client: Option<&Client>) -> Option<Webhook> {
        if conversion["strategy"] != "Webhook" {
            return None;
        }
        let config = &conversion["webhook"]["clientConfig"];
        Some(Webhook {
            target: client_config(config).and_then(|c| Target::new(&c)),
            calls: webhook_client::Client::default(),
            resolver: client.map(|c| Endpoints(c.clone())),
        })
    }

    /// Converts `objects` (whole objects, with apiVersion and kind) to
    /// `desired` (`group/version`); `gvk` names the kind in errors as
    /// upstream names it (`example.com/v1, Kind=Widget`).
    pub async fn convert(
        &self,
        objects: Vec<Value>,
        desired: &str,
        gvk: &str,
    ) -> Result<Vec<Value>, String> {
        let failed = |e: String| format!("conversion webhook for {gvk} failed: {e}");
        let target = self.target.as_ref().map_err(|e| failed(e.clone()))?;
        let uid = uuid::Uuid::new_v4().to_string();
        let count = objects.len();
        let review = json!({
            "kind": "ConversionReview",
            "apiVersion": "apiextensions.k8s.io/v1",
            "request": { "uid": uid, "desiredAPIVersion": desired, "objects": objects },
        });
        let answer = self
            .calls
            .post(
                target,
                self.resolver
                    .as_ref()
                    .map(|r| r as &dyn webhook_client::Resolve),
                "timeout=30s",
                Bytes::from(review.to_string()),
                TIMEOUT,
            )
            .await
            .map_err(|e| failed(e.message))?;
        let review: Value = serde_json::from_slice(&answer)
            .map_err(|e| failed(format!("unable to decode the answer: {e}")))?;
        let response = &review["response"];
        if response.is_null() {
            return Err(failed("no response provided".into()));
        }
        if response["uid"] != uid.as_str() {
            return Err(failed(format!(
                "expected response uid {uid:?}, got {:?}",
                response["uid"].as_str().unwrap_or_default()
            )));
        }
        if response["result"]["status"] != "Success" {
            return Err(failed(
                response["result"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ));
        }
        let converted = response["convertedObjects"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if converted.len() != count {
            return Err(format!(
                "conversion webhook for {gvk} returned {} objects, expected {count}",
                converted.len()
            ));
        }
        for (i, object) in converted.iter().enumerate() {
            if object["apiVersion"] != desired {
                return Err(format!(
                    "conversion webhook for {gvk} returned invalid converted object at index {i}: invalid apiVersion {:?}, expected {desired:?}",
                    object["apiVersion"].as_str().unwrap_or_default()
                ));
            }
        }
        Ok(converted)
    }
}

/// A `clientConfig` as the webhook client takes it.
fn client_config(config: &Value) -> Result<webhook_client::Config, String> {
    let ca_bundle = match config["caBundle"].as_str() {
        Some(bundle) => base64::engine::general_purpose::STANDARD
            .decode(bundle)
            .map_err(|e| format!("invalid caBundle: {e}"))?,
        None => Vec::new(),
    };
    let service = &config["service"];
    let text = |key: &str| service[key].as_str().unwrap_or_default().to_owned();
    Ok(webhook_client::Config {
        url: config["url"].as_str().map(str::to_owned),
        service: service.is_object().then(|| webhook_client::ServiceRef {
            namespace: text("namespace"),
            name: text("name"),
            path: service["path"].as_str().map(str::to_owned),
            port: service["port"].as_i64().and_then(|p| i32::try_from(p).ok()),
        }),
        ca_bundle,
    })
}
