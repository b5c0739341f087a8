//! The storage codec: how objects are written to the store
//! (`--storage-media-type`, as kube-apiserver's flag) and read back.
//!
//! Reading recognises every format whatever the setting (protobuf by its magic,
//! JSON by its opening brace, YAML otherwise), so a store written under one media
//! type stays readable after the flag changes; objects are rewritten in the new
//! format as they are updated, as upstream.

use std::fmt;
use std::str::FromStr;

use bytes::Bytes;
use kapi_runtime::proto::envelope;
use kapi_runtime::resource::StoredForm;
use kapi_runtime::scheme::KindEntry;
use kapi_storage::KeyValue;
use serde_json::Value;

use crate::body::Object;

/// The format objects are stored in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StorageMediaType {
    /// `application/json`: readable with `etcdctl get` as it is.
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/vnd.kubernetes.protobuf`: the `k8s\0` envelope around the
    /// kind's message, as kube-apiserver stores it. Kinds without a protobuf
    /// message (a user's JSON-only kind) are stored as JSON, as upstream stores
    /// custom resources. The default, as upstream's: it loads faster than JSON
    /// (see the README's figures) and takes a third less space.
    #[default]
    Protobuf,
}

impl StorageMediaType {
    /// The media type as the flag spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            StorageMediaType::Json => "application/json",
            StorageMediaType::Yaml => "application/yaml",
            StorageMediaType::Protobuf => envelope::MEDIA_TYPE,
        }
    }

    /// The bytes to store for `object`: everything but its resourceVersion (the
    /// store's revision is the resourceVersion, as in etcd). Written as
    /// protobuf, `object` is left as it will read back: its empty optional
    /// lists and maps absent.
    pub fn encode(self, entry: &KindEntry, object: &mut Object) -> Result<Bytes, String> {
        if let (StorageMediaType::Protobuf, Some(_)) = (self, entry.proto) {
            object.typed_mut().clear_empty();
        }
        let resource_version = object.metadata_mut().resource_version.take();
        let bytes = self.encode_unversioned(entry, object);
        object.metadata_mut().resource_version = resource_version;
        bytes
    }

    fn encode_unversioned(self, entry: &KindEntry, object: &Object) -> Result<Bytes, String> {
        if let Some(form) = entry.ops.stored_as() {
            // In another version's JSON, as upstream stores a CRD.
            let mut value = object.to_value()?;
            (form.to_stored)(&mut value)?;
            return serde_json::to_vec(&value)
                .map(Bytes::from)
                .map_err(|e| e.to_string());
        }
        match (self, entry.proto) {
            // Kinds upstream stores as JSON whatever the flag says.
            _ if entry.info.storage_json => object.to_json().map(Bytes::from),
            (StorageMediaType::Json, _) | (StorageMediaType::Protobuf, None) => {
                object.to_json().map(Bytes::from)
            }
            (StorageMediaType::Yaml, _) => serde_saphyr::to_string(object)
                .map(Bytes::from)
                .map_err(|e| e.to_string()),
            (StorageMediaType::Protobuf, Some(proto)) => {
                let raw = proto.encode(object.typed())?;
                Ok(envelope::encode(object.api_version(), object.kind(), &raw).into())
            }
        }
    }
}

impl FromStr for StorageMediaType {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            StorageMediaType::Json,
            StorageMediaType::Yaml,
            StorageMediaType::Protobuf,
        ]
        .into_iter()
        .find(|m| m.as_str() == s)
        .ok_or_else(|| {
            format!(
                "unsupported storage media type {s:?}: one of application/json, \
                 application/yaml, application/vnd.kubernetes.protobuf"
            )
        })
    }
}

impl fmt::Display for StorageMediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Decodes a stored object of `entry`'s kind, whichever format it was written in,
/// applies the kind's defaults (an object stored before a default existed reads
/// as if written today, as upstream defaults on decode from etcd) and stamps its
/// resourceVersion.
pub fn decode_stored(entry: &KindEntry, kv: &KeyValue) -> Result<Object, String> {
    let bytes = &kv.value[..];
    let typed = if bytes.starts_with(envelope::MAGIC) {
        let unknown =
            envelope::decode(bytes).map_err(|e| format!("stored object {}: {e}", kv.key))?;
        if unknown.kind != entry.info.kind {
            return Err(format!(
                "stored object {} is a {:?}, not a {}",
                kv.key, unknown.kind, entry.info.kind
            ));
        }
        let proto = entry.proto.ok_or_else(|| {
            format!(
                "stored object {} is protobuf, but {} has no protobuf message",
                kv.key, entry.info.kind
            )
        })?;
        proto.decode(unknown.raw)
    } else {
        match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => match entry.ops.stored_as() {
                Some(form) => from_stored_json(form, bytes)
                    .and_then(|value| entry.ops.decode_value(value).map(|d| d.object)),
                None => entry.ops.decode_json(bytes).map(|d| d.object),
            },
            _ => std::str::from_utf8(bytes)
                .map_err(|e| e.to_string())
                .and_then(|text| serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string()))
                .and_then(|value| entry.ops.decode_value(value).map(|d| d.object)),
        }
    }
    .map_err(|e| format!("stored object {}: {e}", kv.key))?;
    let mut object = Object::new(typed);
    object.typed_mut().apply_defaults();
    object.metadata_mut().resource_version = Some(kv.mod_revision.to_string());
    Ok(object)
}

/// A stored JSON object of a kind stored in another version
/// ([`StoredForm`]), as the kind's JSON: converted when it is in the stored
/// version (an object written in the kind's own version is read as it is).
fn from_stored_json(form: &StoredForm, bytes: &[u8]) -> Result<Value, String> {
    let mut value: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if value["apiVersion"] == form.api_version {
        (form.from_stored)(&mut value)?;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use kapi_api_types::core::v1::ConfigMap;
    use kapi_runtime::scheme::Scheme;

    fn configmap_entry() -> KindEntry {
        let mut scheme = Scheme::new();
        kapi_api_types::install(&mut scheme);
        scheme.get("", "v1", "configmaps").unwrap().clone()
    }

    fn configmap() -> Object {
        let value = serde_json::json!({
            "metadata": {"name": "x", "namespace": "ns", "resourceVersion": "9",
                         "labels": {"a": "b"}, "creationTimestamp": "2026-01-02T03:04:05Z"},
            "data": {"k": "v"}, "binaryData": {"b": "AAE="}
        });
        let typed: ConfigMap = serde_json::from_value(value).unwrap();
        Object::new(Box::new(typed))
    }

    fn stored(bytes: Bytes) -> KeyValue {
        KeyValue {
            key: "/registry/configmaps/ns/x".into(),
            value: bytes,
            create_revision: 3,
            mod_revision: 4,
        }
    }

    #[test]
    fn every_media_type_round_trips_and_stamps_the_revision() {
        let entry = configmap_entry();
        let object = configmap();
        for media_type in [
            StorageMediaType::Json,
            StorageMediaType::Yaml,
            StorageMediaType::Protobuf,
        ] {
            let mut object = object.clone();
            let bytes = media_type.encode(&entry, &mut object).unwrap();
            let back = decode_stored(&entry, &stored(bytes)).unwrap();
            let mut expected = object.clone();
            expected.metadata_mut().resource_version = Some("4".into());
            assert_eq!(back, expected, "{media_type}");
        }
    }

    #[test]
    fn an_object_written_is_left_as_it_reads_back() {
        // An EndpointSlice's `endpoints` is written `null` when absent and
        // `[]` when empty; protobuf cannot tell them apart.
        let mut scheme = Scheme::new();
        kapi_api_types::install(&mut scheme);
        let entry = scheme
            .get("discovery.k8s.io", "v1", "endpointslices")
            .unwrap()
            .clone();
        let body = br#"{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
            "metadata":{"name":"web-1","namespace":"team","finalizers":[]},
            "addressType":"IPv4","endpoints":[],"ports":[{"port":80}]}"#;
        // As a write stores it: defaulted.
        let mut written = Object::new(entry.ops.decode_json(body).unwrap().object);
        written.typed_mut().apply_defaults();
        for media_type in [StorageMediaType::Json, StorageMediaType::Protobuf] {
            let mut object = written.clone();
            let bytes = media_type.encode(&entry, &mut object).unwrap();
            let back = decode_stored(&entry, &stored(bytes)).unwrap();
            object.metadata_mut().resource_version = Some("4".into());
            assert_eq!(back.to_json(), object.to_json(), "{media_type}");
            let endpoints = match media_type {
                StorageMediaType::Protobuf => r#""endpoints":null"#,
                _ => r#""endpoints":[]"#,
            };
            let json = String::from_utf8(object.to_json().unwrap()).unwrap();
            assert!(json.contains(endpoints), "{media_type}: {json}");
        }
    }

    #[test]
    fn formats_are_what_the_flag_names() {
        let entry = configmap_entry();
        let mut object = configmap();
        let json = StorageMediaType::Json.encode(&entry, &mut object).unwrap();
        assert!(json.starts_with(b"{\"kind\":\"ConfigMap\""));
        assert!(
            !std::str::from_utf8(&json)
                .unwrap()
                .contains("resourceVersion")
        );
        let yaml = StorageMediaType::Yaml.encode(&entry, &mut object).unwrap();
        assert!(
            std::str::from_utf8(&yaml)
                .unwrap()
                .starts_with("kind: ConfigMap\n")
        );
        let proto = StorageMediaType::Protobuf
            .encode(&entry, &mut object)
            .unwrap();
        let unknown = envelope::decode(&proto).unwrap();
        assert_eq!((unknown.api_version, unknown.kind), ("v1", "ConfigMap"));
        // Smaller than JSON, as upstream's reason for storing protobuf.
        assert!(proto.len() < json.len());
    }

    #[test]
    fn kinds_without_a_message_are_stored_as_json() {
        let mut entry = configmap_entry();
        entry.proto = None;
        let bytes = StorageMediaType::Protobuf
            .encode(&entry, &mut configmap())
            .unwrap();
        assert!(bytes.starts_with(b"{"));
    }

    #[test]
    fn corrupt_data_is_an_error_naming_the_key() {
        let entry = configmap_entry();
        for bad in [&b"k8s\0\x0a\xff"[..], b"{\"kind\":", b"- [", b"k8s\0"] {
            let err = decode_stored(&entry, &stored(Bytes::from_static(bad))).unwrap_err();
            assert!(err.contains("/registry/configmaps/ns/x"), "{err}");
        }
    }

    #[test]
    fn flag_values() {
        for m in [
            StorageMediaType::Json,
            StorageMediaType::Yaml,
            StorageMediaType::Protobuf,
        ] {
            assert_eq!(m.as_str().parse::<StorageMediaType>(), Ok(m));
        }
        assert!("text/plain".parse::<StorageMediaType>().is_err());
    }
}
