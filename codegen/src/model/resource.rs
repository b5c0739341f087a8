use syn::{Ident, LitStr};

use super::naming::pluralize;
use crate::parse::{PrinterColumnAttr, ResourceInput, SubresourceAttr};

/// A struct deriving `Resource`, checked.
pub struct ResourceModel {
    /// The struct.
    pub ident: Ident,
    /// API group (`""` for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Singular resource name.
    pub singular: String,
    /// The key prefix in the store.
    pub storage_prefix: String,
    /// Stored as JSON whatever the storage media type.
    pub storage_json: bool,
    /// Short names.
    pub short_names: Vec<String>,
    /// The hub version's type, when this version is not the hub.
    pub hub: Option<syn::Path>,
    /// The `StoredForm` static, when objects are stored in another version.
    pub stored_as: Option<syn::Path>,
    /// The verbs served, in Kubernetes' (alphabetical) order.
    pub verbs: Vec<String>,
    /// Categories.
    pub categories: Vec<String>,
    /// Namespaced (true) or cluster-scoped.
    pub namespaced: bool,
    /// Has a `/status` subresource.
    pub status: bool,
    /// A delete answers with the deleted object.
    pub return_deleted_object: bool,
    /// A delete without a propagation policy orphans the dependents.
    pub orphan_dependents: bool,
    /// `metadata.generation` is set and bumped on spec changes.
    pub tracks_generation: bool,
    /// The fields writes through the object and through `/status` reset.
    pub reset_main: Vec<String>,
    pub reset_status: Vec<String>,
    /// Whether the Table ends with an AGE column.
    pub age_column: bool,
    /// The `/scale` paths: desired replicas, observed replicas, selector.
    pub scale: Option<(String, String, String)>,
    /// The `NameFormat` variant validating object names.
    pub name_format: NameFormat,
    /// Extra selectable fields.
    pub selectable_fields: Vec<String>,
    /// Selectable fields the watch cache indexes.
    pub indexed_fields: Vec<String>,
    /// Printer columns in order.
    pub printer_columns: Vec<PrinterColumn>,
    /// The kind has a protobuf message (its fields carry `#[api(proto = N)]`).
    pub protobuf: bool,
    /// Hook functions.
    pub hooks: Hooks,
    /// Subresources besides `status` and `scale`, in name order.
    pub subresources: Vec<SubresourceModel>,
    /// The fields besides `metadata` (and `status`, for a kind with a `/status`
    /// subresource): the desired state, whose changes bump `metadata.generation`.
    pub spec_fields: Vec<Ident>,
}

/// One printer column.
pub struct PrinterColumn {
    /// Header.
    pub name: String,
    /// OpenAPI type.
    pub type_: String,
    /// Format.
    pub format: String,
    /// Description.
    pub description: String,
    /// Priority.
    pub priority: i32,
    /// JSON path.
    pub json_path: String,
}

/// How object names are validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameFormat {
    /// RFC 1123 subdomain (most kinds).
    Dns1123Subdomain,
    /// RFC 1123 label (Namespace).
    Dns1123Label,
    /// RFC 1035 label (Service).
    Dns1035Label,
    /// One URL path segment (core Event).
    PathSegment,
}

/// A subresource besides `status` and `scale`.
pub struct SubresourceModel {
    /// Path segment.
    pub name: String,
    /// Verbs, in Kubernetes' order.
    pub verbs: Vec<String>,
    /// Group, version and kind of an action's body.
    pub body: Option<(String, String, String)>,
    /// `fn(&mut Self, &Self)` of a part of the object.
    pub prepare_update: Option<syn::Path>,
    /// `fn(&Self, &Self, &FieldPath, &mut FieldErrors)`.
    pub validate_update: Option<syn::Path>,
}

/// The kind's hook functions.
#[derive(Default)]
pub struct Hooks {
    /// `fn(&mut Self)` before every write.
    pub prepare: Option<syn::Path>,
    /// `fn(&mut Self)` after the generic PrepareForCreate.
    pub prepare_create: Option<syn::Path>,
    /// `fn(&mut Self, &Self)` after the generic PrepareForUpdate.
    pub prepare_update: Option<syn::Path>,
    /// `fn(&mut Self, &Self)` for writes through `/status`.
    pub prepare_status_update: Option<syn::Path>,
    /// `fn(&Self, &Self, &FieldPath, &mut FieldErrors)` on updates.
    pub validate_update: Option<syn::Path>,
    /// `fn(&mut Self)` answering a create of a kind never stored.
    pub answer: Option<syn::Path>,
    /// `fn(&Self, Option<&Self>) -> Vec<String>`.
    pub warnings: Option<syn::Path>,
    /// `fn(&Self) -> Vec<serde_json::Value>`.
    pub table_cells: Option<syn::Path>,
    /// `fn(&Self, Option<i64>) -> Option<i64>`.
    pub grace_period: Option<syn::Path>,
    /// `fn(&Self, &str) -> Option<String>`.
    pub field_label: Option<syn::Path>,
    /// `fn(&Hub, Option<&Hub>, &mut FieldErrors)` for writes through this
    /// version (`Hub` is `Self` for a kind's hub version).
    pub validate_served: Option<syn::Path>,
}

/// Every verb a kind can serve, in the order Kubernetes lists them.
const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

const COLUMN_TYPES: &[&str] = &["string", "integer", "number", "boolean", "date"];

impl ResourceModel {
    /// Builds and checks the model, collecting every error.
    pub fn from_input(input: ResourceInput) -> darling::Result<ResourceModel> {
        let mut errors = darling::Error::accumulator();
        if !input.generics.params.is_empty() {
            errors.push(
                darling::Error::custom("Resource cannot be derived for generic structs")
                    .with_span(&input.generics),
            );
        }
        let fields: Vec<Ident> = input
            .data
            .as_ref()
            .take_struct()
            .map(|f| f.fields.iter().filter_map(|f| f.ident.clone()).collect())
            .unwrap_or_default();
        let spec_fields: Vec<Ident> = fields
            .iter()
            .filter(|i| *i != "metadata" && !(*i == "status" && input.status.is_present()))
            .cloned()
            .collect();
        let protobuf = input
            .data
            .as_ref()
            .take_struct()
            .is_some_and(|f| f.fields.iter().any(|f| f.has_proto()));
        if !fields.iter().any(|f| f == "metadata") {
            errors.push(
                darling::Error::custom("a Resource needs a `metadata: ObjectMeta` field")
                    .with_span(&input.ident),
            );
        }
        if input.status.is_present() && !fields.iter().any(|f| f == "status") {
            errors.push(
                darling::Error::custom(
                    "`status` subresource declared but the struct has no `status` field",
                )
                .with_span(&input.status.span()),
            );
        }
        if input.namespaced.is_present() && input.cluster_scoped.is_present() {
            errors.push(
                darling::Error::custom(
                    "a kind is either `namespaced` or `cluster_scoped`, not both",
                )
                .with_span(&input.cluster_scoped.span()),
            );
        }
        // Without a span: expand() points these at the `#[resource(...)]` attribute.
        if input.group.is_none() {
            errors.push(darling::Error::custom("missing `group = \"...\"`: a DNS subdomain such as \"example.com\", or \"\" for the core group"));
        }
        if input.version.is_none() {
            errors.push(darling::Error::custom(
                "missing `version = \"...\"`, e.g. version = \"v1\"",
            ));
        }
        if let Some(version) = &input.version {
            check(
                &mut errors,
                version,
                is_version,
                "version must look like v1, v2beta1 or v1alpha3",
            );
        }
        if let Some(group) = &input.group {
            check(
                &mut errors,
                group,
                |g| g.is_empty() || is_dns_subdomain(g),
                "group must be empty (core) or a DNS subdomain such as apps or example.com",
            );
        }
        let kind = input
            .kind
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_else(|| input.ident.to_string());
        if let Some(lit) = &input.kind {
            check(
                &mut errors,
                lit,
                is_kind,
                "kind must be CamelCase ASCII starting with an upper-case letter",
            );
        }
        let singular = input
            .singular
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_else(|| kind.to_lowercase());
        let plural = input
            .plural
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_else(|| pluralize(&singular));
        let group = input.group.as_ref().map(LitStr::value).unwrap_or_default();
        let storage_prefix = match &input.storage_prefix {
            Some(lit) => {
                check(
                    &mut errors,
                    lit,
                    is_storage_prefix,
                    "a storage prefix is path segments of lower-case ASCII letters, digits, \
                     dots and dashes, without a leading or trailing slash",
                );
                lit.value()
            }
            None if group.is_empty() => plural.clone(),
            None => format!("{group}/{plural}"),
        };
        for lit in [&input.plural, &input.singular].into_iter().flatten() {
            check(
                &mut errors,
                lit,
                is_lower_name,
                "resource names are lower-case ASCII letters and digits",
            );
        }
        let printer_columns = input
            .printer_column
            .iter()
            .filter_map(|c| errors.handle(column(c)))
            .collect();
        let name_format = match input.name_format.as_ref().map(|f| (f, f.value())) {
            None => NameFormat::Dns1123Subdomain,
            Some((_, v)) if v == "dns1123-subdomain" => NameFormat::Dns1123Subdomain,
            Some((_, v)) if v == "dns1123-label" => NameFormat::Dns1123Label,
            Some((_, v)) if v == "dns1035-label" => NameFormat::Dns1035Label,
            Some((_, v)) if v == "path-segment" => NameFormat::PathSegment,
            Some((lit, v)) => {
                let msg = format!(
                    "unknown name_format `{v}`; expected \"dns1123-subdomain\", \"dns1123-label\", \"dns1035-label\" or \"path-segment\""
                );
                errors.push(darling::Error::custom(msg).with_span(lit));
                NameFormat::Dns1123Subdomain
            }
        };
        let verbs = match &input.verbs {
            None => VERBS.iter().map(|v| (*v).to_owned()).collect(),
            Some(list) => {
                let given = list.values();
                for lit in &list.items {
                    let v = lit.value();
                    if !VERBS.contains(&v.as_str()) {
                        let msg = format!("unknown verb `{v}`; expected some of {VERBS:?}");
                        errors.push(darling::Error::custom(msg).with_span(lit));
                    }
                }
                VERBS
                    .iter()
                    .filter(|v| given.iter().any(|g| g == *v))
                    .map(|v| (*v).to_owned())
                    .collect()
            }
        };
        if let Some(hook) = &input.prepare_status_update
            && !input.status.is_present()
        {
            errors.push(
                darling::Error::custom("`prepare_status_update` needs the `status` subresource")
                    .with_span(hook),
            );
        }
        let own_group = input.group.as_ref().map(LitStr::value).unwrap_or_default();
        let own_version = input
            .version
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_default();
        let (own_group, own_version) = (own_group.as_str(), own_version.as_str());
        let mut subresources: Vec<SubresourceModel> = input
            .subresource
            .iter()
            .filter_map(|s| errors.handle(subresource(s, own_group, own_version)))
            .collect();
        subresources.sort_by(|a, b| a.name.cmp(&b.name));
        let selectable = input.selectable_fields.values();
        for field in &input.indexed_fields.items {
            if !selectable.contains(&field.value()) {
                let msg = format!(
                    "indexed field `{}` must also be listed in `selectable_fields(..)`",
                    field.value()
                );
                errors.push(darling::Error::custom(msg).with_span(field));
            }
        }
        for pair in subresources.windows(2) {
            if pair[0].name == pair[1].name {
                let msg = format!("subresource `{}` is declared twice", pair[0].name);
                errors.push(darling::Error::custom(msg).with_span(&input.ident));
            }
        }
        errors.finish_with(ResourceModel {
            subresources,
            hub: input.hub,
            stored_as: input.stored_as,
            verbs,
            ident: input.ident,
            group,
            version: input
                .version
                .as_ref()
                .map(LitStr::value)
                .unwrap_or_default(),
            kind,
            plural,
            singular,
            storage_prefix,
            storage_json: input.storage_json.is_present(),
            short_names: input.short_names.values(),
            categories: input.categories.values(),
            namespaced: !input.cluster_scoped.is_present(),
            status: input.status.is_present(),
            return_deleted_object: input.return_deleted_object.is_present(),
            orphan_dependents: input.orphan_dependents.is_present(),
            tracks_generation: input.generation.as_ref().is_none_or(syn::LitBool::value),
            reset_main: match &input.reset_main {
                Some(paths) => paths_of(paths),
                None if input.status.is_present() => vec!["status".to_owned()],
                None => Vec::new(),
            },
            reset_status: match &input.reset_status {
                Some(paths) => paths_of(paths),
                None => vec!["spec".to_owned()],
            },
            age_column: input.age_column.as_ref().is_none_or(syn::LitBool::value),
            scale: input.scale.as_ref().map(|s| {
                (
                    s.spec_replicas.value(),
                    s.status_replicas.value(),
                    s.label_selector.value(),
                )
            }),
            name_format,
            selectable_fields: input.selectable_fields.values(),
            indexed_fields: input.indexed_fields.values(),
            printer_columns,
            protobuf,
            hooks: Hooks {
                prepare: input.prepare,
                prepare_create: input.prepare_create,
                prepare_update: input.prepare_update,
                prepare_status_update: input.prepare_status_update,
                validate_update: input.validate_update,
                answer: input.answer,
                warnings: input.warnings,
                table_cells: input.table_cells,
                grace_period: input.grace_period,
                field_label: input.field_label,
                validate_served: input.validate_served,
            },
            spec_fields,
        })
    }
}

fn subresource(
    attr: &SubresourceAttr,
    own_group: &str,
    own_version: &str,
) -> darling::Result<SubresourceModel> {
    let mut errors = darling::Error::accumulator();
    let name = attr.name.value();
    if name == "status" || name == "scale" {
        let msg = format!("`{name}` is declared with the `{name}` attribute, not as `subresource`");
        errors.push(darling::Error::custom(msg).with_span(&attr.name));
    }
    check(
        &mut errors,
        &attr.name,
        is_lower_name,
        "subresource names are lower-case ASCII letters and digits",
    );
    let action = attr.kind.is_some();
    // A part of the object is read and written; an action is posted to.
    let allowed: &[&str] = if action {
        &["create"]
    } else {
        &["get", "patch", "update"]
    };
    let verbs: Vec<String> = match &attr.verbs {
        None => allowed.iter().map(|v| (*v).to_owned()).collect(),
        Some(list) => {
            for lit in &list.items {
                let v = lit.value();
                if !allowed.contains(&v.as_str()) {
                    let what = if action {
                        "an action"
                    } else {
                        "a part of the object"
                    };
                    let msg = format!("`{v}` is no verb of {what}; expected some of {allowed:?}");
                    errors.push(darling::Error::custom(msg).with_span(lit));
                }
            }
            let given = list.values();
            allowed
                .iter()
                .filter(|v| given.iter().any(|g| g == *v))
                .map(|v| (*v).to_owned())
                .collect()
        }
    };
    if action {
        for hook in [&attr.prepare_update, &attr.validate_update]
            .into_iter()
            .flatten()
        {
            errors.push(
                darling::Error::custom(
                    "an action subresource (with `kind`) is implemented by the server; it takes no hooks",
                )
                .with_span(hook),
            );
        }
    } else {
        if attr.group.is_some() || attr.version.is_some() {
            errors.push(
                darling::Error::custom(
                    "`group` and `version` describe an action's body: add `kind`",
                )
                .with_span(&attr.name),
            );
        }
        let writes = verbs.iter().any(|v| v == "update" || v == "patch");
        if writes && attr.prepare_update.is_none() {
            errors.push(
                darling::Error::custom(
                    "a subresource writing a part of the object needs `prepare_update = path` (what such a write may change)",
                )
                .with_span(&attr.name),
            );
        }
    }
    if let Some(kind) = &attr.kind {
        check(
            &mut errors,
            kind,
            is_kind,
            "kind must be CamelCase ASCII starting with an upper-case letter",
        );
    }
    let body = attr.kind.as_ref().map(|kind| {
        (
            attr.group
                .as_ref()
                .map_or_else(|| own_group.to_owned(), LitStr::value),
            attr.version
                .as_ref()
                .map_or_else(|| own_version.to_owned(), LitStr::value),
            kind.value(),
        )
    });
    errors.finish_with(SubresourceModel {
        name,
        verbs,
        body,
        prepare_update: attr.prepare_update.clone(),
        validate_update: attr.validate_update.clone(),
    })
}

fn column(attr: &PrinterColumnAttr) -> darling::Result<PrinterColumn> {
    let type_ = attr.type_.value();
    if !COLUMN_TYPES.contains(&type_.as_str()) {
        let msg = format!(
            "unknown column type `{type_}`; expected one of {}",
            COLUMN_TYPES.join(", ")
        );
        return Err(darling::Error::custom(msg).with_span(&attr.type_));
    }
    let json_path = attr.json_path.value();
    if !json_path.starts_with('.') {
        let msg = "json_path must start with `.`, e.g. \".spec.replicas\"";
        return Err(darling::Error::custom(msg).with_span(&attr.json_path));
    }
    let priority = match &attr.priority {
        Some(p) => p.base10_parse::<i32>()?,
        None => 0,
    };
    Ok(PrinterColumn {
        name: attr.name.value(),
        type_,
        format: attr.format.as_ref().map(LitStr::value).unwrap_or_default(),
        description: attr
            .description
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_default(),
        priority,
        json_path,
    })
}

fn check(errors: &mut darling::error::Accumulator, lit: &LitStr, ok: fn(&str) -> bool, msg: &str) {
    if !ok(&lit.value()) {
        errors.push(darling::Error::custom(msg).with_span(lit));
    }
}

fn is_version(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else {
        return false;
    };
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (major, tail) = rest.split_at(digits);
    let tail_ok = tail.is_empty()
        || ["alpha", "beta"].iter().any(|p| {
            tail.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        });
    !major.is_empty() && !major.starts_with('0') && tail_ok
}

fn is_dns_subdomain(g: &str) -> bool {
    g.len() <= 253
        && g.split('.').all(|l| {
            !l.is_empty()
                && l.bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

fn is_kind(k: &str) -> bool {
    k.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && k.chars().all(|c| c.is_ascii_alphanumeric())
}

fn is_storage_prefix(p: &str) -> bool {
    p.split('/').all(|segment| {
        !segment.is_empty()
            && segment != "."
            && segment != ".."
            && segment
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
    })
}

fn is_lower_name(n: &str) -> bool {
    !n.is_empty()
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for ok in ["v1", "v2beta1", "v1alpha3", "v10"] {
            assert!(is_version(ok), "{ok}");
        }
        for bad in ["1", "v", "v0", "v1beta", "v1gamma1", "V1"] {
            assert!(!is_version(bad), "{bad}");
        }
    }
}

/// A comma-separated list of dotted paths.
fn paths_of(list: &LitStr) -> Vec<String> {
    list.value()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}
