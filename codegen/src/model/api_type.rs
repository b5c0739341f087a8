use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Ident, Lit, LitFloat, LitStr, Type};

use super::naming::camel_case;
use super::proto::{self, FieldProto, ProtoModel};
use crate::parse::{ApiField, ApiInput, SerdeContainer, SerdeField, SignedLit, StrList};

/// A struct deriving `ApiType`.
pub struct ApiTypeModel {
    /// The struct.
    pub ident: Ident,
    /// Its fields that appear on the wire, in order.
    pub fields: Vec<FieldModel>,
    /// `validate = path`: a check across fields, run after the field rules.
    pub validate: Option<syn::Path>,
    /// `defaults = path`: a defaulting hook, run before the field defaults.
    pub defaults: Option<syn::Path>,
    /// The protobuf message, when the fields carry numbers.
    pub proto: Option<ProtoModel>,
    /// The doc comment's lines (the schema's description).
    pub doc: Vec<String>,
    /// `x-kubernetes-map-type` of the struct itself.
    pub map_type: Option<String>,
    /// A hand-written schema function replacing the generated one.
    pub schema: Option<syn::Path>,
    /// The type's name in Kubernetes (its Go name: the protobuf message name
    /// when `proto_name` renames it, else the struct's name).
    pub schema_name: String,
    /// Whether the struct is a kind (it also derives `Resource`): its objects
    /// carry `apiVersion` and `kind`, embedded ones too.
    pub is_kind: bool,
}

/// One wire field and its rules.
pub struct FieldModel {
    /// Rust name.
    pub ident: Ident,
    /// JSON name (empty for a flattened field).
    pub json_name: String,
    /// Declarative validation rules, in attribute order.
    pub rules: Vec<SpannedRule>,
    /// The default for an unset `Option` field.
    pub default: Option<DefaultValue>,
    /// Protobuf number and mode.
    pub proto: FieldProto,
    /// Merge and patch semantics, published as `x-kubernetes-*` schema extensions.
    pub merge: MergeModel,
    /// The doc comment's lines (the property's description).
    pub doc: Vec<String>,
    /// The field's Rust type.
    pub ty: Type,
    /// Listed among the schema's required properties (`required` or
    /// `schema_required`).
    pub schema_required: bool,
}

/// How a field merges under server-side apply and strategic merge patch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeModel {
    /// `x-kubernetes-list-type`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<String>,
    /// `x-kubernetes-patch-strategy`.
    pub patch_strategy: Option<String>,
    /// `x-kubernetes-patch-merge-key`.
    pub patch_merge_key: Option<String>,
}

/// A rule and the span of the attribute that asked for it: a type error in the
/// generated call (a `minimum` on a `String`) points there, not at the derive.
pub struct SpannedRule {
    /// The rule.
    pub rule: Rule,
    /// The attribute's value (or key, for `required`).
    pub span: Span,
}

/// The default of an unset `Option` field.
pub struct DefaultValue {
    /// The literal, retyped where needed (`1` becomes `1.0` for a float field).
    pub lit: SignedLit,
    /// Whether the literal goes through `Into` (`"TCP"` into a `String`). A number
    /// for a primitive field does not, so that `8080` types as the field's `u32`
    /// (there is no `From<i32> for u32`).
    pub into: bool,
}

/// One declarative validation rule.
pub enum Rule {
    /// Must be set and non-empty; listed among the schema's required properties.
    Required,
    /// Must be set and non-empty, though the schema lists it as optional (a
    /// field Kubernetes validates as required on write, like a container's image).
    NotEmpty,
    /// RFC 1123 label.
    Dns1123Label,
    /// RFC 1123 subdomain.
    Dns1123Subdomain,
    /// One of these values.
    OneOf(Vec<String>),
    /// At least this number.
    Minimum(f64),
    /// At most this number.
    Maximum(f64),
}

impl ApiTypeModel {
    /// Builds and checks the model, collecting every error.
    pub fn from_input(input: ApiInput) -> darling::Result<ApiTypeModel> {
        let mut errors = darling::Error::accumulator();
        if !input.generics.params.is_empty() {
            errors.push(
                darling::Error::custom("ApiType cannot be derived for generic structs")
                    .with_span(&input.generics),
            );
        }
        let container = errors
            .handle(SerdeContainer::parse(&input.attrs).map_err(darling::Error::from))
            .unwrap_or_default();
        let fields = input
            .data
            .take_struct()
            .map(|f| f.fields)
            .unwrap_or_default();
        let mut models = Vec::new();
        for field in fields {
            if let Some(model) = errors.handle(field_model(field, &container)) {
                models.extend(model);
            }
        }
        let numbered: Vec<_> = models
            .iter()
            .map(|f| {
                let proto = FieldProto {
                    number: f.proto.number,
                    skip: f.proto.skip,
                    embed: f.proto.embed.clone(),
                    name: f.proto.name.clone(),
                    mode: f.proto.mode,
                    ty: f.proto.ty.clone(),
                };
                (f.ident.clone(), f.json_name.clone(), proto)
            })
            .collect();
        let proto_name = input.proto_name.as_ref().map(syn::LitStr::value);
        let proto = errors
            .handle(proto::message(
                &input.ident,
                proto_name,
                &input.proto_embed,
                &numbered,
            ))
            .flatten();
        let schema_name = input
            .proto_name
            .as_ref()
            .map_or_else(|| input.ident.to_string(), syn::LitStr::value);
        let map_type = input.map_type.as_ref().map(|lit| {
            let value = lit.value();
            if !["atomic", "granular"].contains(&value.as_str()) {
                errors.push(
                    darling::Error::custom(format!(
                        "unknown value `{value}`; expected one of \"atomic\", \"granular\""
                    ))
                    .with_span(lit),
                );
            }
            value
        });
        let is_kind = input.attrs.iter().any(|a| a.path().is_ident("resource"));
        errors.finish_with(ApiTypeModel {
            is_kind,
            map_type,
            schema: input.schema,
            doc: crate::parse::doc_lines(&input.attrs),
            schema_name,
            ident: input.ident,
            fields: models,
            validate: input.validate,
            defaults: input.defaults,
            proto,
        })
    }
}

fn field_model(field: ApiField, container: &SerdeContainer) -> darling::Result<Option<FieldModel>> {
    let serde = SerdeField::parse(&field.attrs)?;
    let Some(ident) = field.ident.clone() else {
        return Err(darling::Error::custom("ApiType needs named fields").with_span(&field.ty));
    };
    if serde.skip {
        return Ok(None);
    }
    let json_name = match (&serde.rename, serde.flatten) {
        (_, true) => String::new(),
        (Some(name), false) => name.clone(),
        (None, false) if container.camel_case => camel_case(&ident.to_string()),
        (None, false) => ident.to_string().trim_start_matches("r#").to_owned(),
    };
    let mut errors = darling::Error::accumulator();
    let rules = errors.handle(rules(&field)).unwrap_or_default();
    let proto = FieldProto {
        number: field
            .proto
            .as_ref()
            .and_then(|lit| errors.handle(proto::number(lit))),
        skip: field.proto_skip.is_present(),
        embed: field.proto_in.as_ref().map(|l| (l.value(), l.span())),
        name: field.proto_name.as_ref().map(syn::LitStr::value),
        mode: proto::mode(
            &field.ty,
            serde.skip_serializing_if.as_deref(),
            field.proto_value.is_present(),
        ),
        ty: field.ty.clone(),
    };
    let default = field
        .default
        .as_ref()
        .and_then(|lit| match option_inner(&field.ty) {
            Some(inner) => Some(default_value(lit, inner)),
            None => {
                let msg = "`default` needs an Option<_> field: a plain field is never unset";
                errors.push(darling::Error::custom(msg).with_span(lit));
                None
            }
        });
    let merge = errors.handle(merge(&field)).unwrap_or_default();
    errors.finish_with(Some(FieldModel {
        schema_required: field.required.is_present() || field.schema_required.is_present(),
        doc: crate::parse::doc_lines(&field.attrs),
        ty: field.ty.clone(),
        ident,
        json_name,
        rules,
        default,
        proto,
        merge,
    }))
}

/// Checks the merge attributes: known values only, and keys only on map lists.
fn merge(field: &ApiField) -> darling::Result<MergeModel> {
    let mut errors = darling::Error::accumulator();
    let one_of =
        |lit: &Option<LitStr>, allowed: &[&str], errors: &mut darling::error::Accumulator| {
            let lit = lit.as_ref()?;
            let value = lit.value();
            if !allowed.contains(&value.as_str()) {
                let expected: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                errors.push(
                    darling::Error::custom(format!(
                        "unknown value `{value}`; expected one of {}",
                        expected.join(", ")
                    ))
                    .with_span(lit),
                );
            }
            Some(value)
        };
    let list_type = one_of(&field.list_type, &["atomic", "set", "map"], &mut errors);
    let map_type = one_of(&field.map_type, &["atomic", "granular"], &mut errors);
    let patch_strategy = one_of(
        &field.patch_strategy,
        &["merge", "retainKeys", "merge,retainKeys", "replace"],
        &mut errors,
    );
    let list_map_keys = field
        .list_map_keys
        .as_ref()
        .map(StrList::values)
        .unwrap_or_default();
    match (&list_type, &field.list_map_keys) {
        (Some(t), None) if t == "map" => errors.push(
            darling::Error::custom("`list_type = \"map\"` needs `list_map_keys(\"...\")`")
                .with_span(&field.list_type),
        ),
        (t, Some(keys)) if t.as_deref() != Some("map") => errors.push(
            darling::Error::custom("`list_map_keys` needs `list_type = \"map\"`")
                .with_span(&keys.span.unwrap_or_else(|| field.ty.span())),
        ),
        _ => {}
    }
    errors.finish_with(MergeModel {
        list_type,
        list_map_keys,
        map_type,
        patch_strategy,
        patch_merge_key: field.patch_merge_key.as_ref().map(LitStr::value),
    })
}

/// How a default literal is written for a field of type `Option<inner>`.
fn default_value(lit: &SignedLit, inner: &Type) -> DefaultValue {
    let number = primitive_number(inner);
    match (&lit.lit, number) {
        (Lit::Int(i), Some(Number::Float)) if i.suffix().is_empty() => {
            let float = LitFloat::new(&format!("{}.0", i.base10_digits()), i.span());
            DefaultValue {
                lit: SignedLit {
                    minus: lit.minus,
                    lit: Lit::Float(float),
                },
                into: false,
            }
        }
        (Lit::Int(_) | Lit::Float(_), Some(_)) => DefaultValue {
            lit: lit.clone(),
            into: false,
        },
        _ => DefaultValue {
            lit: lit.clone(),
            into: true,
        },
    }
}

fn rules(field: &ApiField) -> darling::Result<Vec<SpannedRule>> {
    let mut errors = darling::Error::accumulator();
    let mut rules = Vec::new();
    let mut push = |rule, span| rules.push(SpannedRule { rule, span });
    if field.required.is_present() {
        push(Rule::Required, field.required.span());
    }
    if field.not_empty.is_present() {
        push(Rule::NotEmpty, field.not_empty.span());
    }
    if let Some(format) = &field.format {
        match format.value().as_str() {
            "dns1123-label" => push(Rule::Dns1123Label, format.span()),
            "dns1123-subdomain" => push(Rule::Dns1123Subdomain, format.span()),
            other => errors.push(
                darling::Error::custom(format!(
                    "unknown format `{other}`; expected \"dns1123-label\" or \"dns1123-subdomain\""
                ))
                .with_span(format),
            ),
        }
    }
    if let Some(values) = &field.one_of {
        if values.items.is_empty() {
            let span = values.span.unwrap_or_else(|| field.ty.span());
            errors.push(
                darling::Error::custom(
                    "`one_of` needs at least one value, e.g. one_of(\"A\", \"B\")",
                )
                .with_span(&span),
            );
        }
        push(
            Rule::OneOf(values.values()),
            values.span.unwrap_or_else(|| field.ty.span()),
        );
    }
    if let Some(min) = &field.minimum
        && let Some(n) = errors.handle(number(min, "minimum = 1"))
    {
        push(Rule::Minimum(n), min.span());
    }
    if let Some(max) = &field.maximum
        && let Some(n) = errors.handle(number(max, "maximum = 65535"))
    {
        push(Rule::Maximum(n), max.span());
    }
    errors.finish_with(rules)
}

/// The value of a `minimum`/`maximum` bound; `example` shows the key in the error.
fn number(value: &SignedLit, example: &str) -> darling::Result<f64> {
    let parsed = match &value.lit {
        Lit::Int(i) => i.base10_parse::<i64>().map(|v| v as f64),
        Lit::Float(f) => f.base10_parse::<f64>(),
        other => {
            let msg = format!("expected a number, e.g. `{example}`");
            return Err(darling::Error::custom(msg).with_span(other));
        }
    };
    let n = parsed.map_err(darling::Error::from)?;
    Ok(if value.minus.is_some() { -n } else { n })
}

/// `T` of an `Option<T>` field (however the path to `Option` is spelled).
pub(super) fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last().filter(|s| s.ident == "Option")?;
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) => match args.args.first() {
            Some(syn::GenericArgument::Type(inner)) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// The primitive number types, which a numeric literal types as directly.
enum Number {
    Int,
    Float,
}

fn primitive_number(ty: &Type) -> Option<Number> {
    let Type::Path(p) = ty else { return None };
    let ident = p.path.get_ident()?.to_string();
    match ident.as_str() {
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => Some(Number::Int),
        "f32" | "f64" => Some(Number::Float),
        _ => None,
    }
}
