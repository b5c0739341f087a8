//! The FlowSchemas and PriorityLevelConfigurations every kube-apiserver 1.32
//! keeps (k8s.io/apiserver's bootstrap configuration): the mandatory
//! `exempt` and `catch-all` and the suggested rest, their specs as the
//! reference server stores them (defaults applied) in `bootstrap.json`.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

/// The annotation that says whether the server keeps an object's spec.
pub const AUTOUPDATE: &str = "apf.kubernetes.io/autoupdate-spec";

/// One bootstrap object.
#[derive(Clone, Debug, Deserialize)]
pub struct Object {
    /// Whether it is mandatory (recreated and reset always).
    pub mandatory: bool,
    /// Its name.
    pub name: String,
    /// Its spec.
    pub spec: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Lists {
    priority_level_configurations: Vec<Object>,
    flow_schemas: Vec<Object>,
}

fn lists() -> &'static Lists {
    static LISTS: OnceLock<Lists> = OnceLock::new();
    LISTS.get_or_init(|| {
        serde_json::from_str(include_str!("bootstrap.json")).unwrap_or(Lists {
            priority_level_configurations: Vec::new(),
            flow_schemas: Vec::new(),
        })
    })
}

/// The objects of `list` (`flowSchemas` or `priorityLevelConfigurations`).
pub fn objects(list: &str) -> Vec<Object> {
    match list {
        "flowSchemas" => lists().flow_schemas.clone(),
        "priorityLevelConfigurations" => lists().priority_level_configurations.clone(),
        _ => Vec::new(),
    }
}

/// Go's strconv.ParseBool.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_parses() {
        let levels = objects("priorityLevelConfigurations");
        let schemas = objects("flowSchemas");
        assert_eq!((levels.len(), schemas.len()), (8, 13));
        let mandatory: Vec<&str> = levels
            .iter()
            .chain(&schemas)
            .filter(|o| o.mandatory)
            .map(|o| o.name.as_str())
            .collect();
        assert_eq!(mandatory, ["catch-all", "exempt", "exempt", "catch-all"]);
    }
}
