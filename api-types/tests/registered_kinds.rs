//! The kinds this crate registers: exactly the expected set, with the right
//! scope, short names, categories and subresources.

use kapi_runtime::scheme::Scheme;

#[test]
fn install_registers_exactly_the_builtin_kinds() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let registered: Vec<_> = scheme
        .entries()
        .map(|e| {
            let i = e.info;
            (
                i.group,
                i.version,
                i.plural,
                i.kind,
                i.namespaced,
                i.short_names,
                i.status_subresource,
            )
        })
        .collect();
    let expected = vec![
        (
            "",
            "v1",
            "configmaps",
            "ConfigMap",
            true,
            &["cm"][..],
            false,
        ),
        ("", "v1", "events", "Event", true, &["ev"][..], false),
        (
            "",
            "v1",
            "namespaces",
            "Namespace",
            false,
            &["ns"][..],
            true,
        ),
        ("", "v1", "nodes", "Node", false, &["no"][..], true),
        ("", "v1", "pods", "Pod", true, &["po"][..], true),
        ("", "v1", "secrets", "Secret", true, &[][..], false),
        ("", "v1", "services", "Service", true, &["svc"][..], true),
        (
            "apps",
            "v1",
            "deployments",
            "Deployment",
            true,
            &["deploy"][..],
            true,
        ),
    ];
    assert_eq!(registered, expected);
}

#[test]
fn categories_and_selectable_fields() {
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let in_all: Vec<&str> = scheme
        .entries()
        .filter(|e| e.info.categories.contains(&"all"))
        .map(|e| e.info.plural)
        .collect();
    assert_eq!(in_all, vec!["pods", "services", "deployments"]);
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
    let facts: Vec<_> = scheme
        .entries()
        .map(|e| (e.info.plural, e.info.tracks_generation, e.info.name_format))
        .collect();
    assert_eq!(
        facts,
        [
            ("configmaps", false, NameFormat::Dns1123Subdomain),
            ("events", false, NameFormat::Dns1123Subdomain),
            ("namespaces", false, NameFormat::Dns1123Label),
            ("nodes", false, NameFormat::Dns1123Subdomain),
            ("pods", false, NameFormat::Dns1123Subdomain),
            ("secrets", false, NameFormat::Dns1123Subdomain),
            ("services", false, NameFormat::Dns1035Label),
            ("deployments", true, NameFormat::Dns1123Subdomain),
        ]
    );
}
