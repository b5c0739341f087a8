//! Descriptors of generated messages: field names, numbers and wire shapes, so
//! that a test can compare every message with upstream's `.proto` definitions.

/// The type of a field as a `.proto` file spells it.
#[derive(Clone, Debug)]
pub enum Shape {
    /// `string`, `int32`, `int64`, `bool`, `bytes`.
    Scalar(&'static str),
    /// An embedded message: its name and its fields.
    Message(&'static str, fn() -> Vec<FieldDescriptor>),
    /// `repeated T`.
    Repeated(Box<Shape>),
    /// `map<K, V>`.
    Map(Box<Shape>, Box<Shape>),
}

impl Shape {
    /// The type as written in a `.proto` file (`repeated PodSpec`, `map<string, string>`).
    pub fn proto_type(&self) -> String {
        match self {
            Shape::Scalar(name) | Shape::Message(name, _) => (*name).to_owned(),
            Shape::Repeated(inner) => format!("repeated {}", inner.proto_type()),
            Shape::Map(k, v) => format!("map<{}, {}>", k.proto_type(), v.proto_type()),
        }
    }
}

/// One field of a message.
#[derive(Clone, Debug)]
pub struct FieldDescriptor {
    /// The field's name as upstream's `.proto` spells it (the JSON name).
    pub name: &'static str,
    /// The field number.
    pub number: u32,
    /// The field's type.
    pub shape: Shape,
}
