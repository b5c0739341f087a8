//! Paths into an object's JSON form, as printer columns and the `/scale`
//! subresource name fields (`.spec.replicas`, `.status.conditions[0].type`).

use serde_json::Value;

/// Evaluates a kubectl-style path (`.spec.replicas`, `.status.conditions[0].type`).
pub fn lookup(value: &Value, path: &str) -> Value {
    let mut current = value;
    for part in path
        .trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
    {
        let (field, index) = match part.split_once('[') {
            Some((field, rest)) => (field, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        current = match current.get(field) {
            Some(v) => v,
            None => return Value::Null,
        };
        if let Some(i) = index {
            current = match current.get(i) {
                Some(v) => v,
                None => return Value::Null,
            };
        }
    }
    current.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths() {
        let v = json!({"spec": {"replicas": 3, "ports": [{"port": 80}]}});
        assert_eq!(lookup(&v, ".spec.replicas"), json!(3));
        assert_eq!(lookup(&v, ".spec.ports[0].port"), json!(80));
        assert_eq!(lookup(&v, ".spec.missing"), Value::Null);
    }
}
