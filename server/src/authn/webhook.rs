//! Tokens this server does not know, asked of another cluster with a
//! TokenReview (k8s.io/apiserver's delegating authentication: the webhook
//! token authenticator over `--authentication-kubeconfig`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::kubeconfig::RemoteApi;
use crate::user::UserInfo;

/// How long a review may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The cluster asked.
#[derive(Clone, Debug)]
pub struct TokenReview {
    api: RemoteApi,
}

/// What the cluster said of a token.
pub enum Reviewed {
    /// Whose it is.
    User(UserInfo),
    /// It is no one's, or the review failed (the reason).
    Refused(String),
}

impl TokenReview {
    /// Reviews tokens at `api`.
    pub fn new(api: RemoteApi) -> TokenReview {
        TokenReview { api }
    }

    /// The user of `token`, as the cluster says.
    pub async fn review(&self, token: &str) -> Reviewed {
        let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": token}});
        let answer = self
            .api
            .json(
                hyper::Method::POST,
                "/apis/authentication.k8s.io/v1/tokenreviews",
                Some(&review),
                TIMEOUT,
            )
            .await;
        let (code, answer) = match answer {
            Ok(answer) => answer,
            Err(e) => return Reviewed::Refused(e.0),
        };
        if !(200..300).contains(&code) {
            let message = answer["message"].as_str().unwrap_or_default();
            return Reviewed::Refused(format!("the token review failed ({code}): {message}"));
        }
        let status = &answer["status"];
        if status["authenticated"] != true {
            let why = status["error"]
                .as_str()
                .unwrap_or("token not authenticated");
            return Reviewed::Refused(why.to_owned());
        }
        let user = &status["user"];
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        };
        let extra: BTreeMap<String, Vec<String>> = user["extra"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), strings(v)))
            .collect();
        Reviewed::User(UserInfo {
            name: user["username"].as_str().unwrap_or_default().to_owned(),
            uid: user["uid"].as_str().unwrap_or_default().to_owned(),
            groups: strings(&user["groups"]),
            extra,
        })
    }
}
