//! Every protobuf message kapi generates has the field names, numbers and types of
//! Kubernetes 1.32's (`../shared/upstream/protobuf-k8s-1.32.proto.txt`): each
//! registered kind, every message reachable from it, its List, and the meta types
//! the server encodes itself. A mismatch anywhere is listed, all of them at once.

use std::collections::{BTreeMap, BTreeSet};

use kapi_runtime::meta::{
    APIGroupList, APIResourceList, APIVersions, DeleteOptions, ListMeta, ObjectMeta, Status,
};
use kapi_runtime::proto::{FieldDescriptor, Message, Shape};
use kapi_runtime::scheme::Scheme;

use crate::common;

const META: &str = "k8s.io.apimachinery.pkg.apis.meta.v1";

/// One field of an upstream message: number and type as written.
#[derive(Debug)]
struct UpstreamField {
    number: u32,
    label: String,
    ty: String,
}

/// Messages by (package, name).
type Upstream = BTreeMap<(String, String), BTreeMap<String, UpstreamField>>;

fn parse(text: &str) -> Upstream {
    let mut out = Upstream::new();
    let (mut package, mut message) = (String::new(), None::<(String, String)>);
    for line in text.lines().map(str::trim) {
        if let Some(p) = line.strip_prefix("package ") {
            package = p.trim_end_matches(';').to_owned();
        } else if let Some(m) = line.strip_prefix("message ") {
            let name = m.trim_end_matches('{').trim().to_owned();
            message = Some((package.clone(), name.clone()));
            out.entry((package.clone(), name)).or_default();
        } else if line == "}" {
            message = None;
        } else if let (Some(key), Some((decl, number))) = (&message, line.split_once(" = ")) {
            let number: u32 = number.trim_end_matches(';').parse().expect("field number");
            let (label, rest) = match decl.split_once(' ') {
                Some((l @ ("optional" | "repeated"), rest)) => (l.to_owned(), rest),
                _ => (String::new(), decl),
            };
            let (ty, name) = rest.rsplit_once(' ').expect("type and name");
            let field = UpstreamField {
                number,
                label,
                ty: ty.to_owned(),
            };
            out.get_mut(key)
                .expect("message")
                .insert(name.to_owned(), field);
        }
    }
    out
}

/// The protobuf package of an API group version, as k8s.io/api names them.
fn package(group: &str, version: &str) -> String {
    let short = match group {
        "" => "core",
        g => g.split('.').next().unwrap_or(g),
    };
    format!("k8s.io.api.{short}.{version}")
}

/// Resolves a field type to (package, message) from inside `package`.
fn resolve(upstream: &Upstream, package: &str, ty: &str) -> Option<(String, String)> {
    if let Some(abs) = ty.strip_prefix('.') {
        let (p, n) = abs.rsplit_once('.')?;
        return Some((p.to_owned(), n.to_owned()));
    }
    let key = (package.to_owned(), ty.to_owned());
    upstream.contains_key(&key).then_some(key)
}

struct Checker<'a> {
    upstream: &'a Upstream,
    seen: BTreeSet<(String, String)>,
    mismatches: Vec<String>,
}

impl Checker<'_> {
    fn message(&mut self, key: (String, String), fields: Vec<FieldDescriptor>) {
        if !self.seen.insert(key.clone()) {
            return;
        }
        let Some(upstream) = self.upstream.get(&key) else {
            self.mismatches
                .push(format!("{}.{}: no such upstream message", key.0, key.1));
            return;
        };
        let at = format!("{}.{}", key.0, key.1);
        let ours: BTreeSet<&str> = fields.iter().map(|f| f.name).collect();
        for (name, f) in upstream {
            if !ours.contains(name.as_str()) {
                self.mismatches
                    .push(format!("{at}.{name} = {}: missing in kapi", f.number));
            }
        }
        for field in fields {
            let Some(up) = upstream.get(field.name) else {
                self.mismatches.push(format!(
                    "{at}.{} = {}: not in upstream",
                    field.name, field.number
                ));
                continue;
            };
            if up.number != field.number {
                self.mismatches.push(format!(
                    "{at}.{}: number {} but upstream has {}",
                    field.name, field.number, up.number
                ));
            }
            self.shape(&at, &key.0, field.name, up, &field.shape);
        }
    }

    fn shape(&mut self, at: &str, package: &str, name: &str, up: &UpstreamField, ours: &Shape) {
        let (repeated, inner) = match ours {
            Shape::Repeated(inner) => (true, &**inner),
            other => (false, other),
        };
        if let Shape::Map(k, v) = inner {
            let theirs = up.ty.replace(' ', "");
            let simple = |t: &str| t.rsplit('.').next().unwrap_or(t).to_owned();
            let expected = format!("map<{},{}>", k.proto_type(), v.proto_type());
            let (tk, tv) = theirs
                .trim_start_matches("map<")
                .trim_end_matches('>')
                .split_once(',')
                .unwrap_or_default();
            if format!("map<{},{}>", simple(tk), simple(tv)) != expected {
                self.mismatches.push(format!(
                    "{at}.{name}: {expected} but upstream has {}",
                    up.ty
                ));
            }
            if let Shape::Message(_, fields) = &**v
                && let Some(key) = resolve(self.upstream, package, tv)
            {
                self.message(key, fields());
            }
            return;
        }
        if repeated != (up.label == "repeated") {
            self.mismatches.push(format!(
                "{at}.{name}: repeated is {repeated} but upstream says {:?}",
                up.label
            ));
        }
        let simple = up.ty.rsplit('.').next().unwrap_or(&up.ty);
        match inner {
            Shape::Scalar(s) if *s == up.ty => {}
            Shape::Message(m, fields) if *m == simple => {
                match resolve(self.upstream, package, &up.ty) {
                    Some(key) => self.message(key, fields()),
                    None => self
                        .mismatches
                        .push(format!("{at}.{name}: upstream type {} not found", up.ty)),
                }
            }
            other => self.mismatches.push(format!(
                "{at}.{name}: type {} but upstream has {}",
                other.proto_type(),
                up.ty
            )),
        }
    }
}

/// Upstream's messages, or `None` where `../shared/upstream` is absent (see
/// [`common::upstream`]).
#[track_caller]
fn upstream() -> Option<Upstream> {
    common::upstream("protobuf-k8s-1.32.proto.txt").map(|text| parse(&text))
}

/// Groups served from other repositories than k8s.io/api (apiextensions-apiserver,
/// kube-aggregator), whose messages are not in the shared `.proto` file.
const NOT_IN_K8S_API: &[&str] = &["apiextensions.k8s.io", "apiregistration.k8s.io"];

#[test]
fn every_registered_kind_matches_upstream_protobuf() {
    let Some(upstream) = upstream() else { return };
    let mut scheme = Scheme::new();
    kapi_api_types::install(&mut scheme);
    let mut checker = Checker {
        upstream: &upstream,
        seen: BTreeSet::new(),
        mismatches: Vec::new(),
    };
    let mut kinds = 0;
    for entry in scheme.entries() {
        let info = entry.info;
        if NOT_IN_K8S_API.contains(&info.group) {
            // kinds_kinds checks these against their own generated.proto.
            continue;
        }
        let Some(proto) = entry.proto else {
            checker
                .mismatches
                .push(format!("{}: built-in kind without protobuf", info.kind));
            continue;
        };
        let (name, fields) = proto.describe();
        assert_eq!(name, info.kind);
        let pkg = package(info.group, info.version);
        checker.message((pkg.clone(), name.to_owned()), fields);
        // Lists are encoded generically: metadata = 1, items = 2. Kinds that are
        // never listed (the create-only reviews, Binding) have no List message.
        kinds += 1;
        if !info.serves("list") {
            continue;
        }
        let list = upstream.get(&(pkg.clone(), info.list_kind()));
        let shape_ok = list.is_some_and(|l| {
            l.len() == 2
                && l.get("metadata")
                    .is_some_and(|f| f.number == 1 && f.ty.ends_with("ListMeta"))
                && l.get("items")
                    .is_some_and(|f| f.number == 2 && f.label == "repeated" && f.ty == info.kind)
        });
        if !shape_ok {
            checker.mismatches.push(format!(
                "{pkg}.{}: not {{ListMeta metadata = 1; repeated {} items = 2}}",
                info.list_kind(),
                info.kind
            ));
        }
    }
    for (name, fields) in [
        (ObjectMeta::NAME, ObjectMeta::describe()),
        (ListMeta::NAME, ListMeta::describe()),
        (Status::NAME, Status::describe()),
        (DeleteOptions::NAME, DeleteOptions::describe()),
        (APIVersions::NAME, APIVersions::describe()),
        (APIGroupList::NAME, APIGroupList::describe()),
        (APIResourceList::NAME, APIResourceList::describe()),
    ] {
        checker.message((META.to_owned(), name.to_owned()), fields);
    }
    assert!(
        checker.mismatches.is_empty(),
        "{} mismatches with upstream protobuf:\n{}",
        checker.mismatches.len(),
        checker.mismatches.join("\n")
    );
    assert!(kinds >= 8, "only {kinds} kinds checked");
    eprintln!("{} messages match upstream", checker.seen.len());
}

#[test]
fn the_parser_reads_upstream_shapes() {
    let Some(upstream) = upstream() else { return };
    let meta = &upstream[&(META.to_owned(), "ObjectMeta".to_owned())];
    assert_eq!(meta["managedFields"].number, 17);
    assert_eq!(meta["labels"].ty.replace(' ', ""), "map<string,string>");
    assert!(upstream.len() > 500);
}
