//! `[]byte` fields: base64 on the wire, as Go's encoding/json writes them.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::api_type::ApiType;

/// Bytes that travel as standard base64 text (Secret `data`, ConfigMap `binaryData`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ByteString(pub Vec<u8>);

impl Serialize for ByteString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for ByteString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        STANDARD
            .decode(text.as_bytes())
            .map(ByteString)
            .map_err(|e| serde::de::Error::custom(format!("illegal base64 data: {e}")))
    }
}

impl ApiType for ByteString {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        let b: ByteString = serde_json::from_str("\"aGVsbG8=\"").unwrap();
        assert_eq!(b.0, b"hello");
        assert_eq!(serde_json::to_string(&b).unwrap(), "\"aGVsbG8=\"");
        assert!(serde_json::from_str::<ByteString>("\"not base64!\"").is_err());
    }
}
