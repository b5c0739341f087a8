//! `ValidateConfigMap`, `ValidateSecret` and their update rules: data keys,
//! the total size, the keys each secret type needs, and immutability.

use std::collections::BTreeMap;

use kapi_runtime::ByteString;
use kapi_runtime::validation::{FieldErrors, FieldPath, config_key_errors};

use crate::core::v1::configmap::ConfigMap;
use crate::core::v1::secret::Secret;

/// The most data a ConfigMap or Secret may hold (1 MiB).
const MAX_SIZE: usize = 1024 * 1024;

const IMMUTABLE: &str = "field is immutable when `immutable` is set";

/// Each key a config key; the errors point at the entry.
fn keys<'a>(keys: impl Iterator<Item = &'a String>, path: &FieldPath, errs: &mut FieldErrors) {
    for key in keys {
        for detail in config_key_errors(key) {
            errs.invalid(path.key(key), key.as_str(), &detail);
        }
    }
}

/// The `ConfigMap` hook.
pub(crate) fn validate_config_map(cm: &ConfigMap, _path: &FieldPath, errs: &mut FieldErrors) {
    let empty_text = BTreeMap::new();
    let empty_bytes = BTreeMap::new();
    let data = cm.data.as_ref().unwrap_or(&empty_text);
    let binary = cm.binary_data.as_ref().unwrap_or(&empty_bytes);
    let (data_path, binary_path) = (FieldPath::new("data"), FieldPath::new("binaryData"));
    keys(data.keys(), &data_path, errs);
    keys(binary.keys(), &binary_path, errs);
    // Upstream reports a key in both maps once, on `data`.
    for key in data.keys().filter(|k| binary.contains_key(*k)) {
        errs.invalid(
            data_path.key(key),
            key.as_str(),
            "duplicate of key present in binaryData",
        );
    }
    let size: usize = data.values().map(String::len).sum::<usize>()
        + binary.values().map(|b| b.0.len()).sum::<usize>();
    if size > MAX_SIZE {
        // Upstream reports the whole object, with an empty path.
        errs.too_long(FieldPath::root(), MAX_SIZE);
    }
}

/// The `ConfigMap` update hook: an immutable ConfigMap keeps its data.
pub(crate) fn validate_config_map_update(
    new: &ConfigMap,
    old: &ConfigMap,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if old.immutable == Some(true) {
        if new.immutable != Some(true) {
            errs.forbidden(FieldPath::new("immutable"), IMMUTABLE);
        }
        if new.data != old.data {
            errs.forbidden(FieldPath::new("data"), IMMUTABLE);
        }
        if new.binary_data != old.binary_data {
            errs.forbidden(FieldPath::new("binaryData"), IMMUTABLE);
        }
    }
}

/// The `Secret` hook: keys, size, and the keys of the well-known types.
pub(crate) fn validate_secret(secret: &Secret, _path: &FieldPath, errs: &mut FieldErrors) {
    let empty = BTreeMap::new();
    let data: &BTreeMap<String, ByteString> = secret.data.as_ref().unwrap_or(&empty);
    let data_path = FieldPath::new("data");
    keys(data.keys(), &data_path, errs);
    if data.values().map(|b| b.0.len()).sum::<usize>() > MAX_SIZE {
        errs.too_long(data_path.clone(), MAX_SIZE);
    }
    let require = |key: &str, errs: &mut FieldErrors| {
        if !data.contains_key(key) {
            errs.required(data_path.key(key), "");
        }
    };
    match secret.type_.as_deref().unwrap_or_default() {
        "kubernetes.io/service-account-token" => {
            let annotations = secret.metadata.annotations.as_ref();
            let name = annotations.and_then(|a| a.get("kubernetes.io/service-account.name"));
            if name.is_none_or(|n| n.is_empty()) {
                let path = FieldPath::new("metadata").child("annotations");
                errs.required(path.key("kubernetes.io/service-account.name"), "");
            }
        }
        "kubernetes.io/dockercfg" => docker_config(data, ".dockercfg", &data_path, errs),
        "kubernetes.io/dockerconfigjson" => {
            docker_config(data, ".dockerconfigjson", &data_path, errs)
        }
        // Either key may be empty, but one must be there.
        "kubernetes.io/basic-auth"
            if !data.contains_key("username") && !data.contains_key("password") =>
        {
            require("username", errs);
            require("password", errs);
        }
        "kubernetes.io/ssh-auth" if data.get("ssh-privatekey").is_none_or(|k| k.0.is_empty()) => {
            errs.required(data_path.key("ssh-privatekey"), "");
        }
        "kubernetes.io/tls" => {
            require("tls.crt", errs);
            require("tls.key", errs);
        }
        _ => {}
    }
}

/// A docker config key: present and a JSON object. Upstream quotes Go's JSON
/// decoder error, which ours does not reproduce word for word.
fn docker_config(
    data: &BTreeMap<String, ByteString>,
    key: &str,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let Some(bytes) = data.get(key) else {
        errs.required(path.key(key), "");
        return;
    };
    if let Err(e) = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(&bytes.0) {
        errs.invalid(path.key(key), "<secret contents redacted>", &e.to_string());
    }
}

/// The `Secret` update hook: the type never changes, an immutable secret
/// keeps its data.
pub(crate) fn validate_secret_update(
    new: &Secret,
    old: &Secret,
    _path: &FieldPath,
    errs: &mut FieldErrors,
) {
    if new.type_ != old.type_ {
        let value = new.type_.as_deref().unwrap_or_default();
        errs.invalid(FieldPath::new("type"), value, "field is immutable");
    }
    if old.immutable == Some(true) {
        if new.immutable != Some(true) {
            errs.forbidden(FieldPath::new("immutable"), IMMUTABLE);
        }
        if new.data != old.data {
            errs.forbidden(FieldPath::new("data"), IMMUTABLE);
        }
    }
}
