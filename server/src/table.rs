//! meta.k8s.io/v1 Table responses for `kubectl get`: NAME, the kind's printer
//! columns, and AGE (last, unless the kind places its own Age column), with rows
//! carrying PartialObjectMetadata as upstream's default `includeObject`.

use jiff::Timestamp;
use kapi_runtime::meta::human_duration;
use kapi_runtime::meta::{ListMeta, Table, TableColumnDefinition, TableRow};
use kapi_runtime::scheme::KindEntry;
use kapi_runtime::{PrinterColumn, ResourceInfo};
use serde_json::{Value, json};

use crate::body::Object;
use crate::jsonpath::lookup;

/// What a row's `object` holds (`includeObject`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IncludeObject {
    /// Nothing.
    None,
    /// PartialObjectMetadata (the default).
    #[default]
    Metadata,
    /// The whole object.
    Object,
}

impl IncludeObject {
    /// Parses the query parameter.
    pub fn parse(text: Option<&str>) -> Result<IncludeObject, String> {
        match text {
            None | Some("") | Some("Metadata") => Ok(IncludeObject::Metadata),
            Some("None") => Ok(IncludeObject::None),
            Some("Object") => Ok(IncludeObject::Object),
            Some(other) => Err(format!(
                "includeObject: Unsupported value: {other:?}: supported values: \"None\", \"Metadata\", \"Object\""
            )),
        }
    }
}

/// The age column of a kind's table (and of a CRD emitted for it).
pub(crate) const AGE: PrinterColumn = PrinterColumn {
    name: "Age",
    type_: "date",
    format: "",
    description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
    priority: 0,
    json_path: ".metadata.creationTimestamp",
};

/// Builds a Table of `objects`.
pub fn table(
    entry: &KindEntry,
    objects: &[&Object],
    meta: ListMeta,
    include: IncludeObject,
    no_headers: bool,
) -> Table {
    let printed = printed_as(entry);
    let columns = columns(printed);
    let mut definitions = vec![TableColumnDefinition {
        name: "Name".into(),
        type_: "string".into(),
        format: "name".into(),
        description: "Name must be unique within a namespace.".into(),
        priority: 0,
    }];
    definitions.extend(columns.iter().map(|c| TableColumnDefinition {
        name: c.name.into(),
        type_: c.type_.into(),
        format: c.format.into(),
        description: c.description.into(),
        priority: c.priority,
    }));
    let now = Timestamp::now();
    let rows = objects
        .iter()
        .map(|o| row(entry, printed, &columns, o, include, now))
        .collect();
    Table {
        kind: "Table".into(),
        api_version: "meta.k8s.io/v1".into(),
        metadata: meta,
        column_definitions: if no_headers { Vec::new() } else { definitions },
        rows,
    }
}

/// The version whose printer columns and cells a Table of `entry` shows: its
/// hub when it is served through one and declares no columns of its own
/// (upstream prints a built-in kind's every version from its internal
/// object); itself otherwise, as a custom resource's version prints.
pub fn printed_as(entry: &KindEntry) -> &'static ResourceInfo {
    match entry.hub() {
        Some(hub) if entry.info.printer_columns.is_empty() && !entry.is_custom() => hub,
        _ => entry.info,
    }
}

fn columns(info: &ResourceInfo) -> Vec<PrinterColumn> {
    let mut columns = info.printer_columns.to_vec();
    if info.age_column && !columns.iter().any(|c| c.name.eq_ignore_ascii_case("age")) {
        columns.push(AGE);
    }
    columns
}

fn row(
    entry: &KindEntry,
    printed: &ResourceInfo,
    columns: &[PrinterColumn],
    given: &Object,
    include: IncludeObject,
    now: Timestamp,
) -> TableRow {
    // The cells come from the object as its printed version holds it, and the
    // embedded object is the served version (the registry may hand over
    // objects in either: stored ones print without a lossy round trip).
    let print_as = converted(entry, given, printed);
    let embed_as = converted(entry, given, entry.info);
    let object = print_as.as_ref().unwrap_or(given);
    let embedded = embed_as.as_ref().unwrap_or(given);
    // The JSON form, built only if a column path or includeObject=Object needs
    // it (cells computed by the kind and the age come from the typed object).
    let json = std::cell::OnceCell::new();
    let value = || json.get_or_init(|| object.to_value().unwrap_or(Value::Null));
    let own = printed.printer_columns.len();
    let mut computed = object.typed().table_cells().unwrap_or_default().into_iter();
    let mut cells = vec![Value::String(object.metadata().name().to_owned())];
    for (i, column) in columns.iter().enumerate() {
        let raw = match computed.next().filter(|_| i < own) {
            Some(cell) => cell,
            None if column.json_path == AGE.json_path => {
                serde_json::to_value(object.metadata().creation_timestamp).unwrap_or(Value::Null)
            }
            None => lookup(value(), column.json_path),
        };
        cells.push(if column.type_ == "date" {
            age(&raw, now)
        } else {
            raw
        });
    }
    let object = match include {
        IncludeObject::None => None,
        IncludeObject::Metadata => Some(partial_metadata(embedded)),
        IncludeObject::Object if std::ptr::eq(object, embedded) => Some(value().clone()),
        IncludeObject::Object => Some(embedded.to_value().unwrap_or(Value::Null)),
    };
    TableRow { cells, object }
}

/// `object` as the version `want` (the served one or its hub), when it is the
/// other of the two; `None` when it already is `want` or cannot be converted.
fn converted(entry: &KindEntry, object: &Object, want: &ResourceInfo) -> Option<Object> {
    let hub = entry.hub()?;
    let have = object.typed().info();
    if std::ptr::eq(have, want) || have == want {
        return None;
    }
    let typed = object.clone().into_typed();
    let out = if std::ptr::eq(want, hub) {
        entry.to_hub(typed)
    } else {
        entry.to_served(typed)
    };
    out.ok().map(Object::new)
}

/// PartialObjectMetadata of an object.
pub fn partial_metadata(object: &Object) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": object.metadata(),
    })
}

/// A timestamp cell as the age kubectl shows (upstream's HumanDuration).
fn age(cell: &Value, now: Timestamp) -> Value {
    let Some(ts) = cell.as_str().and_then(|s| s.parse::<Timestamp>().ok()) else {
        return if cell.is_null() {
            Value::String("<unknown>".into())
        } else {
            cell.clone()
        };
    };
    let seconds = now.as_second() - ts.as_second();
    Value::String(human_duration(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_like_kubectl() {
        assert_eq!(human_duration(5), "5s");
        assert_eq!(human_duration(119), "119s");
        assert_eq!(human_duration(150), "2m30s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(3 * 3600 + 60 * 5), "3h5m");
        assert_eq!(human_duration(30 * 3600), "30h");
        assert_eq!(human_duration(3 * 86400 + 3600), "3d1h");
        assert_eq!(human_duration(100 * 86400), "100d");
        assert_eq!(human_duration(-5), "<invalid>");
    }
}
