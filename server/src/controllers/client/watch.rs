//! The body of a watch: one JSON event per line, read as it streams.

use axum::body::{Body, BodyDataStream};
use futures::StreamExt;
use serde_json::Value;

use super::ClientError;

/// One watch event.
#[derive(Debug)]
pub struct ClientEvent {
    /// ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.
    pub kind: String,
    /// The object (a Status for ERROR).
    pub object: Value,
}

/// The events of one watch, one JSON document per line.
pub struct WatchStream {
    body: BodyDataStream,
    buffer: Vec<u8>,
}

impl WatchStream {
    pub(super) fn new(body: Body) -> WatchStream {
        WatchStream {
            body: body.into_data_stream(),
            buffer: Vec::new(),
        }
    }

    /// The next event, `None` when the watch ended.
    pub async fn next(&mut self) -> Option<Result<ClientEvent, ClientError>> {
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return Some(parse_event(&line));
            }
            match self.body.next().await? {
                Ok(chunk) => self.buffer.extend_from_slice(&chunk),
                Err(e) => return Some(Err(ClientError::Transport(e.to_string()))),
            }
        }
    }
}

fn parse_event(line: &[u8]) -> Result<ClientEvent, ClientError> {
    let mut value: Value =
        serde_json::from_slice(line).map_err(|e| ClientError::Decode(e.to_string()))?;
    let kind = value["type"].as_str().unwrap_or_default().to_owned();
    let object = value
        .get_mut("object")
        .map(Value::take)
        .unwrap_or(Value::Null);
    Ok(ClientEvent { kind, object })
}
