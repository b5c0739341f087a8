//! A list's body written as it is produced: the head, each item's encoding
//! (made once per object: the watch cache keeps it), the tail, in chunks,
//! so a large list is never built whole in memory a second time. Gzipped
//! when the client accepts it and the list passes kube-apiserver's
//! threshold (128 KiB, at its level 1).

use std::io::Write;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;

use crate::cache::Cached;

/// Lists up to this size go out in one piece and uncompressed (upstream's
/// `defaultGzipThresholdBytes`).
const GZIP_ABOVE: usize = 128 * 1024;

/// The size of the chunks a larger list is written in.
const CHUNK: usize = 256 * 1024;

/// The items of a list, encoded as they are written.
pub enum Items {
    /// Each object's JSON, comma-separated; with `typed`, without its kind
    /// and apiVersion, as kube-apiserver writes the items of a built-in
    /// kind's list (a custom resource's keep theirs).
    Json {
        items: std::vec::IntoIter<Arc<Cached>>,
        typed: bool,
    },
    /// Each object's protobuf message (already encoded: its length is part
    /// of the head), as field 2 of the list message.
    Protobuf(std::vec::IntoIter<Bytes>),
}

/// An object's JSON after its leading kind and apiVersion (what follows
/// `{"kind":"...","apiVersion":"...",`), when it starts with them and has
/// more; the encoder writes them first.
fn without_type_meta(json: &[u8]) -> Option<&[u8]> {
    let rest = json.strip_prefix(br#"{"kind":""#)?;
    let end = rest.iter().position(|b| *b == b'"')?;
    let rest = rest.get(end + 1..)?.strip_prefix(br#","apiVersion":""#)?;
    let end = rest.iter().position(|b| *b == b'"')?;
    rest.get(end + 1..)?.strip_prefix(b",")
}

/// Writes a list body in chunks.
struct ListWriter {
    head: Option<Vec<u8>>,
    items: Items,
    written: usize,
    tail: Option<Vec<u8>>,
    gzip: Option<GzEncoder<Vec<u8>>>,
}

impl ListWriter {
    /// Appends to `out` until it holds `until` bytes or the list ends;
    /// true when it ended.
    fn fill(&mut self, out: &mut Vec<u8>, until: usize) -> Result<bool, String> {
        if let Some(head) = self.head.take() {
            out.extend_from_slice(&head);
        }
        while out.len() < until {
            let next = match &mut self.items {
                Items::Json { items, typed } => items.next().map(|item| {
                    if self.written > 0 {
                        out.push(b',');
                    }
                    item.json().map(|json| match without_type_meta(json) {
                        Some(rest) if *typed => {
                            out.push(b'{');
                            out.extend_from_slice(rest);
                        }
                        _ => out.extend_from_slice(json),
                    })
                }),
                Items::Protobuf(messages) => messages.next().map(|message| {
                    kapi_runtime::proto::wire::put_bytes(out, 2, &message);
                    Ok(())
                }),
            };
            match next {
                Some(written) => {
                    written?;
                    self.written += 1;
                }
                None => {
                    if let Some(tail) = self.tail.take() {
                        out.extend_from_slice(&tail);
                    }
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The next chunk as it goes on the wire; `None` after the last.
    fn next_chunk(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        if self.head.is_none() && self.tail.is_none() && self.gzip.is_none() {
            return None;
        }
        let mut raw = Vec::with_capacity(CHUNK + 4096);
        let ended = match self.fill(&mut raw, CHUNK) {
            Ok(ended) => ended,
            Err(e) => return Some(Err(std::io::Error::other(e))),
        };
        let Some(gzip) = &mut self.gzip else {
            return Some(Ok(Bytes::from(raw)));
        };
        if let Err(e) = gzip.write_all(&raw) {
            return Some(Err(e));
        }
        let compressed = match ended {
            true => self.gzip.take().map(GzEncoder::finish)?,
            false => Ok(std::mem::take(gzip.get_mut())),
        };
        Some(compressed.map(Bytes::from))
    }
}

impl Iterator for ListWriter {
    type Item = Result<Bytes, std::io::Error>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_chunk()
    }
}

/// A 200 response of `head`, the items and `tail`: in one piece when small,
/// else streamed (and gzipped when `request` accepts it).
pub fn response(
    request: &HeaderMap,
    content_type: &'static str,
    head: Vec<u8>,
    items: Items,
    tail: Vec<u8>,
) -> Result<Response, String> {
    let mut writer = ListWriter {
        head: Some(head),
        items,
        written: 0,
        tail: Some(tail),
        gzip: None,
    };
    let mut first = Vec::with_capacity(GZIP_ABOVE + 4096);
    let body = if writer.fill(&mut first, GZIP_ABOVE)? {
        Body::from(first)
    } else if accepts_gzip(request) {
        let mut gzip = GzEncoder::new(Vec::new(), Compression::new(1));
        gzip.write_all(&first).map_err(|e| e.to_string())?;
        writer.gzip = Some(gzip);
        let mut response = (
            StatusCode::OK,
            Body::from_stream(futures::stream::iter(writer)),
        )
            .into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
        return Ok(response);
    } else {
        let first = futures::stream::once(std::future::ready(Ok(Bytes::from(first))));
        Body::from_stream(futures::StreamExt::chain(
            first,
            futures::stream::iter(writer),
        ))
    };
    let mut response = (StatusCode::OK, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    Ok(response)
}

/// Whether the request's `Accept-Encoding` names gzip (as kube-apiserver
/// looks for it).
fn accepts_gzip(request: &HeaderMap) -> bool {
    request
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| coding.split(';').next().is_some_and(|c| c.trim() == "gzip"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::Read;

    use http_body_util::BodyExt;
    use kapi_api_types::core::v1::ConfigMap;
    use kapi_runtime::meta::ListMeta;
    use kapi_runtime::scheme::Scheme;

    use super::*;
    use crate::body::Object;

    fn configmaps(count: usize, size: usize) -> Vec<Arc<Cached>> {
        (0..count)
            .map(|i| {
                let typed: ConfigMap = serde_json::from_value(serde_json::json!({
                    "metadata": {"name": format!("cm{i}"), "namespace": "a", "resourceVersion": "7"},
                    "data": {"k": "x".repeat(size)}
                }))
                .unwrap();
                Cached::new(Object::new(Box::new(typed)))
            })
            .collect()
    }

    async fn body(response: Response) -> (Option<String>, Vec<u8>) {
        let encoding = response
            .headers()
            .get(header::CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap().to_owned());
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (encoding, bytes.to_vec())
    }

    fn json(items: &[Arc<Cached>]) -> Vec<u8> {
        let jsons: Vec<&[u8]> = items.iter().map(|i| &i.json().unwrap()[..]).collect();
        [b"[".to_vec(), jsons.join(&b","[..]), b"]".to_vec()].concat()
    }

    fn gzip_accepted() -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("deflate, gzip;q=1.0"),
        );
        headers
    }

    #[test]
    fn a_typed_items_kind_and_api_version_are_left_out() {
        let pod = br#"{"kind":"Pod","apiVersion":"v1","metadata":{}}"#;
        let rest = without_type_meta(pod).unwrap();
        assert!(rest.starts_with(br#""metadata":"#));
        // What is left out: the 32 bytes of the kind and apiVersion (`{` is
        // written again before the rest).
        assert_eq!(rest.len() + 32, pod.len());
        assert_eq!(
            without_type_meta(br#"{"kind":"Pod","apiVersion":"v1"}"#),
            None
        );
        assert_eq!(without_type_meta(br#"{"metadata":{}}"#), None);
    }

    #[tokio::test]
    async fn small_lists_go_whole_and_large_ones_in_chunks_gzipped_on_request() {
        for (count, size) in [(0, 0), (3, 10), (400, 1000)] {
            let items = configmaps(count, size);
            let expected = json(&items);
            for headers in [HeaderMap::new(), gzip_accepted()] {
                let make = || Items::Json {
                    items: items.clone().into_iter(),
                    typed: false,
                };
                let response = response(
                    &headers,
                    "application/json",
                    b"[".to_vec(),
                    make(),
                    b"]".to_vec(),
                );
                let (encoding, bytes) = body(response.unwrap()).await;
                let large = expected.len() > GZIP_ABOVE;
                let gzipped = large && !headers.is_empty();
                assert_eq!(encoding.as_deref(), gzipped.then_some("gzip"), "{count}");
                let plain = if gzipped {
                    let mut out = Vec::new();
                    flate2::read::GzDecoder::new(&bytes[..])
                        .read_to_end(&mut out)
                        .unwrap();
                    assert!(bytes.len() < out.len());
                    out
                } else {
                    bytes
                };
                assert_eq!(plain, expected, "{count} items");
            }
        }
    }

    #[tokio::test]
    async fn a_streamed_protobuf_list_is_the_whole_one() {
        let mut scheme = Scheme::new();
        kapi_api_types::install(&mut scheme);
        let entry = scheme.get("", "v1", "configmaps").unwrap();
        let meta = ListMeta {
            resource_version: Some("7".into()),
            ..ListMeta::default()
        };
        let items = configmaps(300, 1000);
        let whole = crate::protobuf::encode_list(entry, &meta, &items).unwrap();
        let (head, messages, tail) = crate::protobuf::list_parts(entry, &meta, &items).unwrap();
        let streamed = response(
            &HeaderMap::new(),
            "application/vnd.kubernetes.protobuf",
            head,
            Items::Protobuf(messages.into_iter()),
            tail,
        )
        .unwrap();
        let (_, bytes) = body(streamed).await;
        assert!(bytes.len() > GZIP_ABOVE);
        assert_eq!(bytes, whole);
        let unknown = kapi_runtime::proto::envelope::decode(&whole).unwrap();
        assert_eq!((unknown.api_version, unknown.kind), ("v1", "ConfigMapList"));
    }
}
