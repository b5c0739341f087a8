use std::fmt;

/// A JSON field path as Kubernetes prints it: `spec.containers[0].ports[1].name`,
/// `metadata.labels[app]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(String);

impl FieldPath {
    /// The path of the object itself.
    pub fn root() -> FieldPath {
        FieldPath(String::new())
    }

    /// A path starting at a top-level field.
    pub fn new(field: &str) -> FieldPath {
        FieldPath(field.to_owned())
    }

    /// The path of a field below this one.
    ///
    /// Validation walks every field of an object, so the paths are joined by
    /// hand rather than through `format!`'s machinery.
    pub fn child(&self, field: &str) -> FieldPath {
        if self.0.is_empty() {
            FieldPath(field.to_owned())
        } else {
            self.joined(&[".", field])
        }
    }

    /// The path of a list element.
    pub fn index(&self, i: usize) -> FieldPath {
        let mut buf = [0u8; 20];
        self.joined(&["[", decimal(i, &mut buf), "]"])
    }

    /// The path of a map entry.
    pub fn key(&self, k: &str) -> FieldPath {
        self.joined(&["[", k, "]"])
    }

    /// This path with `parts` appended, in one allocation.
    fn joined(&self, parts: &[&str]) -> FieldPath {
        let len = self.0.len() + parts.iter().map(|p| p.len()).sum::<usize>();
        let mut path = String::with_capacity(len);
        path.push_str(&self.0);
        for part in parts {
            path.push_str(part);
        }
        FieldPath(path)
    }

    /// The path as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// `n` in decimal, written into `buf` (20 digits hold any `usize`).
fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &str {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[start..]).unwrap_or("")
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The kinds of field error, with the `reason` Kubernetes puts in a StatusCause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// A required field is missing.
    Required,
    /// A value has the wrong format or range.
    Invalid,
    /// A value has the wrong type (a schema's `type` or `format`).
    TypeInvalid,
    /// A value outside an enumeration.
    NotSupported,
    /// A field that may not be set (or changed).
    Forbidden,
    /// A value repeated where it must be unique.
    Duplicate,
    /// A value longer than allowed.
    TooLong,
    /// A list with more items than allowed.
    TooMany,
    /// A reference to something that does not exist (a volume mount naming no
    /// volume of the pod).
    NotFound,
}

impl FieldErrorKind {
    /// The StatusCause reason, e.g. `FieldValueInvalid`.
    pub fn reason(self) -> &'static str {
        match self {
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Invalid => "FieldValueInvalid",
            FieldErrorKind::TypeInvalid => "FieldValueTypeInvalid",
            FieldErrorKind::NotSupported => "FieldValueNotSupported",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
            FieldErrorKind::Duplicate => "FieldValueDuplicate",
            FieldErrorKind::TooLong => "FieldValueTooLong",
            FieldErrorKind::TooMany => "FieldValueTooMany",
            FieldErrorKind::NotFound => "FieldValueNotFound",
        }
    }
}

/// One validation error of one field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// What is wrong.
    pub kind: FieldErrorKind,
    /// Where.
    pub path: FieldPath,
    /// The message without the path, as in a StatusCause: `Invalid value: "x": ...`.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// The errors found while validating one object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldErrors(pub Vec<FieldError>);

impl FieldErrors {
    /// Whether no error was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Required value` (with an optional detail).
    pub fn required(&mut self, path: FieldPath, detail: &str) {
        let message = if detail.is_empty() {
            "Required value".to_owned()
        } else {
            format!("Required value: {detail}")
        };
        self.push(FieldErrorKind::Required, path, message);
    }

    /// `Invalid value: <value>: <detail>`; `value` is printed as JSON.
    pub fn invalid(&mut self, path: FieldPath, value: impl fmt::Debug, detail: &str) {
        self.push(
            FieldErrorKind::Invalid,
            path,
            format!("Invalid value: {value:?}: {detail}"),
        );
    }

    /// `Invalid value: <value>: <detail>` of the wrong type (reason
    /// `FieldValueTypeInvalid`); `value` is printed as JSON.
    pub fn type_invalid(&mut self, path: FieldPath, value: impl fmt::Debug, detail: &str) {
        self.push(
            FieldErrorKind::TypeInvalid,
            path,
            format!("Invalid value: {value:?}: {detail}"),
        );
    }

    /// `Invalid value: <detail>`: an invalid field whose value upstream leaves
    /// out of the message (Go's `field.OmitValueType`).
    pub fn invalid_without_value(&mut self, path: FieldPath, detail: &str) {
        self.push(
            FieldErrorKind::Invalid,
            path,
            format!("Invalid value: {detail}"),
        );
    }

    /// `Unsupported value: "x": supported values: "a", "b"`.
    pub fn not_supported(&mut self, path: FieldPath, value: &str, allowed: &[&str]) {
        let allowed: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        let message = format!(
            "Unsupported value: {value:?}: supported values: {}",
            allowed.join(", ")
        );
        self.push(FieldErrorKind::NotSupported, path, message);
    }

    /// `Forbidden: <detail>`.
    pub fn forbidden(&mut self, path: FieldPath, detail: &str) {
        self.push(
            FieldErrorKind::Forbidden,
            path,
            format!("Forbidden: {detail}"),
        );
    }

    /// `Duplicate value: <value>`.
    pub fn duplicate(&mut self, path: FieldPath, value: impl fmt::Debug) {
        self.push(
            FieldErrorKind::Duplicate,
            path,
            format!("Duplicate value: {value:?}"),
        );
    }

    /// `Too long: may not be more than N bytes`.
    pub fn too_long(&mut self, path: FieldPath, max: usize) {
        let message = format!("Too long: may not be more than {max} bytes");
        self.push(FieldErrorKind::TooLong, path, message);
    }

    /// `Too many: N: must have at most M items`.
    pub fn too_many(&mut self, path: FieldPath, actual: usize, max: usize) {
        let items = if max == 1 { "item" } else { "items" };
        let message = format!("Too many: {actual}: must have at most {max} {items}");
        self.push(FieldErrorKind::TooMany, path, message);
    }

    /// `Not found: <value>`.
    pub fn not_found(&mut self, path: FieldPath, value: impl fmt::Debug) {
        self.push(
            FieldErrorKind::NotFound,
            path,
            format!("Not found: {value:?}"),
        );
    }

    /// `Unsupported value: <value>: supported values: ...` for a value that is
    /// not a string (printed as Go's `%#v` would, by its `Debug`).
    pub fn not_supported_value(
        &mut self,
        path: FieldPath,
        value: impl fmt::Debug,
        allowed: &[&str],
    ) {
        let allowed: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
        let message = format!(
            "Unsupported value: {value:?}: supported values: {}",
            allowed.join(", ")
        );
        self.push(FieldErrorKind::NotSupported, path, message);
    }

    /// `Unsupported value: ...` with the allowed values sorted, as Go's callers
    /// that pass `sets.List(...)` print them.
    pub fn not_supported_sorted(&mut self, path: FieldPath, value: &str, allowed: &[&str]) {
        let mut sorted = allowed.to_vec();
        sorted.sort_unstable();
        self.not_supported(path, value, &sorted);
    }

    /// Appends the errors of another validation.
    pub fn extend(&mut self, other: FieldErrors) {
        self.0.extend(other.0);
    }

    fn push(&mut self, kind: FieldErrorKind, path: FieldPath, message: String) {
        self.0.push(FieldError {
            kind,
            path,
            message,
        });
    }

    /// The aggregate message Kubernetes puts after `<Kind> "<name>" is invalid: `.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        if parts.len() == 1 {
            parts.concat()
        } else {
            format!("[{}]", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod path_tests {
    use super::FieldPath;

    #[test]
    fn paths_join_fields_indexes_and_keys() {
        let containers = FieldPath::root().child("spec").child("containers");
        assert_eq!(
            containers.index(0).child("name").as_str(),
            "spec.containers[0].name"
        );
        assert_eq!(
            containers.index(1234567).as_str(),
            "spec.containers[1234567]"
        );
        assert_eq!(
            FieldPath::new("metadata")
                .child("labels")
                .key("app")
                .as_str(),
            "metadata.labels[app]"
        );
        assert_eq!(
            FieldPath::root().index(usize::MAX).as_str(),
            format!("[{}]", usize::MAX)
        );
    }
}
