use syn::{Ident, Lit, Type};

use super::naming::camel_case;
use crate::parse::{ApiField, ApiInput, SerdeContainer, SerdeField};

/// A struct deriving `ApiType`.
pub struct ApiTypeModel {
    /// The struct.
    pub ident: Ident,
    /// Its fields that appear on the wire, in order.
    pub fields: Vec<FieldModel>,
}

/// One wire field and its rules.
pub struct FieldModel {
    /// Rust name.
    pub ident: Ident,
    /// JSON name (empty for a flattened field).
    pub json_name: String,
    /// Declarative validation rules, in attribute order.
    pub rules: Vec<Rule>,
    /// The default for an unset `Option` field.
    pub default: Option<Lit>,
}

/// One declarative validation rule.
pub enum Rule {
    /// Must be set and non-empty.
    Required,
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
            errors.push(darling::Error::custom("ApiType cannot be derived for generic structs").with_span(&input.generics));
        }
        let container = errors.handle(SerdeContainer::parse(&input.attrs).map_err(darling::Error::from)).unwrap_or_default();
        let fields = input.data.take_struct().map(|f| f.fields).unwrap_or_default();
        let mut models = Vec::new();
        for field in fields {
            if let Some(model) = errors.handle(field_model(field, &container)) {
                models.extend(model);
            }
        }
        errors.finish_with(ApiTypeModel { ident: input.ident, fields: models })
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
    if let Some(default) = &field.default
        && !is_option(&field.ty)
    {
        errors.push(darling::Error::custom("`default` needs an Option<_> field: a plain field is never unset").with_span(default));
    }
    errors.finish_with(Some(FieldModel { ident, json_name, rules, default: field.default }))
}

fn rules(field: &ApiField) -> darling::Result<Vec<Rule>> {
    let mut errors = darling::Error::accumulator();
    let mut rules = Vec::new();
    if field.required.is_present() {
        rules.push(Rule::Required);
    }
    if let Some(format) = &field.format {
        match format.value().as_str() {
            "dns1123-label" => rules.push(Rule::Dns1123Label),
            "dns1123-subdomain" => rules.push(Rule::Dns1123Subdomain),
            other => errors.push(
                darling::Error::custom(format!(
                    "unknown format `{other}`; expected \"dns1123-label\" or \"dns1123-subdomain\""
                ))
                .with_span(format),
            ),
        }
    }
    if let Some(values) = &field.one_of {
        if values.0.is_empty() {
            errors.push(darling::Error::custom("`one_of` needs at least one value").with_span(&field.ty));
        }
        rules.push(Rule::OneOf(values.values()));
    }
    if let Some(min) = &field.minimum {
        errors.handle(number(min)).map(|n| rules.push(Rule::Minimum(n)));
    }
    if let Some(max) = &field.maximum {
        errors.handle(number(max)).map(|n| rules.push(Rule::Maximum(n)));
    }
    errors.finish_with(rules)
}

fn number(lit: &Lit) -> darling::Result<f64> {
    let parsed = match lit {
        Lit::Int(i) => i.base10_parse::<i64>().map(|v| v as f64),
        Lit::Float(f) => f.base10_parse::<f64>(),
        _ => return Err(darling::Error::custom("expected a number, e.g. `minimum = 1`").with_span(lit)),
    };
    parsed.map_err(darling::Error::from)
}

fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}
