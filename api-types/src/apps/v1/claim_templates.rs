//! The JSON of a stateful set's `volumeClaimTemplates`: Kubernetes' apps/v1
//! conversion writes `kind: PersistentVolumeClaim` and `apiVersion: v1` into
//! every claim template (its defaulting, in effect), and accepts them on input.
//! A claim's type holds no type meta (kinds get theirs from the envelope), so
//! these functions add it on the way out and drop it on the way in. Protobuf
//! carries no type meta here, as upstream's.

use std::fmt;

use kapi_runtime::object::WithTypeMeta;
use serde::de::{DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::core::v1::PersistentVolumeClaim;

/// The type meta every claim template is written with.
const KIND: &str = "PersistentVolumeClaim";
const API_VERSION: &str = "v1";

/// Writes the templates, each with its type meta first.
pub(super) fn serialize<S: Serializer>(
    templates: &Option<Vec<PersistentVolumeClaim>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let Some(templates) = templates else {
        return serializer.serialize_none();
    };
    let mut seq = serializer.serialize_seq(Some(templates.len()))?;
    for claim in templates {
        seq.serialize_element(&Embedded(claim))?;
    }
    seq.end()
}

/// Reads the templates, accepting (and dropping) each one's type meta.
pub(super) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<PersistentVolumeClaim>>, D::Error> {
    let templates = Option::<Vec<Template>>::deserialize(deserializer)?;
    Ok(templates.map(|t| t.into_iter().map(|Template(claim)| claim).collect()))
}

/// A claim written with its type meta.
struct Embedded<'a>(&'a PersistentVolumeClaim);

impl Serialize for Embedded<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0
            .serialize(WithTypeMeta::new(serializer, KIND, API_VERSION))
    }
}

/// A claim read from an object that may carry type meta.
struct Template(PersistentVolumeClaim);

impl<'de> Deserialize<'de> for Template {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TemplateVisitor)
    }
}

struct TemplateVisitor;

impl<'de> Visitor<'de> for TemplateVisitor {
    type Value = Template;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a PersistentVolumeClaim object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Template, A::Error> {
        let claim = PersistentVolumeClaim::deserialize(
            serde::de::value::MapAccessDeserializer::new(WithoutTypeMeta(map)),
        )?;
        Ok(Template(claim))
    }
}

/// The entries of a map less `kind` and `apiVersion`, whose values are read as
/// text (so that they do not count as unknown fields).
struct WithoutTypeMeta<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for WithoutTypeMeta<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        while let Some(key) = self.0.next_key::<String>()? {
            if key == "kind" || key == "apiVersion" {
                self.0.next_value::<Option<String>>()?;
                continue;
            }
            let key: serde::de::value::StringDeserializer<A::Error> = key.into_deserializer();
            return seed.deserialize(key).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.0.next_value_seed(seed)
    }
}
