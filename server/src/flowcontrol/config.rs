//! From FlowSchema and PriorityLevelConfiguration objects to what the filter
//! uses: the schemas in matching order, each with its level, and every
//! level's seats (k8s.io/apiserver's apf_controller digest).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::classify::FlowSchemaSpec;
use super::metrics::{FlowMetrics, SchemaMetrics};
use super::queueset::{Dispatch, QueueSet};

/// The mandatory levels and schemas: imagined when their objects are
/// missing, so every request is classified.
pub const EXEMPT: &str = "exempt";
/// The mandatory catch-all level and schema.
pub const CATCH_ALL: &str = "catch-all";

/// Requests a level's share of the server's seats may cost at most
/// (upstream's `maximumSeatsLimit`).
pub const MAX_SEATS_LIMIT: u32 = 10;

/// A priority level as the filter uses it.
pub struct Level {
    /// Its name.
    pub name: Arc<str>,
    /// Its object's uid (empty for an imagined mandatory level).
    pub uid: Arc<str>,
    /// Exempt, Reject or Queue.
    pub shape: Dispatch,
    /// Seats by its share (`NominalCL`).
    pub nominal: u32,
    /// The fewest seats borrowing leaves it: its nominal ones less those it
    /// lends (`lendablePercent`).
    pub min: u32,
    /// The most seats borrowing gives it: its nominal ones and those it may
    /// borrow (`borrowingLimitPercent`; without one, the server's seats).
    pub max: u32,
    /// The most seats one request may take.
    pub max_seats: u32,
    /// Its seats and queues, kept across configurations.
    pub set: Arc<QueueSet>,
}

impl Level {
    /// Whether flows are told apart (more than one queue).
    pub fn distinguishes_flows(&self) -> bool {
        matches!(self.shape, Dispatch::Queue { queues, .. } if queues > 1)
    }
}

/// A FlowSchema as the filter uses it.
pub struct Schema {
    /// Its name.
    pub name: Arc<str>,
    /// Its object's uid (empty when imagined).
    pub uid: Arc<str>,
    /// What it matches.
    pub spec: FlowSchemaSpec,
    /// Its level.
    pub level: Arc<Level>,
    /// Its metrics' handles.
    pub metrics: SchemaMetrics,
}

/// One configuration: the schemas in matching order (those whose level is
/// missing left out), the catch-all last.
pub struct Config {
    /// Matching order: `matchingPrecedence`, then name.
    pub schemas: Vec<Arc<Schema>>,
    /// What matches when nothing else does.
    pub catch_all: Arc<Schema>,
    /// Every level by name.
    pub levels: BTreeMap<Arc<str>, Arc<Level>>,
}

/// A PriorityLevelConfiguration's spec, the fields read.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LevelSpec {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    limited: Option<Limited>,
    #[serde(default)]
    exempt: Option<ExemptSpec>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Limited {
    #[serde(default)]
    nominal_concurrency_shares: Option<u32>,
    #[serde(default)]
    limit_response: LimitResponse,
    #[serde(default)]
    lendable_percent: Option<u32>,
    #[serde(default)]
    borrowing_limit_percent: Option<u32>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExemptSpec {
    #[serde(default)]
    nominal_concurrency_shares: Option<u32>,
    #[serde(default)]
    lendable_percent: Option<u32>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LimitResponse {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    queuing: Option<Queuing>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Queuing {
    #[serde(default)]
    queues: usize,
    #[serde(default)]
    hand_size: usize,
    #[serde(default)]
    queue_length_limit: usize,
}

/// The v1 defaults of a limited level's shares.
const DEFAULT_SHARES: u32 = 30;

struct ParsedLevel {
    uid: Arc<str>,
    shape: Dispatch,
    shares: u32,
    lendable_percent: u32,
    /// `None`: no limit.
    borrowing_limit_percent: Option<u32>,
}

fn parse_level(name: &str, uid: &str, spec: &Value) -> Option<ParsedLevel> {
    let spec: LevelSpec = serde_json::from_value(spec.clone()).ok()?;
    let (shape, shares, lendable_percent, borrowing_limit_percent) = match spec.kind.as_str() {
        "Exempt" => {
            let exempt = spec.exempt.unwrap_or_default();
            (
                Dispatch::Exempt,
                exempt.nominal_concurrency_shares.unwrap_or(0),
                exempt.lendable_percent.unwrap_or(0),
                None,
            )
        }
        "Limited" => {
            let limited = spec.limited.unwrap_or_default();
            let shape = match limited.limit_response.kind.as_str() {
                "Reject" => Dispatch::Reject,
                _ => {
                    let q = limited.limit_response.queuing.unwrap_or_default();
                    Dispatch::Queue {
                        queues: if q.queues == 0 { 64 } else { q.queues },
                        hand_size: if q.hand_size == 0 { 8 } else { q.hand_size },
                        queue_length_limit: if q.queue_length_limit == 0 {
                            50
                        } else {
                            q.queue_length_limit
                        },
                    }
                }
            };
            let shares = limited.nominal_concurrency_shares.unwrap_or(DEFAULT_SHARES);
            (
                shape,
                shares,
                limited.lendable_percent.unwrap_or(0),
                limited.borrowing_limit_percent,
            )
        }
        _ => return None,
    };
    // `exempt` must be of type Exempt and nothing else may be: a level
    // whose name and type disagree is ignored, as upstream.
    if (name == EXEMPT) != (shape == Dispatch::Exempt) {
        return None;
    }
    Some(ParsedLevel {
        uid: uid.into(),
        shape,
        shares,
        lendable_percent,
        borrowing_limit_percent,
    })
}

/// The bootstrap spec of a mandatory object, for when it is missing.
fn mandatory_spec(list: &str, name: &str) -> Value {
    super::bootstrap::objects(list)
        .into_iter()
        .find(|o| o.name == name)
        .map(|o| o.spec)
        .unwrap_or(Value::Null)
}

/// The configuration of these objects (as the informers hold them), with
/// `server_limit` seats to share; `sets` keeps each level's queue set
/// across configurations.
pub fn digest(
    flow_schemas: &[&Value],
    priority_levels: &[&Value],
    server_limit: u32,
    sets: &mut BTreeMap<String, Arc<QueueSet>>,
    metrics: &FlowMetrics,
) -> Config {
    let mut parsed: BTreeMap<String, ParsedLevel> = BTreeMap::new();
    for object in priority_levels {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let uid = object["metadata"]["uid"].as_str().unwrap_or_default();
        if let Some(level) = parse_level(name, uid, &object["spec"]) {
            parsed.insert(name.to_owned(), level);
        }
    }
    for name in [EXEMPT, CATCH_ALL] {
        if !parsed.contains_key(name)
            && let Some(level) = parse_level(
                name,
                "",
                &mandatory_spec("priorityLevelConfigurations", name),
            )
        {
            parsed.insert(name.to_owned(), level);
        }
    }
    let share_sum: u64 = parsed.values().map(|l| u64::from(l.shares)).sum();
    let mut levels = BTreeMap::new();
    for (name, level) in parsed {
        let nominal = if share_sum == 0 {
            0
        } else {
            (u64::from(server_limit) * u64::from(level.shares)).div_ceil(share_sum) as u32
        };
        let max_seats = match level.shape {
            Dispatch::Queue { hand_size, .. } => {
                let by_share = (f64::from(nominal) * 0.15).ceil() as u32;
                let by_hand = nominal / hand_size.max(1) as u32;
                by_share.min(by_hand).max(1)
            }
            _ => MAX_SEATS_LIMIT,
        }
        .min(MAX_SEATS_LIMIT);
        let percent_of_nominal =
            |percent: u32| (f64::from(nominal) * f64::from(percent) / 100.0).round() as u32;
        let lendable = percent_of_nominal(level.lendable_percent);
        let borrowing = level
            .borrowing_limit_percent
            .map_or(server_limit, percent_of_nominal);
        // A level keeps the seats borrowing gave it until the allocation
        // that follows each configuration; a new one starts halfway down
        // what it may lend.
        let set = match sets.get(&name) {
            Some(set) => {
                set.reconfigure(level.shape.clone(), set.limit());
                set.clone()
            }
            None => {
                let set = QueueSet::new(level.shape.clone(), nominal.saturating_sub(lendable / 2));
                sets.insert(name.clone(), set.clone());
                set
            }
        };
        let name: Arc<str> = name.into();
        levels.insert(
            name.clone(),
            Arc::new(Level {
                name,
                uid: level.uid,
                shape: level.shape,
                nominal,
                min: nominal.saturating_sub(lendable),
                max: nominal.saturating_add(borrowing),
                max_seats,
                set,
            }),
        );
    }
    // Levels that are gone keep their sets only while they have requests.
    sets.retain(|name, set| {
        levels.contains_key(name.as_str()) || {
            let counts = set.counts();
            counts.waiting + counts.executing > 0
        }
    });

    let mut schemas: Vec<Arc<Schema>> = Vec::new();
    let mut seen_exempt = false;
    let mut catch_all = None;
    for object in flow_schemas {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let uid = object["metadata"]["uid"].as_str().unwrap_or_default();
        let Ok(spec) = serde_json::from_value::<FlowSchemaSpec>(object["spec"].clone()) else {
            continue;
        };
        // A schema whose level is missing (dangling) matches nothing.
        let Some(level) = levels.get(spec.priority_level_configuration.name.as_str()) else {
            continue;
        };
        let schema = Arc::new(Schema {
            name: name.into(),
            uid: uid.into(),
            metrics: metrics.of(&level.name, name),
            spec,
            level: level.clone(),
        });
        seen_exempt |= name == EXEMPT;
        if name == CATCH_ALL {
            catch_all = Some(schema.clone());
        }
        schemas.push(schema);
    }
    let imagined = |name: &str| -> Option<Arc<Schema>> {
        let spec: FlowSchemaSpec =
            serde_json::from_value(mandatory_spec("flowSchemas", name)).ok()?;
        let level = levels.get(spec.priority_level_configuration.name.as_str())?;
        Some(Arc::new(Schema {
            name: name.into(),
            uid: "".into(),
            metrics: metrics.of(&level.name, name),
            level: level.clone(),
            spec,
        }))
    };
    if !seen_exempt && let Some(exempt) = imagined(EXEMPT) {
        schemas.push(exempt);
    }
    let catch_all = match catch_all.or_else(|| imagined(CATCH_ALL)) {
        Some(schema) => {
            if !schemas.iter().any(|s| Arc::ptr_eq(s, &schema)) {
                schemas.push(schema.clone());
            }
            schema
        }
        // Only when the bootstrap data itself is broken: nothing is limited.
        None => Arc::new(Schema::unlimited()),
    };
    schemas.sort_by(|a, b| {
        // An imagined exempt goes first and an imagined catch-all last, as
        // upstream adds them; the objects' own precedences do the same.
        (a.spec.matching_precedence, &a.name).cmp(&(b.spec.matching_precedence, &b.name))
    });
    Config {
        schemas,
        catch_all,
        levels,
    }
}

/// The `Dangling` condition a FlowSchema should carry: whether its level
/// exists, with upstream's reason and message.
pub fn dangling_condition(
    flow_schema: &Value,
    level_names: &[&str],
) -> (bool, &'static str, String) {
    let level = flow_schema["spec"]["priorityLevelConfiguration"]["name"]
        .as_str()
        .unwrap_or_default();
    if level_names.contains(&level) {
        (
            false,
            "Found",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {level:?} and it exists"
            ),
        )
    } else {
        (
            true,
            "NotFound",
            format!(
                "This FlowSchema references the PriorityLevelConfiguration object named {level:?} but there is no such object"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bootstrap(list: &str) -> Vec<Value> {
        super::super::bootstrap::objects(list)
            .into_iter()
            .map(|o| {
                serde_json::json!({"metadata": {"name": o.name, "uid": format!("uid-{}", o.name)},
                    "spec": o.spec})
            })
            .collect()
    }

    #[test]
    fn the_bootstrap_configuration_shares_600_seats_as_upstream() {
        let fs = bootstrap("flowSchemas");
        let plc = bootstrap("priorityLevelConfigurations");
        let mut sets = BTreeMap::new();
        let config = digest(
            &fs.iter().collect::<Vec<_>>(),
            &plc.iter().collect::<Vec<_>>(),
            600,
            &mut sets,
            &FlowMetrics::register(&mut Default::default()),
        );
        let seats: Vec<(&str, u32, u32)> = config
            .levels
            .values()
            .map(|l| (&*l.name, l.nominal, l.max_seats))
            .collect();
        // upstream's NominalCL and max seats at serverCL = 600.
        assert_eq!(
            seats,
            [
                ("catch-all", 13, 10),
                ("exempt", 0, 10),
                ("global-default", 49, 8),
                ("leader-election", 25, 4),
                ("node-high", 98, 10),
                ("system", 74, 10),
                ("workload-high", 98, 10),
                ("workload-low", 245, 10),
            ]
        );
        let names: Vec<&str> = config.schemas.iter().map(|s| &*s.name).collect();
        assert_eq!(names.first(), Some(&"exempt"));
        assert_eq!(names.last(), Some(&"catch-all"));
        assert_eq!(names.len(), 13);
    }

    #[test]
    fn mandatory_objects_are_imagined_and_dangling_schemas_ignored() {
        let fs = [serde_json::json!({"metadata": {"name": "mine", "uid": "u"},
            "spec": {"priorityLevelConfiguration": {"name": "nowhere"}, "matchingPrecedence": 5,
                "rules": []}})];
        let mut sets = BTreeMap::new();
        let metrics = FlowMetrics::register(&mut Default::default());
        let config = digest(&[&fs[0]], &[], 600, &mut sets, &metrics);
        let names: Vec<&str> = config.schemas.iter().map(|s| &*s.name).collect();
        assert_eq!(names, ["exempt", "catch-all"]);
        assert_eq!(&*config.catch_all.level.name, "catch-all");
        // Only the mandatory levels share the seats now.
        assert_eq!(config.levels["catch-all"].nominal, 600);
        let (dangling, reason, message) = dangling_condition(&fs[0], &["exempt"]);
        assert!(dangling);
        assert_eq!(reason, "NotFound");
        assert_eq!(
            message,
            "This FlowSchema references the PriorityLevelConfiguration object named \"nowhere\" but there is no such object"
        );
    }
}
