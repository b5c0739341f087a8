//! What users may do, asked of another cluster with a SubjectAccessReview
//! (k8s.io/apiserver's delegating authorization over
//! `--authorization-kubeconfig`): `/healthz`, `/readyz` and `/livez` are
//! open to all, `system:masters` may do everything (the chain's privileged
//! group), anything else is the cluster's answer, remembered ten seconds.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Attributes, Authorize, Decision, Rules, Target};
use crate::kubeconfig::RemoteApi;
use crate::registry::Registry;
use crate::user::UserInfo;

/// How long a review may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// How long an answer is remembered (the delegating options' allow and
/// deny cache times).
const REMEMBERED: Duration = Duration::from_secs(10);
/// The paths anyone may read without asking.
const ALWAYS_ALLOWED: &[&str] = &["/healthz", "/readyz", "/livez"];

/// The cluster asked, and its recent answers.
#[derive(Debug)]
pub struct SubjectAccessReview {
    api: RemoteApi,
    answers: Mutex<HashMap<String, (Instant, Decision)>>,
}

impl SubjectAccessReview {
    /// Asks `api`.
    pub fn new(api: RemoteApi) -> SubjectAccessReview {
        SubjectAccessReview {
            api,
            answers: Mutex::new(HashMap::new()),
        }
    }
}

/// The review's spec for `request`.
fn spec(request: &Attributes<'_>) -> Value {
    let user = request.user;
    let mut spec = json!({"user": user.name, "groups": user.groups});
    if !user.uid.is_empty() {
        spec["uid"] = json!(user.uid);
    }
    if !user.extra.is_empty() {
        spec["extra"] = json!(user.extra);
    }
    match &request.target {
        Target::Resource {
            namespace,
            group,
            resource,
            subresource,
            name,
            ..
        } => {
            let mut attributes =
                json!({"verb": request.verb, "group": group, "resource": resource});
            for (key, value) in [
                ("namespace", namespace),
                ("subresource", subresource),
                ("name", name),
            ] {
                if !value.is_empty() {
                    attributes[key] = json!(value);
                }
            }
            spec["resourceAttributes"] = attributes;
        }
        Target::Path(path) => {
            spec["nonResourceAttributes"] = json!({"path": path, "verb": request.verb});
        }
    }
    spec
}

#[async_trait]
impl Authorize for SubjectAccessReview {
    async fn authorize(&self, request: &Attributes<'_>, _registry: &Registry) -> Decision {
        if let Target::Path(path) = request.target
            && ALWAYS_ALLOWED.contains(&path)
        {
            return Decision::Allow(String::new());
        }
        let spec = spec(request);
        let key = spec.to_string();
        {
            let answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((at, decision)) = answers.get(&key)
                && at.elapsed() < REMEMBERED
            {
                return decision.clone();
            }
        }
        let review = json!({"apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview", "spec": spec});
        let answer = self
            .api
            .json(
                hyper::Method::POST,
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                Some(&review),
                TIMEOUT,
            )
            .await;
        let decision = match answer {
            Ok((code, answer)) if (200..300).contains(&code) => {
                let status = &answer["status"];
                let reason = status["reason"].as_str().unwrap_or_default().to_owned();
                if status["allowed"] == true {
                    Decision::Allow(reason)
                } else if status["denied"] == true {
                    Decision::Deny(reason)
                } else {
                    Decision::NoOpinion(reason)
                }
            }
            // A review that fails is no answer, and is not remembered.
            Ok((code, answer)) => {
                let message = answer["message"].as_str().unwrap_or_default();
                return Decision::NoOpinion(format!("Error: {message} ({code})"));
            }
            Err(e) => return Decision::NoOpinion(format!("Error: {e}")),
        };
        let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        answers.retain(|_, (at, _)| at.elapsed() < REMEMBERED);
        answers.insert(key, (Instant::now(), decision.clone()));
        decision
    }

    async fn rules_for(&self, _user: &UserInfo, _namespace: &str, _registry: &Registry) -> Rules {
        Rules {
            errors: vec!["webhook authorizer does not support user rule resolution".to_owned()],
            ..Rules::default()
        }
    }
}
