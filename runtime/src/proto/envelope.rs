//! The envelope of Kubernetes protobuf bodies: the 4-byte magic `k8s\0`, then a
//! `runtime.Unknown` message holding `typeMeta` (apiVersion, kind), `raw` (the
//! object's own message), `contentEncoding` and `contentType` (both empty).

use super::wire::{self, DecodeError, Reader, WireType};

/// The four bytes every protobuf body starts with.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// The media type of the encoding.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// A decoded envelope, borrowing the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unknown<'a> {
    /// `typeMeta.apiVersion`.
    pub api_version: &'a str,
    /// `typeMeta.kind`.
    pub kind: &'a str,
    /// The object's message.
    pub raw: &'a [u8],
}

fn type_meta_len(api_version: &str, kind: &str) -> usize {
    wire::len_field_len(1, api_version.len()) + wire::len_field_len(2, kind.len())
}

/// The length of the envelope around a message of `raw_len` bytes.
pub fn encoded_len(api_version: &str, kind: &str, raw_len: usize) -> usize {
    MAGIC.len()
        + wire::len_field_len(1, type_meta_len(api_version, kind))
        + wire::len_field_len(2, raw_len)
        + 2 * wire::len_field_len(3, 0)
}

/// The envelope around an encoded message.
pub fn encode(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(encoded_len(api_version, kind, raw.len()));
    encode_into(&mut buf, api_version, kind, raw);
    buf
}

/// Appends the envelope around an encoded message to `buf`; answers where in
/// `buf` the message starts.
pub fn encode_into(buf: &mut Vec<u8>, api_version: &str, kind: &str, raw: &[u8]) -> usize {
    buf.extend_from_slice(MAGIC);
    wire::put_key(buf, 1, WireType::Len);
    wire::put_varint(buf, type_meta_len(api_version, kind) as u64);
    wire::put_bytes(buf, 1, api_version.as_bytes());
    wire::put_bytes(buf, 2, kind.as_bytes());
    wire::put_key(buf, 2, WireType::Len);
    wire::put_varint(buf, raw.len() as u64);
    let at = buf.len();
    buf.extend_from_slice(raw);
    // contentEncoding and contentType: Go always writes its non-pointer strings.
    wire::put_bytes(buf, 3, b"");
    wire::put_bytes(buf, 4, b"");
    at
}

/// Opens an envelope.
pub fn decode(body: &[u8]) -> Result<Unknown<'_>, DecodeError> {
    let Some(rest) = body.strip_prefix(MAGIC) else {
        return Err(DecodeError::new(
            "the body does not start with the protobuf magic prefix k8s\\0",
        ));
    };
    let mut r = Reader::new(rest);
    let mut out = Unknown {
        api_version: "",
        kind: "",
        raw: &[],
    };
    while !r.is_empty() {
        match r.key()? {
            (1, WireType::Len) => {
                let mut tm = r.nested()?;
                while !tm.is_empty() {
                    match tm.key()? {
                        (1, WireType::Len) => out.api_version = text(tm.len_delimited()?)?,
                        (2, WireType::Len) => out.kind = text(tm.len_delimited()?)?,
                        (_, wire) => tm.skip(wire)?,
                    }
                }
            }
            (2, WireType::Len) => out.raw = r.len_delimited()?,
            (3 | 4, WireType::Len) => {
                if !r.len_delimited()?.is_empty() {
                    return Err(DecodeError::new(
                        "content encodings and nested content types are not supported",
                    ));
                }
            }
            (_, wire) => r.skip(wire)?,
        }
    }
    Ok(out)
}

fn text(bytes: &[u8]) -> Result<&str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|_| DecodeError::new("typeMeta is not valid UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let body = encode("v1", "ConfigMap", b"\x0a\x00");
        assert_eq!(body.len(), encoded_len("v1", "ConfigMap", 2));
        let u = decode(&body).unwrap();
        assert_eq!(
            (u.api_version, u.kind, u.raw),
            ("v1", "ConfigMap", &b"\x0a\x00"[..])
        );
    }

    #[test]
    fn matches_go_bytes() {
        // What kube-apiserver writes for an empty v1 Status message.
        let body = encode("v1", "Status", b"");
        assert_eq!(
            body,
            b"k8s\0\x0a\x0c\x0a\x02v1\x12\x06Status\x12\x00\x1a\x00\x22\x00".to_vec()
        );
    }

    #[test]
    fn garbage_is_refused() {
        assert!(decode(b"{}").is_err());
        assert!(decode(b"k8s\0\x0a\xff").is_err());
        assert!(decode(b"k8s\0\x0a\x02\x0a\x05").is_err());
    }
}
