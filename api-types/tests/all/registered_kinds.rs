//! The kinds this crate registers: each one kube-apiserver 1.32 serves, with
//! its scope, names, categories and subresources, and the facts of some kinds
//! the server relies on.

use std::collections::BTreeMap;

use kapi_runtime::scheme::Scheme;
use serde_json::Value;

/// The real kube-apiserver 1.32's discovery of every GA group version
/// (`tests/fixtures/served/`, fetched from the reference server), by
/// `group/version` and resource name.
fn upstream_resources() -> BTreeMap<(String, String), Value> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/served");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("fixtures") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("read");
        let doc: Value = serde_json::from_str(&text).expect("JSON");
        let gv = doc["groupVersion"]
            .as_str()
            .expect("groupVersion")
            .to_owned();
        for r in doc["resources"].as_array().expect("resources") {
            let name = r["name"].as_str().expect("name").to_owned();
            out.insert((gv.clone(), name), r.clone());
        }
    }
    out
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The subresources that talk to a kubelet or proxy to a workload (logs,
/// exec, attach, port forwarding, proxies): no node agent talks to kapi yet.
const NEEDS_A_NODE: &[&str] = &["attach", "exec", "log", "portforward", "proxy"];

/// Every kind kapi registers is one kube-apiserver serves, with the same kind,
/// scope, singular name, short names, categories, verbs and subresources (each
/// with its body's kind and its verbs; those needing a node agent aside); what
/// upstream serves and kapi does not yet is listed.
#[test]
fn registered_kinds_are_upstreams() {
    let upstream = upstream_resources();
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let mut problems = Vec::new();
    let mut served = Vec::new();
    for entry in scheme.entries() {
        let i = entry.info;
        let gv = i.api_version().to_owned();
        served.push((gv.clone(), i.plural.to_owned()));
        let Some(r) = upstream.get(&(gv.clone(), i.plural.to_owned())) else {
            problems.push(format!("{gv} {} is not served upstream", i.plural));
            continue;
        };
        let mut check = |what: &str, ours: String, theirs: String| {
            if ours != theirs {
                problems.push(format!(
                    "{gv} {}: {what} {ours:?}, upstream {theirs:?}",
                    i.plural
                ));
            }
        };
        check(
            "kind",
            i.kind.to_owned(),
            r["kind"].as_str().unwrap_or_default().to_owned(),
        );
        check(
            "namespaced",
            i.namespaced.to_string(),
            r["namespaced"].to_string(),
        );
        check(
            "singular",
            i.singular.to_owned(),
            r["singularName"].as_str().unwrap_or_default().to_owned(),
        );
        check(
            "short names",
            i.short_names.join(","),
            strings(&r["shortNames"]).join(","),
        );
        check(
            "categories",
            i.categories.join(","),
            strings(&r["categories"]).join(","),
        );
        let ours: Vec<String> = kapi_runtime::discovery::subresources(i)
            .iter()
            .map(|sub| {
                let body = sub.body.unwrap_or(kapi_runtime::BodyKind {
                    group: i.group,
                    version: i.version,
                    kind: i.kind,
                });
                let gv = if body.group.is_empty() {
                    body.version.to_owned()
                } else {
                    format!("{}/{}", body.group, body.version)
                };
                format!("{} {gv} {} {}", sub.name, body.kind, sub.verbs.join(","))
            })
            .collect();
        let prefix = format!("{}/", i.plural);
        let theirs: Vec<String> = upstream
            .range((gv.clone(), prefix.clone())..)
            .take_while(|((g, name), _)| *g == gv && name.starts_with(&prefix))
            .filter_map(|((_, name), r)| {
                let sub = &name[prefix.len()..];
                if NEEDS_A_NODE.contains(&sub) {
                    return None;
                }
                let body_gv = match (r["group"].as_str(), r["version"].as_str()) {
                    (Some(""), Some(v)) | (None, Some(v)) => v.to_owned(),
                    (Some(g), Some(v)) => format!("{g}/{v}"),
                    _ => gv.clone(),
                };
                let kind = r["kind"].as_str().unwrap_or_default();
                Some(format!(
                    "{sub} {body_gv} {kind} {}",
                    strings(&r["verbs"]).join(",")
                ))
            })
            .collect();
        check("subresources", ours.join("; "), theirs.join("; "));
        let verbs = strings(&r["verbs"]).join(",");
        check("verbs", i.verbs.join(","), verbs);
    }
    let missing: Vec<String> = upstream
        .keys()
        .filter(|(_, name)| !name.contains('/'))
        .filter(|key| !served.contains(key))
        .map(|(gv, name)| format!("{gv} {name}"))
        .collect();
    println!(
        "served upstream but not by kapi yet ({}):\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(served.len() >= 48, "the GA kinds are registered");
}

#[test]
fn categories_and_selectable_fields() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    // Categories are compared with upstream's discovery above.
    let fields = |g: &str, p: &str| scheme.get(g, "v1", p).expect(p).info.selectable_fields;
    assert!(fields("", "pods").contains(&"spec.nodeName"));
    assert_eq!(fields("", "namespaces"), &["status.phase"]);
    assert_eq!(fields("", "secrets"), &["type"]);
    assert_eq!(fields("", "nodes"), &["spec.unschedulable"]);
    assert!(fields("", "events").contains(&"involvedObject.uid"));
    assert!(fields("", "events").contains(&"reportingComponent"));
}

#[test]
fn printer_columns_are_in_kubectl_order() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let columns = |g: &str, p: &str| -> Vec<(&str, i32)> {
        let info = scheme.get(g, "v1", p).expect(p).info;
        info.printer_columns
            .iter()
            .map(|c| (c.name, c.priority))
            .collect()
    };
    assert_eq!(
        columns("", "pods"),
        vec![
            ("Ready", 0),
            ("Status", 0),
            ("Restarts", 0),
            ("Age", 0),
            ("IP", 1),
            ("Node", 1),
            ("Nominated Node", 1),
            ("Readiness Gates", 1)
        ]
    );
    assert_eq!(
        columns("apps", "deployments"),
        vec![
            ("Ready", 0),
            ("Up-to-date", 0),
            ("Available", 0),
            ("Age", 0),
            ("Containers", 1),
            ("Images", 1),
            ("Selector", 1)
        ]
    );
    let names =
        |g: &str, p: &str| -> Vec<&str> { columns(g, p).into_iter().map(|c| c.0).collect() };
    assert_eq!(
        names("", "services"),
        [
            "Type",
            "Cluster-IP",
            "External-IP",
            "Port(s)",
            "Age",
            "Selector"
        ]
    );
    assert_eq!(names("", "secrets"), ["Type", "Data"]);
    assert_eq!(names("", "configmaps"), ["Data"]);
    assert_eq!(names("", "namespaces"), ["Status"]);
    assert_eq!(
        names("", "events"),
        ["Last Seen", "Type", "Reason", "Object", "Message"]
    );
    assert_eq!(
        names("", "nodes"),
        [
            "Status",
            "Roles",
            "Age",
            "Version",
            "Internal-IP",
            "External-IP",
            "OS-Image",
            "Kernel-Version",
            "Container-Runtime"
        ]
    );
}

#[test]
fn generation_tracking_and_name_formats() {
    use kapi_runtime::resource::NameFormat;
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    // What the real server does with metadata.generation on create (checked
    // kind by kind against the reference kube-apiserver).
    let tracked: Vec<_> = scheme
        .entries()
        .filter(|e| e.info.tracks_generation)
        .map(|e| e.info.plural)
        .collect();
    assert_eq!(
        tracked,
        [
            "podtemplates",
            "replicationcontrollers",
            "mutatingwebhookconfigurations",
            "validatingadmissionpolicies",
            "validatingadmissionpolicybindings",
            "validatingwebhookconfigurations",
            "customresourcedefinitions",
            "daemonsets",
            "deployments",
            "replicasets",
            "statefulsets",
            "cronjobs",
            "jobs",
            "endpointslices",
            "flowschemas",
            "prioritylevelconfigurations",
            "ingressclasses",
            "ingresses",
            "networkpolicies",
            "poddisruptionbudgets",
            "priorityclasses",
        ]
    );
    let formats: Vec<_> = scheme
        .entries()
        .filter(|e| e.info.name_format != NameFormat::Dns1123Subdomain)
        .map(|e| (e.info.plural, e.info.name_format))
        .collect();
    assert_eq!(
        formats,
        [
            // A core Event is named freely (its events.k8s.io/v1 form is
            // held to a subdomain by that version's own check).
            ("events", NameFormat::PathSegment),
            ("namespaces", NameFormat::Dns1123Label),
            ("services", NameFormat::Dns1035Label),
            ("apiservices", NameFormat::PathSegment),
            ("certificatesigningrequests", NameFormat::PathSegment),
            // RBAC names are path segments (system:basic-user).
            ("clusterrolebindings", NameFormat::PathSegment),
            ("clusterroles", NameFormat::PathSegment),
            ("rolebindings", NameFormat::PathSegment),
            ("roles", NameFormat::PathSegment),
        ]
    );
}
