//! kapi's OpenAPI definitions, generated from the structs, against Kubernetes
//! 1.32's (`../shared/upstream/openapi-v2-k8s-1.32.json`): for every registered
//! kind, every property of every definition it reaches must be there with the
//! same type, format, reference, required-ness and `x-kubernetes-*` extensions,
//! and every property of ours must be in upstream's same definition (or be an
//! allowance of [`EXTRA_PROPERTIES`]).
//! The test prints the coverage per kind and lists each difference.

use std::collections::{BTreeMap, BTreeSet};

use kapi_runtime::openapi::referenced;
use kapi_runtime::openapi_documents::scheme_definitions;
use kapi_runtime::scheme::Scheme;
use serde_json::Value;

use crate::common;

/// Properties checked and the differences found for one kind.
#[derive(Default)]
struct Coverage {
    total: usize,
    matching: usize,
    differences: Vec<String>,
}

struct Compare<'a> {
    upstream: &'a serde_json::Map<String, Value>,
    ours: &'a BTreeMap<String, Value>,
    visited: BTreeSet<String>,
    coverage: Coverage,
    /// The [`EXTRA_PROPERTIES`] allowances met, so a stale one shows.
    allowances_used: BTreeSet<(&'static str, &'static str)>,
}

impl Compare<'_> {
    fn definition(&mut self, name: &str) {
        if !self.visited.insert(name.to_owned()) {
            return;
        }
        let Some(up) = self.upstream.get(name) else {
            return;
        };
        let ours = self.ours.get(name);
        let up_props = up.get("properties").and_then(Value::as_object);
        let Some(up_props) = up_props else {
            // A scalar definition (Time, Quantity, IntOrString...): one item.
            self.coverage.total += 1;
            match ours {
                Some(ours) if same_shape(up, ours) => self.coverage.matching += 1,
                Some(_) => self.differ(format!("{name}: type or format differs")),
                None => self.differ(format!("{name}: definition missing")),
            }
            return;
        };
        if let Some(gvk) = up.get("x-kubernetes-group-version-kind") {
            self.coverage.total += 1;
            if ours.and_then(|o| o.get("x-kubernetes-group-version-kind")) == Some(gvk) {
                self.coverage.matching += 1;
            } else {
                self.differ(format!("{name}: x-kubernetes-group-version-kind differs"));
            }
        }
        let required = |schema: Option<&Value>| -> BTreeSet<String> {
            schema
                .and_then(|s| s.get("required"))
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let (up_required, our_required) = (required(Some(up)), required(ours));
        for (prop, up_schema) in up_props {
            self.coverage.total += 1;
            let our_schema = ours
                .and_then(|o| o.get("properties"))
                .and_then(|p| p.get(prop));
            let problem = match our_schema {
                None if ours.is_none() => Some("definition missing".to_owned()),
                None => Some("missing".to_owned()),
                Some(s) if !same_shape(up_schema, s) => Some(format!(
                    "shape differs: upstream {}, ours {}",
                    shape(up_schema),
                    shape(s)
                )),
                Some(s) if extensions(up_schema) != extensions(s) => Some(format!(
                    "extensions differ: upstream {:?}, ours {:?}",
                    extensions(up_schema),
                    extensions(s)
                )),
                Some(_) if up_required.contains(prop) != our_required.contains(prop) => {
                    Some(format!(
                        "required upstream: {}, ours: {}",
                        up_required.contains(prop),
                        our_required.contains(prop)
                    ))
                }
                Some(_) => None,
            };
            match problem {
                Some(p) => self.differ(format!("{name}.{prop}: {p}")),
                None => self.coverage.matching += 1,
            }
            for reached in references(up_schema) {
                self.definition(&reached);
            }
        }
        self.extra_properties(name, up_props, ours);
    }

    /// Our properties that upstream's same definition lacks: each is a
    /// difference unless [`EXTRA_PROPERTIES`] allows it, so a field that exists
    /// only in kapi (a typo, a field of a newer release) does not go unseen.
    fn extra_properties(
        &mut self,
        name: &str,
        up_props: &serde_json::Map<String, Value>,
        ours: Option<&Value>,
    ) {
        let Some(our_props) = ours
            .and_then(|o| o.get("properties"))
            .and_then(Value::as_object)
        else {
            return;
        };
        for prop in our_props.keys() {
            if up_props.contains_key(prop) {
                continue;
            }
            self.coverage.total += 1;
            let allowance = EXTRA_PROPERTIES
                .iter()
                .find(|(d, p)| *d == name && *p == prop.as_str());
            if let Some(allowance) = allowance {
                self.allowances_used.insert(*allowance);
                self.coverage.matching += 1;
            } else {
                self.differ(format!("{name}.{prop}: not in upstream's definition"));
            }
        }
    }

    fn differ(&mut self, what: String) {
        self.coverage.differences.push(what);
    }
}

/// Properties kapi's definitions have and upstream 1.32's same definitions
/// lack, each allowed on purpose: (definition, property).
///
/// All four are real upstream fields named `description`: the fact sheet was
/// made by deleting every `description` key from swagger.json, which took
/// these properties away with the description texts (see
/// `../shared/upstream/README.md`; the protobuf fact sheet still has
/// `PriorityClass.description = 4`).
const EXTRA_PROPERTIES: &[(&str, &str)] = &[
    ("io.k8s.api.scheduling.v1.PriorityClass", "description"),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition",
        "description",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ExternalDocumentation",
        "description",
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
        "description",
    ),
];

/// The definitions a schema refers to, through arrays and maps.
fn references(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(name) = referenced(schema) {
        out.push(name.to_owned());
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = schema.get(key) {
            out.extend(references(inner));
        }
    }
    out
}

/// Type, format and reference, through arrays and maps.
fn shape(schema: &Value) -> String {
    if let Some(name) = referenced(schema) {
        return format!("ref {name}");
    }
    let mut out = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        out.push_str(&format!(" ({format})"));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = schema.get(key) {
            out.push_str(&format!(" of {}", shape(inner)));
        }
    }
    out
}

fn same_shape(a: &Value, b: &Value) -> bool {
    shape(a) == shape(b)
}

fn extensions(schema: &Value) -> BTreeMap<String, Value> {
    schema
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| {
                    k.starts_with("x-kubernetes-") && *k != "x-kubernetes-group-version-kind"
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_kind_matches_upstreams_schema() {
    let Some(text) = common::upstream("openapi-v2-k8s-1.32.json") else {
        return;
    };
    let upstream: Value = serde_json::from_str(&text).expect("JSON");
    let upstream = upstream["definitions"].as_object().expect("definitions");
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let ours = scheme_definitions(&scheme).into_inner();
    let mut failures = Vec::new();
    let mut allowances_used = BTreeSet::new();
    println!("| kind | properties matching upstream |");
    println!("|---|---|");
    for entry in scheme.entries() {
        let info = entry.info;
        let mut defs = kapi_runtime::openapi::Definitions::new();
        let reference = entry.schema(&mut defs);
        let name = referenced(&reference).expect("a kind is a named definition");
        assert!(
            upstream.contains_key(name),
            "{name} is not an upstream definition"
        );
        let mut compare = Compare {
            upstream,
            ours: &ours,
            visited: BTreeSet::new(),
            coverage: Coverage::default(),
            allowances_used: BTreeSet::new(),
        };
        compare.definition(name);
        compare.definition(&format!("{name}List"));
        allowances_used.extend(compare.allowances_used);
        let c = compare.coverage;
        println!(
            "| {}/{} {} | {}/{} ({:.1}%) |",
            info.group,
            info.version,
            info.kind,
            c.matching,
            c.total,
            100.0 * c.matching as f64 / c.total.max(1) as f64
        );
        if c.matching < c.total {
            failures.push(format!(
                "{}: {} of {} properties differ:\n  {}",
                info.kind,
                c.total - c.matching,
                c.total,
                c.differences.join("\n  ")
            ));
        }
    }
    for allowance in EXTRA_PROPERTIES {
        if !allowances_used.contains(allowance) {
            failures.push(format!(
                "EXTRA_PROPERTIES allows {}.{}, which no kind reaches any more",
                allowance.0, allowance.1
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
