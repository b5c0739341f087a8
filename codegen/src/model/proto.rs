//! The protobuf side of an `ApiType` struct: field numbers, checked for range and
//! duplicates, how each field travels (Go's pointer/value distinction), and Go
//! structs embedded inline that protobuf nests as messages of their own.

use proc_macro2::Span;
use syn::{Ident, LitInt, Type};

use crate::parse::ProtoEmbedAttr;

/// The protobuf message of a struct whose fields carry `#[api(proto = N)]`.
pub struct ProtoModel {
    /// The message name (the struct's name unless `proto_name` says otherwise).
    pub name: String,
    /// The fields and embedded messages, in field-number order (Go writes them in
    /// that order).
    pub entries: Vec<ProtoEntry>,
}

/// One field of the message. (Both variants live only while the derive runs;
/// boxing the larger one would buy nothing.)
#[allow(clippy::large_enum_variant)]
pub enum ProtoEntry {
    /// A struct field.
    Field(ProtoField),
    /// A nested message made of some of the struct's fields (a Go inline struct).
    Embed(ProtoEmbed),
}

impl ProtoEntry {
    fn number(&self) -> u32 {
        match self {
            ProtoEntry::Field(f) => f.number,
            ProtoEntry::Embed(e) => e.number,
        }
    }
}

/// A Go struct embedded inline, carried as a nested message.
pub struct ProtoEmbed {
    /// Field name in the `.proto`, e.g. `volumeSource`.
    pub name: String,
    /// Field number.
    pub number: u32,
    /// Message name, e.g. `VolumeSource`.
    pub message: String,
    /// The struct fields inside it, in field-number order.
    pub fields: Vec<ProtoField>,
}

/// One numbered struct field.
pub struct ProtoField {
    /// Rust name.
    pub ident: Ident,
    /// Name in the `.proto` (the JSON name).
    pub name: String,
    /// Field number.
    pub number: u32,
    /// How `Option` is treated.
    pub mode: ProtoMode,
    /// The Rust type.
    pub ty: Type,
}

/// How a field's Rust type maps to Go's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtoMode {
    /// Not an `Option`: written always, as Go writes non-pointer fields.
    Plain,
    /// An `Option<T>` that JSON writes as Go writes a pointer (left out with
    /// `Option::is_none`, or `null`): written only when set.
    Pointer,
    /// An `Option<T>` serialized with `skip_serializing_if = "omitempty"`, or
    /// marked `proto_value`: a Go value whose zero value means unset; written
    /// always, zero read back as None.
    Value,
}

/// The protobuf facts of one field, before the struct-wide checks.
pub struct FieldProto {
    /// The number, if declared.
    pub number: Option<(u32, Span)>,
    /// `proto_skip`.
    pub skip: bool,
    /// `proto_in = "..."`: the embedded message the number counts in.
    pub embed: Option<(String, Span)>,
    /// `proto_name = "..."`: the name in the `.proto`, if not the JSON name.
    pub name: Option<String>,
    /// How `Option` is treated.
    pub mode: ProtoMode,
    /// The Rust type.
    pub ty: Type,
}

/// Highest field number protobuf allows.
const MAX_NUMBER: u32 = (1 << 29) - 1;

/// Reads `proto = N`.
pub fn number(lit: &LitInt) -> darling::Result<(u32, Span)> {
    let n: u32 = lit.base10_parse().map_err(|_| {
        darling::Error::custom("a protobuf field number is a positive integer").with_span(lit)
    })?;
    if n == 0 || n > MAX_NUMBER || (19000..=19999).contains(&n) {
        return Err(darling::Error::custom(format!(
            "protobuf field numbers are 1 to {MAX_NUMBER}, without the reserved 19000-19999"
        ))
        .with_span(lit));
    }
    Ok((n, lit.span()))
}

/// The mode of a field of type `ty` with `skip_serializing_if = skip_if` and
/// `proto_value` (`value`).
pub fn mode(ty: &Type, skip_if: Option<&str>, value: bool) -> ProtoMode {
    if super::api_type::option_inner(ty).is_none() {
        return ProtoMode::Plain;
    }
    match skip_if {
        _ if value => ProtoMode::Value,
        Some(path) if path.ends_with("omitempty") => ProtoMode::Value,
        _ => ProtoMode::Pointer,
    }
}

/// Builds the message from the fields (Rust name, JSON name, facts), or `None`
/// when no field has a number (the struct is JSON-only). Every other field must
/// have a number or `proto_skip`, and numbers must be unique at each level.
pub fn message(
    struct_ident: &Ident,
    name: Option<String>,
    embeds: &[ProtoEmbedAttr],
    fields: &[(Ident, String, FieldProto)],
) -> darling::Result<Option<ProtoModel>> {
    if name.is_none() && embeds.is_empty() && fields.iter().all(|(_, _, p)| p.number.is_none()) {
        return Ok(None);
    }
    let mut errors = darling::Error::accumulator();
    let mut entries = Vec::new();
    let mut nested: Vec<(ProtoEmbed, Span)> = Vec::new();
    for attr in embeds {
        if let Some((number, span)) = errors.handle(number(&attr.number)) {
            let embed = ProtoEmbed {
                name: attr.field.value(),
                number,
                message: attr.message.value(),
                fields: Vec::new(),
            };
            nested.push((embed, span));
        }
    }
    for (ident, json, proto) in fields {
        let Some(field) = errors.handle(numbered(ident, json, proto)) else {
            continue;
        };
        let Some(field) = field else { continue };
        match &proto.embed {
            None => entries.push(ProtoEntry::Field(field)),
            Some((embed, span)) => match nested.iter_mut().find(|(e, _)| &e.name == embed) {
                Some((e, _)) => e.fields.push(field),
                None => errors.push(
                    darling::Error::custom(format!(
                        "no `proto_embed(field = \"{embed}\", ...)` on the struct"
                    ))
                    .with_span(span),
                ),
            },
        }
    }
    for (mut embed, span) in nested {
        if embed.fields.is_empty() {
            let msg = format!("no field has `proto_in = \"{}\"`", embed.name);
            errors.push(darling::Error::custom(msg).with_span(&span));
        }
        check_unique(
            embed.fields.iter().map(|f| (f.number, &f.ident)),
            &mut errors,
        );
        embed.fields.sort_by_key(|f| f.number);
        entries.push(ProtoEntry::Embed(embed));
    }
    check_unique(
        entries.iter().map(|e| match e {
            ProtoEntry::Field(f) => (f.number, &f.ident),
            ProtoEntry::Embed(e) => (e.number, struct_ident),
        }),
        &mut errors,
    );
    entries.sort_by_key(ProtoEntry::number);
    errors.finish_with(Some(ProtoModel {
        name: name.unwrap_or_else(|| struct_ident.to_string()),
        entries,
    }))
}

/// The numbered field, `None` for `proto_skip`, or the error of a field without.
fn numbered(ident: &Ident, json: &str, proto: &FieldProto) -> darling::Result<Option<ProtoField>> {
    match (proto.number, proto.skip) {
        (Some((n, _)), false) => Ok(Some(ProtoField {
            ident: ident.clone(),
            name: proto.name.clone().unwrap_or_else(|| json.to_owned()),
            number: n,
            mode: proto.mode,
            ty: proto.ty.clone(),
        })),
        (Some((_, span)), true) => Err(darling::Error::custom(
            "a field cannot have both `proto = N` and `proto_skip`",
        )
        .with_span(&span)),
        (None, true) => Ok(None),
        (None, false) => Err(darling::Error::custom(format!(
            "`{ident}` has no protobuf field number: every field of a protobuf message needs \
             #[api(proto = N)] (or #[api(proto_skip)] if it has no counterpart), otherwise it \
             would be dropped silently"
        ))
        .with_span(ident)),
    }
}

/// Reports every number used twice at one level, at the second user.
fn check_unique<'a>(
    numbers: impl Iterator<Item = (u32, &'a Ident)>,
    errors: &mut darling::error::Accumulator,
) {
    let mut seen: Vec<(u32, &Ident)> = Vec::new();
    for (n, ident) in numbers {
        if let Some((_, first)) = seen.iter().find(|(m, _)| *m == n) {
            errors.push(
                darling::Error::custom(format!(
                    "protobuf field number {n} is already used by `{first}`"
                ))
                .with_span(ident),
            );
        }
        seen.push((n, ident));
    }
}
