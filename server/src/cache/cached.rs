//! An object as the watch cache keeps it: decoded once when its event
//! arrives, encoded at most once per wire form, the bytes shared by every
//! list and watcher that sends it (upstream's `cachingObject`), and then kept
//! as its JSON only, with what selectors and indexes read of it: a decoded
//! object takes two to three times the memory of its JSON.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Instant;

use bytes::Bytes;
use kapi_runtime::ResourceInfo;
use kapi_runtime::scheme::{KindEntry, KindOps};
use serde::{Serialize, Serializer};

use crate::body::Object;
use crate::selectors::Selectable;

/// One object in its storage version, with its encodings made on first use.
pub struct Cached {
    form: Form,
    /// The object's JSON (always there for an [`Form::Encoded`] object).
    json: OnceLock<Result<Bytes, String>>,
    /// The kind's protobuf message (not enveloped: a list embeds it as it is).
    message: OnceLock<Result<Bytes, String>>,
    /// The object in the other served versions it was asked for.
    served: Mutex<Vec<Served>>,
}

/// How a cached object is kept.
enum Form {
    /// Decoded.
    Decoded(Object),
    /// As its JSON only, with what selectors and indexes read of it: what the
    /// watch cache keeps of the objects it holds. Decoded again when read
    /// (gets for a write, admission, a controller, a table), and shared while
    /// a reader holds the decoded object.
    Encoded(Encoded),
}

struct Encoded {
    /// What decodes the JSON.
    kind: KindEntry,
    /// The labels, in key order.
    labels: Box<[(Box<str>, Box<str>)]>,
    /// The text of each of [`fields`]'s fields, where the object has it.
    fields: Box<[Option<Box<str>>]>,
    /// Its resourceVersion.
    revision: Option<u64>,
    /// The object as a reader decoded it, while one holds it.
    decoded: Mutex<Weak<Object>>,
}

/// The object converted for one served version's kind, held weakly: a
/// redefined custom resource's new kind does not take the old one's
/// conversions.
struct Served {
    kind: Weak<dyn KindOps>,
    object: Result<Arc<Cached>, String>,
}

/// A cached object, decoded: borrowed from a decoded one, or decoded anew
/// from the JSON of an encoded one.
pub enum ObjectRef<'a> {
    /// The object the cache keeps decoded.
    Kept(&'a Object),
    /// Decoded from its JSON.
    Decoded(Arc<Object>),
}

impl std::ops::Deref for ObjectRef<'_> {
    type Target = Object;

    fn deref(&self) -> &Object {
        match self {
            ObjectRef::Kept(object) => object,
            ObjectRef::Decoded(object) => object,
        }
    }
}

/// The fields an encoded object keeps the text of, for field selectors and
/// indexes: its name and namespace, and its kind's selectable fields.
fn fields(info: &ResourceInfo) -> impl Iterator<Item = &str> {
    let own = info
        .selectable_fields
        .iter()
        .copied()
        .filter(|f| !matches!(*f, "metadata.name" | "metadata.namespace"));
    ["metadata.name", "metadata.namespace"]
        .into_iter()
        .chain(own)
}

impl Cached {
    /// Keeps `object` (its resourceVersion stamped) decoded.
    pub fn new(object: Object) -> Arc<Cached> {
        Arc::new(Cached {
            form: Form::Decoded(object),
            json: OnceLock::new(),
            message: OnceLock::new(),
            served: Mutex::default(),
        })
    }

    /// Keeps `object` (its resourceVersion stamped, of `kind`) as its JSON
    /// only, written inside the JSON watch frame `head`, JSON, `tail`, which
    /// is answered beside it: the frame and the JSON kept share one buffer.
    /// Kept decoded, and no frame, when it cannot be written.
    pub fn encoded(
        object: Object,
        kind: &KindEntry,
        head: &[&[u8]],
        tail: &[u8],
    ) -> (Arc<Cached>, Option<Bytes>) {
        let Ok((frame, json)) = framed(head, tail, None, |out| object.write_json(out)) else {
            return (Cached::new(object), None);
        };
        let cached = Cached::keep_encoded(&object, kind, json, OnceLock::new());
        (Arc::new(cached), Some(frame))
    }

    /// What [`Cached::encoded`] makes of `written`, an object its writer
    /// holds decoded (the answer to its write): the JSON written once,
    /// for the writer's answer and the cache's copy alike, whichever needs
    /// it first, and the protobuf message the answer made, if it made one.
    /// The cache then keeps the JSON only, as always.
    pub fn encoded_from(
        written: &Arc<Cached>,
        kind: &KindEntry,
        head: &[&[u8]],
        tail: &[u8],
    ) -> (Arc<Cached>, Option<Bytes>) {
        let Form::Decoded(object) = &written.form else {
            return (written.clone(), written.json_frame(head, tail).ok());
        };
        // Whichever comes first writes the JSON, and the other waits for it:
        // the answer to the write on its own, or the frame here, the JSON
        // kept as its slice.
        let mut made = None;
        let json = written.json.get_or_init(|| {
            let (frame, json) = framed(head, tail, None, |out| object.write_json(out))?;
            made = Some((frame, json.clone()));
            Ok(json)
        });
        let made = match (made, json) {
            (Some(made), _) => Ok(made),
            (None, Ok(json)) => framed(head, tail, Some(json.len()), |out| {
                out.extend_from_slice(json);
                Ok(())
            }),
            (None, Err(e)) => Err(e.clone()),
        };
        let Ok((frame, json)) = made else {
            return (written.clone(), None);
        };
        let message = match written.message.get() {
            Some(Ok(message)) => OnceLock::from(Ok(message.clone())),
            _ => OnceLock::new(),
        };
        let cached = Cached::keep_encoded(object, kind, json, message);
        (Arc::new(cached), Some(frame))
    }

    /// `object` (of `kind`) kept as `json`, with what selectors and indexes
    /// read of it.
    fn keep_encoded(
        object: &Object,
        kind: &KindEntry,
        json: Bytes,
        message: OnceLock<Result<Bytes, String>>,
    ) -> Cached {
        let meta = object.metadata();
        let labels = meta.labels.iter().flatten();
        let labels = labels.map(|(k, v)| (k.as_str().into(), v.as_str().into()));
        let fields = fields(kind.info).map(|f| object.field_text(f).map(Into::into));
        let encoded = Encoded {
            kind: kind.clone(),
            labels: labels.collect(),
            fields: fields.collect(),
            revision: revision(object),
            decoded: Mutex::new(Weak::new()),
        };
        Cached {
            form: Form::Encoded(encoded),
            json: OnceLock::from(Ok(json)),
            message,
            served: Mutex::default(),
        }
    }

    /// The object, decoded.
    pub fn object(&self) -> Result<ObjectRef<'_>, String> {
        let encoded = match &self.form {
            Form::Decoded(object) => return Ok(ObjectRef::Kept(object)),
            Form::Encoded(encoded) => encoded,
        };
        let mut decoded = encoded
            .decoded
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(object) = decoded.upgrade() {
            return Ok(ObjectRef::Decoded(object));
        }
        let json = self.json()?;
        let object = encoded.kind.ops.decode_json(json)?.object;
        let object = Arc::new(Object::new(object));
        *decoded = Arc::downgrade(&object);
        Ok(ObjectRef::Decoded(object))
    }

    /// The object, taken out when this is the last reference to a decoded
    /// one, else copied or decoded.
    pub fn into_object(self: Arc<Self>) -> Result<Object, String> {
        match Arc::try_unwrap(self) {
            Ok(Cached {
                form: Form::Decoded(object),
                ..
            }) => Ok(object),
            Ok(cached) => Ok(cached.object()?.clone()),
            Err(shared) => Ok(shared.object()?.clone()),
        }
    }

    /// Its resourceVersion, as a revision.
    pub fn revision(&self) -> Option<u64> {
        match &self.form {
            Form::Decoded(object) => revision(object),
            Form::Encoded(encoded) => encoded.revision,
        }
    }

    /// The labels, in key order.
    pub fn labels(&self) -> Vec<(&str, &str)> {
        match &self.form {
            Form::Decoded(object) => {
                let labels = object.metadata().labels.iter().flatten();
                labels.map(|(k, v)| (k.as_str(), v.as_str())).collect()
            }
            Form::Encoded(encoded) => {
                let labels = encoded.labels.iter();
                labels.map(|(k, v)| (&**k, &**v)).collect()
            }
        }
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
            return convert(&*self.object()?).map(Cached::new);
        }
        let mut served = self.served.lock().unwrap_or_else(PoisonError::into_inner);
        let this = Arc::as_ptr(&kind.ops);
        if let Some(kept) = served
            .iter()
            .find(|kept| std::ptr::addr_eq(kept.kind.as_ptr(), this))
        {
            return kept.object.clone();
        }
        let object = self
            .object()
            .and_then(|object| convert(&object))
            .map(Cached::new);
        served.retain(|kept| kept.kind.strong_count() > 0);
        served.push(Served {
            kind: Arc::downgrade(&kind.ops),
            object: object.clone(),
        });
        object
    }

    /// The object's JSON, written once.
    pub fn json(&self) -> Result<&Bytes, String> {
        let json = self.json.get_or_init(|| match &self.form {
            Form::Decoded(object) => object.to_json().map(kept),
            // Written when the object was kept.
            Form::Encoded(_) => Err("the cached object lost its JSON".to_owned()),
        });
        json.as_ref().map_err(Clone::clone)
    }

    /// The object's protobuf message (`entry` is its kind), encoded once.
    /// `None` when the kind has no message.
    pub fn message(&self, entry: &KindEntry) -> Option<Result<&Bytes, String>> {
        let codec = entry.proto?;
        let message = self.message.get_or_init(|| {
            let object = self.object()?;
            codec.encode(object.typed()).map(kept)
        });
        Some(message.as_ref().map_err(Clone::clone))
    }

    /// A JSON watch frame: `head`, the object's JSON, `tail`. When the
    /// object has no JSON kept yet, the JSON it keeps is this frame's slice of
    /// it: the event's frame and the lists and gets that send the object share
    /// one buffer.
    pub fn json_frame(&self, head: &[&[u8]], tail: &[u8]) -> Result<Bytes, String> {
        if let Some(json) = self.json.get() {
            let json = json.as_ref().map_err(Clone::clone)?;
            let write = |out: &mut Vec<u8>| {
                out.extend_from_slice(json);
                Ok(())
            };
            return framed(head, tail, Some(json.len()), write).map(|(frame, _)| frame);
        }
        let Form::Decoded(object) = &self.form else {
            return Err("the cached object lost its JSON".to_owned());
        };
        match framed(head, tail, None, |out| object.write_json(out)) {
            Ok((frame, json)) => {
                let _ = self.json.set(Ok(json));
                Ok(frame)
            }
            Err(e) => {
                let _ = self.json.set(Err(e.clone()));
                Err(e)
            }
        }
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
        let message = match self.object().and_then(|o| codec.encode(o.typed())) {
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

/// An object's resourceVersion, as a revision.
fn revision(object: &Object) -> Option<u64> {
    object.metadata().resource_version.as_deref()?.parse().ok()
}

/// `head`, what `write` writes, `tail`, in one buffer; with the written part
/// as a slice of it. `size` is the written part's, when known.
fn framed(
    head: &[&[u8]],
    tail: &[u8],
    size: Option<usize>,
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), String>,
) -> Result<(Bytes, Bytes), String> {
    let head_len = head.iter().map(|part| part.len()).sum::<usize>();
    let mut out = Vec::with_capacity(head_len + tail.len() + size.unwrap_or(1024));
    head.iter().for_each(|part| out.extend_from_slice(part));
    write(&mut out)?;
    let end = out.len();
    out.extend_from_slice(tail);
    let frame = kept(out);
    let part = frame.slice(head_len..end);
    Ok((frame, part))
}

impl Selectable for Cached {
    fn label(&self, key: &str) -> Option<&str> {
        match &self.form {
            Form::Decoded(object) => object.label(key),
            Form::Encoded(encoded) => {
                let labels = &encoded.labels;
                let at = labels.binary_search_by(|(k, _)| (**k).cmp(key)).ok()?;
                Some(&labels[at].1)
            }
        }
    }

    fn field_text(&self, field: &str) -> Option<String> {
        match &self.form {
            Form::Decoded(object) => object.field_text(field),
            Form::Encoded(encoded) => {
                let at = fields(encoded.kind.info).position(|f| f == field)?;
                encoded.fields.get(at)?.as_deref().map(str::to_owned)
            }
        }
    }

    fn object(&self) -> Option<Cow<'_, Object>> {
        match Cached::object(self) {
            Ok(ObjectRef::Kept(object)) => Some(Cow::Borrowed(object)),
            Ok(ObjectRef::Decoded(object)) => {
                // Taken when no other reader holds it.
                let object = Arc::try_unwrap(object).unwrap_or_else(|shared| (*shared).clone());
                Some(Cow::Owned(object))
            }
            Err(_) => None,
        }
    }
}

/// The parts of an event's JSON watch frame around its object:
/// `{"type":"<type_>","object":` and `}` with the line's end.
pub fn json_frame_parts(type_: &str) -> ([&[u8]; 3], &'static [u8]) {
    let head: [&[u8]; 3] = [b"{\"type\":\"", type_.as_bytes(), b"\",\"object\":"];
    (head, b"}\n")
}

/// An encoding kept as long as its object: without the spare capacity its
/// buffer grew with (up to half of it).
fn kept(mut bytes: Vec<u8>) -> Bytes {
    bytes.shrink_to_fit();
    Bytes::from(bytes)
}

impl Serialize for Cached {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let object = self.object().map_err(serde::ser::Error::custom)?;
        object.serialize(s)
    }
}

impl std::fmt::Debug for Cached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.form {
            Form::Decoded(object) => object.fmt(f),
            Form::Encoded(_) => match self.json() {
                Ok(json) => write!(f, "{}", String::from_utf8_lossy(json)),
                Err(e) => write!(f, "<{e}>"),
            },
        }
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
        Event::with_frame(key, revision, type_, (object, None), prev)
    }

    /// An event that just happened, with its JSON frame when it is made
    /// already.
    pub fn with_frame(
        key: Arc<str>,
        revision: u64,
        type_: EventType,
        (object, json_frame): (Arc<Cached>, Option<Bytes>),
        prev: Option<Arc<Cached>>,
    ) -> Arc<Event> {
        Arc::new(Event {
            key,
            revision,
            type_,
            object,
            prev,
            at: Instant::now(),
            json_frame: json_frame.map(OnceLock::from).unwrap_or_default(),
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
