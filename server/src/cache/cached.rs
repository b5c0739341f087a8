//! An object as the watch cache keeps it: decoded once when its event
//! arrives, and encoded at most once per wire form, the bytes shared by every
//! list and watcher that sends it (upstream's `cachingObject`).

use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Instant;

use bytes::Bytes;
use kapi_runtime::scheme::{KindEntry, KindOps};
use serde::{Serialize, Serializer};

use crate::body::Object;

/// One object in its storage version, with its encodings made on first use.
pub struct Cached {
    object: Object,
    /// The object's JSON.
    json: OnceLock<Result<Bytes, String>>,
    /// The kind's protobuf message (not enveloped: a list embeds it as it is).
    message: OnceLock<Result<Bytes, String>>,
    /// The object in the other served versions it was asked for.
    served: Mutex<Vec<Served>>,
}

/// The object converted for one served version's kind, held weakly: a
/// redefined custom resource's new kind does not take the old one's
/// conversions.
struct Served {
    kind: Weak<dyn KindOps>,
    object: Result<Arc<Cached>, String>,
}

impl Cached {
    /// Keeps `object` (its resourceVersion stamped).
    pub fn new(object: Object) -> Arc<Cached> {
        Arc::new(Cached {
            object,
            json: OnceLock::new(),
            message: OnceLock::new(),
            served: Mutex::default(),
        })
    }

    /// The object as the served version `kind` has it, made by `convert`
    /// for the first list, get or watcher of that version and kept for the
    /// others with the encodings it makes, while this object is current or
    /// in the history. A conversion that is not pure (a webhook's) is made
    /// again each time, as upstream makes it.
    pub fn served(
        &self,
        kind: &KindEntry,
        convert: impl FnOnce(&Object) -> Result<Object, String>,
    ) -> Result<Arc<Cached>, String> {
        if !kind.ops.conversion_is_pure() {
            return convert(&self.object).map(Cached::new);
        }
        let mut served = self.served.lock().unwrap_or_else(PoisonError::into_inner);
        let this = Arc::as_ptr(&kind.ops);
        if let Some(kept) = served
            .iter()
            .find(|kept| std::ptr::addr_eq(kept.kind.as_ptr(), this))
        {
            return kept.object.clone();
        }
        let object = convert(&self.object).map(Cached::new);
        served.retain(|kept| kept.kind.strong_count() > 0);
        served.push(Served {
            kind: Arc::downgrade(&kind.ops),
            object: object.clone(),
        });
        object
    }

    /// The object.
    pub fn object(&self) -> &Object {
        &self.object
    }

    /// The object, taken out when this is the last reference, else copied.
    pub fn into_object(self: Arc<Self>) -> Object {
        Arc::try_unwrap(self)
            .map(|cached| cached.object)
            .unwrap_or_else(|shared| shared.object.clone())
    }

    /// The object's JSON, written once.
    pub fn json(&self) -> Result<&Bytes, String> {
        self.json
            .get_or_init(|| self.object.to_json().map(kept))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The object's protobuf message (`entry` is its kind), encoded once.
    /// `None` when the kind has no message.
    pub fn message(&self, entry: &KindEntry) -> Option<Result<&Bytes, String>> {
        let codec = entry.proto?;
        let message = self
            .message
            .get_or_init(|| codec.encode(self.object.typed()).map(kept));
        Some(message.as_ref().map_err(Clone::clone))
    }

    /// A JSON watch frame: `head`, the object's JSON, `tail`. When the
    /// object has no JSON kept yet, the JSON it keeps is this frame's slice of
    /// it: the event's frame and the lists and gets that send the object share
    /// one buffer.
    pub fn json_frame(&self, head: &[&[u8]], tail: &[u8]) -> Result<Bytes, String> {
        let head_len = head.iter().map(|part| part.len()).sum::<usize>();
        let mut out = Vec::with_capacity(
            head_len
                + tail.len()
                + self
                    .json
                    .get()
                    .map_or(1024, |json| json.as_ref().map_or(0, Bytes::len)),
        );
        head.iter().for_each(|part| out.extend_from_slice(part));
        if let Some(json) = self.json.get() {
            out.extend_from_slice(json.as_ref().map_err(Clone::clone)?);
            out.extend_from_slice(tail);
            return Ok(Bytes::from(out));
        }
        if let Err(e) = self.object.write_json(&mut out) {
            let _ = self.json.set(Err(e.clone()));
            return Err(e);
        }
        let end = out.len();
        out.extend_from_slice(tail);
        let frame = kept(out);
        let _ = self.json.set(Ok(frame.slice(head_len..end)));
        Ok(frame)
    }

    /// A frame around the object's protobuf message (`entry` is its kind),
    /// made by `wrap`, which answers the frame and where the message starts in
    /// it. The message kept is the frame's slice of it when none was kept yet,
    /// as in [`Cached::json_frame`]. `None` when the kind has no message.
    pub fn message_frame(
        &self,
        entry: &KindEntry,
        wrap: impl FnOnce(&[u8]) -> (Vec<u8>, usize),
    ) -> Option<Result<Bytes, String>> {
        let codec = entry.proto?;
        if let Some(message) = self.message.get() {
            return Some(
                message
                    .as_ref()
                    .map(|message| Bytes::from(wrap(message).0))
                    .map_err(Clone::clone),
            );
        }
        let message = match codec.encode(self.object.typed()) {
            Ok(message) => message,
            Err(e) => {
                let _ = self.message.set(Err(e.clone()));
                return Some(Err(e));
            }
        };
        let (frame, at) = wrap(&message);
        let frame = kept(frame);
        let _ = self.message.set(Ok(frame.slice(at..at + message.len())));
        Some(Ok(frame))
    }
}

/// An encoding kept as long as its object: without the spare capacity its
/// buffer grew with (up to half of it).
fn kept(mut bytes: Vec<u8>) -> Bytes {
    bytes.shrink_to_fit();
    Bytes::from(bytes)
}

impl AsRef<Object> for Cached {
    fn as_ref(&self) -> &Object {
        &self.object
    }
}

impl Serialize for Cached {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.object.serialize(s)
    }
}

impl std::fmt::Debug for Cached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.object.fmt(f)
    }
}

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Deleted.
    Deleted,
}

impl EventType {
    /// The watch frame's `type`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change of the cached resource, kept in the history window and sent
/// to every watcher; its frames are encoded once for all of them.
pub struct Event {
    /// The object's storage key.
    pub key: Arc<str>,
    /// The revision of the change.
    pub revision: u64,
    /// What happened.
    pub type_: EventType,
    /// The object after the change; for a deletion, its last state with the
    /// deletion's revision as resourceVersion (as Kubernetes reports it).
    pub object: Arc<Cached>,
    /// The object before the change (none for an addition).
    pub prev: Option<Arc<Cached>>,
    /// When the cache learnt of it (the history keeps a time window).
    pub at: Instant,
    /// The whole JSON frame of this event's own type, once made.
    json_frame: OnceLock<Bytes>,
    /// The whole protobuf frame, once made.
    proto_frame: OnceLock<Bytes>,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("key", &self.key)
            .field("revision", &self.revision)
            .field("type", &self.type_)
            .finish_non_exhaustive()
    }
}

impl Event {
    /// An event that just happened.
    pub fn new(
        key: Arc<str>,
        revision: u64,
        type_: EventType,
        object: Arc<Cached>,
        prev: Option<Arc<Cached>>,
    ) -> Arc<Event> {
        Arc::new(Event {
            key,
            revision,
            type_,
            object,
            prev,
            at: Instant::now(),
            json_frame: OnceLock::new(),
            proto_frame: OnceLock::new(),
        })
    }

    /// The event's frame in a wire form, made by `encode` for the first
    /// watcher that needs it and shared with the others.
    pub fn frame(&self, protobuf: bool, encode: impl FnOnce() -> Bytes) -> Bytes {
        let slot = if protobuf {
            &self.proto_frame
        } else {
            &self.json_frame
        };
        slot.get_or_init(encode).clone()
    }
}
