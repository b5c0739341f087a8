//! `metadata.managedFields` <-> the engine's ownership map, as
//! k8s.io/apimachinery's managedfields package reads and writes it: one
//! entry per manager identifier (manager, operation, apiVersion for
//! updates, subresource), entries sorted by operation, time, manager,
//! apiVersion and subresource, and at most ten Update entries (the oldest
//! merged into `ancient-changes`).

use std::borrow::Cow;
use std::collections::HashMap;

use kapi_runtime::meta::{FieldsV1, ManagedFieldsEntry, Time};
use kapi_structured_merge::set::Set;
use kapi_structured_merge::updater::{ManagedFields, VersionedSet};
use serde::{Deserialize, Serialize};

/// `Apply` or `Update`.
pub const APPLY: &str = "Apply";
pub const UPDATE: &str = "Update";

/// The update entries kept before the oldest are merged.
const MAX_UPDATE_MANAGERS: usize = 10;

/// Who wrote: the key of the ownership map, as upstream builds it (the
/// JSON of an entry without its fields and time; an applier's without its
/// apiVersion, so that one applier has one entry whatever version it used).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ManagerId {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manager: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub operation: String,
    #[serde(
        default,
        rename = "apiVersion",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

impl ManagerId {
    /// The identifier of `manager` writing with `operation` in `api_version`
    /// through `subresource`.
    pub fn new(manager: &str, operation: &str, api_version: &str, subresource: &str) -> ManagerId {
        ManagerId {
            manager: if manager.is_empty() {
                "unknown"
            } else {
                manager
            }
            .to_owned(),
            operation: operation.to_owned(),
            api_version: if operation == APPLY {
                String::new()
            } else {
                api_version.to_owned()
            },
            subresource: subresource.to_owned(),
        }
    }

    /// The map key.
    pub fn key(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    fn from_key(key: &str) -> ManagerId {
        serde_json::from_str(key).unwrap_or_default()
    }
}

/// The ownership map of an object and each manager's time.
#[derive(Clone, Debug, Default)]
pub struct Managed {
    pub fields: ManagedFields,
    pub times: HashMap<String, Option<Time>>,
}

/// Reads managedFields; an entry upstream cannot read makes the whole list
/// unreadable (`DecodeManagedFields`).
pub fn decode(entries: &[ManagedFieldsEntry]) -> Result<Managed, String> {
    let mut managed = Managed::default();
    for (i, entry) in entries.iter().enumerate() {
        let operation = entry.operation.as_deref().unwrap_or_default();
        if operation != APPLY && operation != UPDATE {
            return Err("operation must be `Apply` or `Update`".into());
        }
        let api_version = entry.api_version.as_deref().unwrap_or_default();
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match entry.fields_type.as_deref().unwrap_or_default() {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => {
                return Err(format!(
                    "invalid fieldsType {other:?} in managed fields entry {i}"
                ));
            }
        }
        let set = match &entry.fields_v1 {
            Some(fields) if !fields.is_null() => Set::from_fields_v1(fields.text())?,
            _ => Set::new(),
        };
        let id = ManagerId {
            manager: entry.manager.clone().unwrap_or_default(),
            operation: operation.to_owned(),
            api_version: if operation == APPLY {
                String::new()
            } else {
                api_version.to_owned()
            },
            subresource: entry.subresource.clone().unwrap_or_default(),
        };
        let key = id.key();
        managed.times.insert(key.clone(), entry.time);
        managed.fields.insert(
            key,
            VersionedSet {
                set,
                api_version: api_version.to_owned(),
                applied: operation == APPLY,
            },
        );
    }
    Ok(managed)
}

/// Writes managedFields in upstream's order; None when nobody owns
/// anything.
pub fn encode(managed: &Managed) -> Option<Vec<ManagedFieldsEntry>> {
    if managed.fields.is_empty() {
        return None;
    }
    let mut entries: Vec<ManagedFieldsEntry> = managed
        .fields
        .iter()
        .map(|(key, owned)| {
            let id = ManagerId::from_key(key);
            let fields = FieldsV1::from_raw(owned.set.to_fields_v1().as_bytes()).ok();
            ManagedFieldsEntry {
                manager: Some(id.manager).filter(|m| !m.is_empty()),
                operation: Some(if owned.applied { APPLY } else { UPDATE }.to_owned()),
                api_version: Some(owned.api_version.clone()),
                time: managed.times.get(key).copied().flatten(),
                fields_type: Some("FieldsV1".into()),
                fields_v1: fields,
                subresource: Some(id.subresource).filter(|s| !s.is_empty()),
            }
        })
        .collect();
    entries.sort_by(|p, q| {
        let seconds = |e: &ManagedFieldsEntry| e.time.map_or(0, |t| t.0.as_second());
        p.operation
            .cmp(&q.operation)
            .then_with(|| seconds(p).cmp(&seconds(q)))
            .then_with(|| p.manager.cmp(&q.manager))
            .then_with(|| p.api_version.cmp(&q.api_version))
            .then_with(|| p.subresource.cmp(&q.subresource))
    });
    Some(entries)
}

/// Whether a client asked to clear managedFields: `[]` or `[{}]`.
pub fn is_reset(entries: Option<&Vec<ManagedFieldsEntry>>) -> bool {
    match entries.map(Vec::as_slice) {
        Some([]) => true,
        Some([only]) => *only == ManagedFieldsEntry::default(),
        _ => false,
    }
}

/// Keeps at most ten Update entries: the oldest of each version are merged
/// into one `ancient-changes` entry of that version (`capManagersManager`).
pub fn cap_update_managers(managed: &mut Managed) {
    let mut updaters: Vec<String> = managed
        .fields
        .iter()
        .filter(|(_, owned)| !owned.applied)
        .map(|(key, _)| key.clone())
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    let seconds = |key: &String| {
        managed
            .times
            .get(key)
            .copied()
            .flatten()
            .map_or(0, |t| t.0.as_second())
    };
    updaters.sort_by(|a, b| seconds(a).cmp(&seconds(b)).then_with(|| a.cmp(b)));
    let mut first_of_version: HashMap<String, String> = HashMap::new();
    let mut length = updaters.len();
    for manager in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(owned) = managed.fields.get(&manager).cloned() else {
            continue;
        };
        let time = managed.times.get(&manager).copied().flatten();
        let bucket = ManagerId::new("ancient-changes", UPDATE, &owned.api_version, "").key();
        match first_of_version.get(&owned.api_version) {
            Some(first) => {
                if !managed.fields.contains_key(&bucket)
                    && let Some(set) = managed.fields.remove(first)
                {
                    managed.times.remove(first);
                    managed.fields.insert(bucket.clone(), set);
                }
                if let Some(entry) = managed.fields.get_mut(&bucket) {
                    entry.set = owned.set.union(&entry.set);
                }
                managed.fields.remove(&manager);
                managed.times.remove(&manager);
                length -= 1;
                managed.times.insert(bucket, time);
            }
            None => {
                first_of_version.insert(owned.api_version.clone(), manager);
            }
        }
    }
}

/// The manager of a request without `fieldManager`: the User-Agent (its
/// bytes, invalid UTF-8 read as U+FFFD as Go reads it) up to its first
/// `/`, without unprintable characters, written while shorter than 128
/// bytes (`prefixFromUserAgent`). Borrowed in the usual case, a plain
/// ASCII product name.
pub fn manager_from_user_agent(user_agent: &[u8]) -> Cow<'_, str> {
    let prefix = match user_agent.iter().position(|&b| b == b'/') {
        Some(end) => &user_agent[..end],
        None => user_agent,
    };
    if prefix.len() <= 128 && prefix.iter().all(|&b| (b' '..=b'~').contains(&b)) {
        // Printable ASCII: valid UTF-8 as it is.
        return String::from_utf8_lossy(prefix);
    }
    let mut out = String::new();
    for c in String::from_utf8_lossy(prefix).chars() {
        if !is_print(c) {
            continue;
        }
        if out.len() >= 128 {
            break;
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// Go's `unicode.IsPrint` as far as Rust's character classes tell it:
/// no controls and no spaces but U+0020 (format characters such as
/// U+200B count as printable here).
fn is_print(c: char) -> bool {
    !c.is_control() && (c == ' ' || !c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_as_upstream_builds_them() {
        assert_eq!(
            ManagerId::new("kubectl-create", UPDATE, "apps/v1", "").key(),
            r#"{"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1"}"#
        );
        assert_eq!(
            ManagerId::new("kubectl", APPLY, "apps/v1", "status").key(),
            r#"{"manager":"kubectl","operation":"Apply","subresource":"status"}"#
        );
    }

    #[test]
    fn the_oldest_updaters_merge_into_ancient_changes() {
        let mut managed = Managed::default();
        for i in 0..12 {
            let key = ManagerId::new(&format!("m{i:02}"), UPDATE, "v1", "").key();
            let mut set = Set::new();
            set.insert(&[kapi_structured_merge::path::PathElement::field(&format!(
                "f{i}"
            ))]);
            let time = jiff::Timestamp::from_second(1_000 + i).unwrap();
            managed.times.insert(key.clone(), Some(Time(time)));
            managed.fields.insert(
                key,
                VersionedSet {
                    set,
                    api_version: "v1".into(),
                    applied: false,
                },
            );
        }
        cap_update_managers(&mut managed);
        let entries = encode(&managed).unwrap();
        assert_eq!(entries.len(), 10);
        // m00, m01 and m02 (the oldest) are one entry with the time of the
        // last merged.
        let ancient = entries
            .iter()
            .find(|e| e.manager.as_deref() == Some("ancient-changes"))
            .unwrap();
        assert_eq!(
            ancient.fields_v1.as_ref().unwrap().text(),
            r#"{"f:f0":{},"f:f1":{},"f:f2":{}}"#
        );
        assert_eq!(ancient.time.unwrap().0.as_second(), 1_002);
        assert!(!entries.iter().any(|e| e.manager.as_deref() == Some("m02")));
        assert!(entries.iter().any(|e| e.manager.as_deref() == Some("m03")));
    }

    #[test]
    fn user_agent_prefix() {
        assert_eq!(
            manager_from_user_agent(b"kubectl/v1.32.0 (linux/amd64) kubernetes/abc"),
            "kubectl"
        );
        assert_eq!(manager_from_user_agent(b""), "");
        // Unprintable characters are skipped, not the end of the name.
        assert_eq!(manager_from_user_agent(b"my\ttool\x7f x/1"), "mytool x");
        assert_eq!(
            manager_from_user_agent("caf\u{e9}\u{a0}\u{85}bar/2".as_bytes()),
            "caf\u{e9}bar"
        );
        assert_eq!(manager_from_user_agent(b"a\xffb"), "a\u{fffd}b");
        // Up to 128 bytes, the character that crosses them included.
        let long = format!("{}\u{e9}\u{e9}", "x".repeat(127));
        assert_eq!(
            manager_from_user_agent(long.as_bytes()),
            format!("{}\u{e9}", "x".repeat(127))
        );
    }
}
