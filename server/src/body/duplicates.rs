//! Keys that repeat within one JSON object of a body. Go's strict decoder
//! reports them (`duplicate field "metadata.name"`) where serde either fails
//! (struct fields) or keeps the last silently (maps); kube-apiserver keeps the
//! last value and reports the repeat under `fieldValidation`.
//!
//! One pass over the bytes, without building values: each object's keys are
//! compared as they appear in the body.

/// A key that repeats: where its repeat starts in the body, and its path
/// (`metadata.labels.a`, `spec.containers[0].name`).
#[derive(Debug, PartialEq, Eq)]
pub struct Duplicate {
    /// Offset of the repeated key.
    pub offset: usize,
    /// Dotted path of the key.
    pub path: String,
}

/// Deepest nesting looked into (hostile bodies do not exhaust the stack).
const MAX_DEPTH: usize = 128;

#[derive(Clone, Copy)]
enum Segment<'a> {
    Key(&'a [u8]),
    Index(usize),
}

struct Scanner<'a> {
    body: &'a [u8],
    pos: usize,
    path: Vec<Segment<'a>>,
    found: Vec<Duplicate>,
    /// Where each path first appears, when asked for.
    offsets: Option<Vec<(String, usize)>>,
}

/// The repeated keys of `body`, in document order.
pub fn duplicate_fields(body: &[u8]) -> Vec<Duplicate> {
    let mut scanner = Scanner::new(body, false);
    scanner.value();
    scanner.found
}

/// Where each key path first appears in `body` (to order other reports
/// about the body, such as unknown fields, among the duplicates).
pub fn key_offsets(body: &[u8]) -> Vec<(String, usize)> {
    let mut scanner = Scanner::new(body, true);
    scanner.value();
    scanner.offsets.unwrap_or_default()
}

impl<'a> Scanner<'a> {
    fn new(body: &'a [u8], offsets: bool) -> Scanner<'a> {
        Scanner {
            body,
            pos: 0,
            path: Vec::new(),
            found: Vec::new(),
            offsets: offsets.then(Vec::new),
        }
    }

    fn peek(&mut self) -> Option<u8> {
        while let Some(&c) = self.body.get(self.pos) {
            if c.is_ascii_whitespace() {
                self.pos += 1;
            } else {
                return Some(c);
            }
        }
        None
    }

    /// Skips one value; `false` when the body is malformed here (the decoder
    /// reports that).
    fn value(&mut self) -> bool {
        if self.path.len() > MAX_DEPTH {
            return false;
        }
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().is_some(),
            Some(_) => {
                while let Some(&c) = self.body.get(self.pos) {
                    if matches!(c, b',' | b'}' | b']') || c.is_ascii_whitespace() {
                        break;
                    }
                    self.pos += 1;
                }
                true
            }
            None => false,
        }
    }

    /// The raw bytes of a string (escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.pos + 1;
        let mut at = start;
        while let Some(&c) = self.body.get(at) {
            match c {
                b'\\' => at += 2,
                b'"' => {
                    self.pos = at + 1;
                    return self.body.get(start..at);
                }
                _ => at += 1,
            }
        }
        None
    }

    fn object(&mut self) -> bool {
        self.pos += 1;
        let mut keys: Vec<&'a [u8]> = Vec::new();
        loop {
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return true;
                }
                Some(b',') => self.pos += 1,
                Some(b'"') => {
                    let offset = self.pos;
                    let Some(key) = self.string() else {
                        return false;
                    };
                    if self.peek() != Some(b':') {
                        return false;
                    }
                    self.pos += 1;
                    self.path.push(Segment::Key(key));
                    if keys.contains(&key) {
                        let path = self.render();
                        self.found.push(Duplicate { offset, path });
                    } else {
                        keys.push(key);
                        if self.offsets.is_some() {
                            let path = self.render();
                            if let Some(offsets) = &mut self.offsets {
                                offsets.push((path, offset));
                            }
                        }
                    }
                    let ok = self.value();
                    self.path.pop();
                    if !ok {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self) -> bool {
        self.pos += 1;
        let mut index = 0;
        loop {
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return true;
                }
                Some(b',') => self.pos += 1,
                Some(_) => {
                    self.path.push(Segment::Index(index));
                    let ok = self.value();
                    self.path.pop();
                    if !ok {
                        return false;
                    }
                    index += 1;
                }
                None => return false,
            }
        }
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for segment in &self.path {
            match segment {
                Segment::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(&String::from_utf8_lossy(key));
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
}

/// The keys repeated within one mapping of a YAML body, as Go's YAML decoder
/// reports them: `line 5: key "name" already set in map`, in document order.
/// A body the parser cannot read reports nothing here (the decoder does).
pub fn yaml_duplicate_keys(text: &str) -> Vec<String> {
    use granit_parser::{Event, Parser};

    /// A mapping's keys so far, and whether its next node is a key.
    struct Mapping {
        keys: Vec<String>,
        key_next: bool,
    }
    let mut stack: Vec<Option<Mapping>> = Vec::new();
    let mut found = Vec::new();
    // A node ended in the innermost container: a mapping alternates keys
    // and values.
    let done = |stack: &mut Vec<Option<Mapping>>| {
        if let Some(Some(mapping)) = stack.last_mut() {
            mapping.key_next = !mapping.key_next;
        }
    };
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else {
            break;
        };
        match event {
            Event::Scalar(value, ..) => {
                if let Some(Some(mapping)) = stack.last_mut()
                    && mapping.key_next
                {
                    if mapping.keys.iter().any(|k| *k == value) {
                        found.push(format!(
                            "line {}: key {:?} already set in map",
                            span.start.line(),
                            value
                        ));
                    } else {
                        mapping.keys.push(value.into_owned());
                    }
                }
                done(&mut stack);
            }
            Event::Alias(_) => done(&mut stack),
            Event::MappingStart(..) => stack.push(Some(Mapping {
                keys: Vec::new(),
                key_next: true,
            })),
            Event::SequenceStart(..) => stack.push(None),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                done(&mut stack);
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(body: &str) -> Vec<String> {
        duplicate_fields(body.as_bytes())
            .into_iter()
            .map(|d| d.path)
            .collect()
    }

    #[test]
    fn repeats_in_structs_maps_and_lists() {
        let body = r#"{"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},
            "spec":{"containers":[{"name":"c"},{"name":"d","name":"e"}]},"data":{},"data":{}}"#;
        assert_eq!(
            paths(body),
            [
                "metadata.name",
                "metadata.labels.x",
                "spec.containers[1].name",
                "data"
            ]
        );
    }

    #[test]
    fn no_repeats_and_malformed_bodies() {
        assert!(paths(r#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#).is_empty());
        assert!(paths(r#"{"a":"\"","b":1}"#).is_empty());
        // A truncated body stops the scan without a panic.
        assert_eq!(paths(r#"{"a":1,"a""#), Vec::<String>::new());
        assert!(paths(&"[".repeat(10_000)).is_empty());
        assert!(paths("").is_empty());
    }

    #[test]
    fn yaml_repeats_with_their_lines() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  name: z\n  labels: {a: \"1\", a: \"2\"}\ndata:\n  - {k: 1}\n  - {k: 2}\n";
        assert_eq!(
            yaml_duplicate_keys(text),
            [
                "line 5: key \"name\" already set in map",
                "line 6: key \"a\" already set in map"
            ]
        );
        assert!(yaml_duplicate_keys("a: [1, 2]\nb: {c: 1}\n").is_empty());
        // Malformed YAML stops the scan without a panic.
        let _ = yaml_duplicate_keys(": : :\n  - [");
    }

    #[test]
    fn first_offsets_of_paths() {
        let body = r#"{"a":1,"b":{"c":2}}"#;
        let offsets = key_offsets(body.as_bytes());
        assert_eq!(
            offsets,
            [
                ("a".to_owned(), 1),
                ("b".to_owned(), 7),
                ("b.c".to_owned(), 12)
            ]
        );
    }
}
