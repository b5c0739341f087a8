//! The checks apiextensions-apiserver makes of a CustomResourceDefinition's
//! schemas and printer columns, with its internal field paths: a schema, or
//! the printer columns, that every version shares is checked once as
//! `spec.validation.openAPIV3Schema` or `spec.additionalPrinterColumns`
//! (upstream converts a v1 definition to its internal version, which holds
//! shared values at the top), a per-version one under `spec.versions[i]`.
//!
//! Schemas must be structural (`ValidateStructural`): every node has a type
//! (unless it is int-or-string or keeps unknown fields), arrays have items,
//! the root is an object whose metadata names only `name` and
//! `generateName`, and so on; its errors are sorted by their text, as
//! upstream sorts them.

use kapi_runtime::validation::{FieldErrors, FieldPath};

use super::customresourcedefinition::{
    CustomResourceColumnDefinition, CustomResourceDefinitionSpec,
};
use super::json_schema::JSONSchemaProps;

/// Where a schema node sits, which decides some messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Checks the schemas and printer columns of `spec` (at `spec`).
pub(crate) fn validate_versions(
    spec: &CustomResourceDefinitionSpec,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    let versions = &spec.versions;
    let shared = |get: &dyn Fn(usize) -> bool| (0..versions.len()).all(get);
    let schemas_shared = !versions.is_empty()
        && shared(&|i| versions[i].schema == versions[0].schema)
        && versions[0].schema.is_some();
    let columns = |i: usize| {
        versions[i]
            .additional_printer_columns
            .as_deref()
            .unwrap_or_default()
    };
    let columns_shared = !versions.is_empty() && shared(&|i| columns(i) == columns(0));
    for (i, version) in versions.iter().enumerate() {
        let at = path.child("versions").index(i);
        let schema = version
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref());
        match schema {
            None => errs.required(
                at.child("schema").child("openAPIV3Schema"),
                "schemas are required",
            ),
            Some(schema) if !schemas_shared => {
                structural(schema, &at.child("schema").child("openAPIV3Schema"), errs);
            }
            Some(_) => {}
        }
        if !columns_shared {
            for (j, column) in columns(i).iter().enumerate() {
                let column_path = at.child("additionalPrinterColumns").index(j);
                printer_column(column, &column_path, errs);
            }
        }
    }
    if schemas_shared
        && let Some(schema) = versions[0]
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
    {
        structural(
            schema,
            &path.child("validation").child("openAPIV3Schema"),
            errs,
        );
    }
    if columns_shared {
        for (j, column) in columns(0).iter().enumerate() {
            printer_column(
                column,
                &path.child("additionalPrinterColumns").index(j),
                errs,
            );
        }
    }
}

/// `ValidateCustomResourceColumnDefinition`.
fn printer_column(
    column: &CustomResourceColumnDefinition,
    path: &FieldPath,
    errs: &mut FieldErrors,
) {
    const TYPES: &str = "boolean,date,integer,number,string";
    const FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";
    if column.name.is_empty() {
        errs.required(path.child("name"), "");
    }
    let type_detail = format!("must be one of {TYPES}");
    if column.type_.is_empty() {
        errs.required(path.child("type"), &type_detail);
    } else if !TYPES.split(',').any(|t| t == column.type_) {
        errs.invalid(path.child("type"), &column.type_, &type_detail);
    }
    if let Some(format) = column.format.as_deref().filter(|f| !f.is_empty())
        && !FORMATS.split(',').any(|f| f == format)
    {
        errs.invalid(
            path.child("format"),
            format,
            &format!("must be one of {FORMATS}"),
        );
    }
    if column.json_path.is_empty() {
        errs.required(path.child("JSONPath"), "");
    } else if !column.json_path.starts_with('.') {
        errs.invalid(
            path.child("JSONPath"),
            &column.json_path,
            "must be a simple json path starting with .",
        );
    }
}

/// `ValidateStructural` of the schema at `path`, its errors sorted by text.
fn structural(schema: &JSONSchemaProps, path: &FieldPath, errs: &mut FieldErrors) {
    let mut found = FieldErrors::default();
    node(schema, Level::Root, path, &mut found);
    found.0.sort_by_key(ToString::to_string);
    errs.extend(found);
}

fn node(s: &JSONSchemaProps, level: Level, path: &FieldPath, errs: &mut FieldErrors) {
    let flag = |v: Option<bool>| v.unwrap_or(false);
    let type_ = s.type_.as_deref().unwrap_or_default();
    let int_or_string = flag(s.x_kubernetes_int_or_string);
    let preserve = flag(s.x_kubernetes_preserve_unknown_fields);
    let embedded = flag(s.x_kubernetes_embedded_resource);
    if type_ == "array" && s.items.as_ref().and_then(|i| i.schema.as_ref()).is_none() {
        errs.required(path.child("items"), "must be specified");
    }
    let additional = s
        .additional_properties
        .as_ref()
        .and_then(|a| a.schema.as_deref());
    if level == Level::Root && s.additional_properties.is_some() {
        errs.forbidden(
            path.child("additionalProperties"),
            "must not be used at the root",
        );
    }
    if int_or_string && preserve {
        errs.invalid(
            path.child("x-kubernetes-preserve-unknown-fields"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        );
    }
    if int_or_string && embedded {
        errs.invalid(
            path.child("x-kubernetes-embedded-resource"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        );
    }
    let embedded_detail = "must be object if x-kubernetes-embedded-resource is true";
    if embedded && type_.is_empty() {
        errs.required(path.child("type"), embedded_detail);
    } else if embedded && type_ != "object" {
        errs.invalid(path.child("type"), type_, embedded_detail);
    } else if type_.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.required(path.child("type"), detail);
    }
    if embedded && additional.is_some() {
        errs.forbidden(
            path.child("additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        );
    }
    if level == Level::Root && !type_.is_empty() && type_ != "object" {
        errs.invalid(path.child("type"), type_, "must be object at the root");
    }
    let properties = s.properties.as_ref();
    if level == Level::Root || embedded {
        let typed = |name: &str, want: &str, errs: &mut FieldErrors| {
            if let Some(p) = properties.and_then(|p| p.get(name))
                && p.type_.as_deref().unwrap_or_default() != want
            {
                let at = path.child(&format!("properties[{name}]")).child("type");
                errs.invalid(
                    at,
                    p.type_.as_deref().unwrap_or_default(),
                    &format!("must be {want}"),
                );
            }
        };
        typed("kind", "string", errs);
        typed("apiVersion", "string", errs);
        typed("metadata", "object", errs);
    }
    if level == Level::Root
        && let Some(metadata) = properties.and_then(|p| p.get("metadata"))
        && !metadata_only_names(metadata)
    {
        errs.forbidden(
            path.child("properties[metadata]"),
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        );
    }
    if embedded && !preserve && properties.is_none_or(|p| p.is_empty()) {
        errs.required(
            path.child("properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        );
    }
    if properties.is_some_and(|p| !p.is_empty()) && additional.is_some() {
        errs.forbidden(
            path.child("additionalProperties"),
            "additionalProperties and properties are mutual exclusive",
        );
    }
    if let Some(items) = s.items.as_ref().and_then(|i| i.schema.as_deref()) {
        node(items, Level::Item, &path.child("items"), errs);
    }
    for (name, property) in properties.into_iter().flatten() {
        node(
            property,
            Level::Field,
            &path.child(&format!("properties[{name}]")),
            errs,
        );
    }
    if let Some(additional) = additional {
        node(
            additional,
            Level::Field,
            &path.child("additionalProperties"),
            errs,
        );
    }
}

/// Whether a root `metadata` schema says nothing but its type and the
/// `name`/`generateName` properties (and their defaults aside).
fn metadata_only_names(metadata: &JSONSchemaProps) -> bool {
    let mut rest = metadata.clone();
    if let Some(properties) = rest.properties.as_mut() {
        properties.remove("name");
        properties.remove("generateName");
        if properties.is_empty() {
            rest.properties = None;
        }
    }
    rest.type_ = None;
    rest.default = None;
    rest == JSONSchemaProps::default()
}
