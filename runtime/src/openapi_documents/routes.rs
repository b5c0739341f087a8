//! The routes of the kinds as OpenAPI operations, laid out as kube-apiserver
//! lays them out: for each kind its collection and object paths, the `watch/`
//! paths, the list across namespaces and every subresource, each operation
//! with its id, action, group-version-kind, parameters, bodies, responses and
//! media types.
//!
//! Only what kapi serves is described: parameters it ignores (`pretty`) and
//! media types it does not speak (CBOR) are left out. As upstream, a
//! parameter every operation of a path takes is declared once on the path.

use serde_json::{Map, Value, json};

use crate::discovery::subresources;
use crate::resource_info::{ResourceInfo, Subresource};

/// The media types of answers.
const PRODUCES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// The media types of list and watch answers.
const PRODUCES_STREAMS: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];

/// The patch types applied.
pub const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// A parameter: name, location, type and what it does.
struct Param {
    name: &'static str,
    location: &'static str,
    type_: &'static str,
    doc: &'static str,
}

const fn query(name: &'static str, type_: &'static str, doc: &'static str) -> Param {
    Param {
        name,
        location: "query",
        type_,
        doc,
    }
}

const ALLOW_WATCH_BOOKMARKS: Param = query(
    "allowWatchBookmarks",
    "boolean",
    "Asks a watch for BOOKMARK events, which carry only a resourceVersion to resume from; ignored outside watches.",
);
const CONTINUE: Param = query(
    "continue",
    "string",
    "The token of a previous page's `metadata.continue`, to read the next page of the same list.",
);
const DRY_RUN: Param = query(
    "dryRun",
    "string",
    "`All` runs every step of the request but writes nothing.",
);
const FIELD_MANAGER: Param = query(
    "fieldManager",
    "string",
    "Who makes the change, as `metadata.managedFields` records it; required for an apply patch, else the User-Agent's product.",
);
const FIELD_SELECTOR: Param = query(
    "fieldSelector",
    "string",
    "Keeps the objects whose fields match, e.g. `metadata.name=x,status.phase!=Running`; all by default.",
);
const FIELD_VALIDATION: Param = query(
    "fieldValidation",
    "string",
    "What unknown or duplicate fields in the body do: `Ignore`, `Warn` (the default: a Warning header) or `Strict` (a 400 answer).",
);
const FORCE: Param = query(
    "force",
    "boolean",
    "An apply patch takes the fields other managers own instead of failing with a conflict; only for apply patches.",
);
const GRACE_PERIOD_SECONDS: Param = query(
    "gracePeriodSeconds",
    "integer",
    "Seconds the object may take to terminate: 0 deletes at once; the kind's default when unset.",
);
const LABEL_SELECTOR: Param = query(
    "labelSelector",
    "string",
    "Keeps the objects whose labels match, e.g. `app=web,tier in (front)`; all by default.",
);
const LIMIT: Param = query(
    "limit",
    "integer",
    "Most objects in one page of a list; the answer's `metadata.continue` reads the next page.",
);
const ORPHAN_DEPENDENTS: Param = query(
    "orphanDependents",
    "boolean",
    "Superseded by propagationPolicy: true orphans the dependents, false deletes them in the background.",
);
const PROPAGATION_POLICY: Param = query(
    "propagationPolicy",
    "string",
    "What happens to the dependents: `Orphan`, `Background` or `Foreground`; the kind's default when unset.",
);
const RESOURCE_VERSION: Param = query(
    "resourceVersion",
    "string",
    "For a list, the revision to read at (see resourceVersionMatch; `0` is any revision); for a watch, the revision to start after.",
);
const RESOURCE_VERSION_MATCH: Param = query(
    "resourceVersionMatch",
    "string",
    "How a list's resourceVersion applies: `NotOlderThan` or `Exact`.",
);
const SEND_INITIAL_EVENTS: Param = query(
    "sendInitialEvents",
    "boolean",
    "Starts a watch with ADDED events for the objects that exist, then a bookmark; needs resourceVersionMatch=NotOlderThan.",
);
const TIMEOUT_SECONDS: Param = query(
    "timeoutSeconds",
    "integer",
    "Ends a list or watch after this many seconds.",
);
const WATCH: Param = query(
    "watch",
    "boolean",
    "Turns the list into a watch: a stream of ADDED, MODIFIED and DELETED events.",
);
const NAMESPACE: Param = Param {
    name: "namespace",
    location: "path",
    type_: "string",
    doc: "The namespace of the objects.",
};

const LIST_PARAMS: &[&Param] = &[
    &ALLOW_WATCH_BOOKMARKS,
    &CONTINUE,
    &FIELD_SELECTOR,
    &LABEL_SELECTOR,
    &LIMIT,
    &RESOURCE_VERSION,
    &RESOURCE_VERSION_MATCH,
    &SEND_INITIAL_EVENTS,
    &TIMEOUT_SECONDS,
    &WATCH,
];
const WRITE_PARAMS: &[&Param] = &[&DRY_RUN, &FIELD_MANAGER, &FIELD_VALIDATION];
const PATCH_PARAMS: &[&Param] = &[&DRY_RUN, &FIELD_MANAGER, &FIELD_VALIDATION, &FORCE];
const DELETE_PARAMS: &[&Param] = &[
    &DRY_RUN,
    &GRACE_PERIOD_SECONDS,
    &ORPHAN_DEPENDENTS,
    &PROPAGATION_POLICY,
];
const DELETE_COLLECTION_PARAMS: &[&Param] = &[
    &CONTINUE,
    &DRY_RUN,
    &FIELD_SELECTOR,
    &GRACE_PERIOD_SECONDS,
    &LABEL_SELECTOR,
    &LIMIT,
    &ORPHAN_DEPENDENTS,
    &PROPAGATION_POLICY,
    &RESOURCE_VERSION,
    &RESOURCE_VERSION_MATCH,
    &SEND_INITIAL_EVENTS,
    &TIMEOUT_SECONDS,
];

/// A parameter of one route: a shared one, or the object's name.
#[derive(Clone)]
enum Arg {
    Shared(&'static Param),
    Name(String),
}

impl Arg {
    fn name(&self) -> &str {
        match self {
            Arg::Shared(p) => p.name,
            Arg::Name(_) => "name",
        }
    }

    fn render(&self, v3: bool) -> Value {
        let (name, location, type_, doc) = match self {
            Arg::Shared(p) => (p.name, p.location, p.type_, p.doc.to_owned()),
            Arg::Name(doc) => ("name", "path", "string", doc.clone()),
        };
        let mut param = json!({ "name": name, "in": location, "description": doc });
        if location == "path" {
            param["required"] = json!(true);
        }
        if v3 {
            param["schema"] = json!({ "type": type_, "uniqueItems": true });
        } else {
            param["type"] = json!(type_);
            param["uniqueItems"] = json!(true);
        }
        param
    }
}

/// What an operation answers with, by status code.
#[derive(Clone, Copy)]
enum Answers {
    /// 200.
    Read,
    /// 200, 201 (update and patch may create).
    Write,
    /// 200, 201, 202.
    Create,
    /// 200, 202.
    Delete,
}

impl Answers {
    fn codes(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Answers::Read => &[("200", "OK")],
            Answers::Write => &[("200", "OK"), ("201", "Created")],
            Answers::Create => &[("200", "OK"), ("201", "Created"), ("202", "Accepted")],
            Answers::Delete => &[("200", "OK"), ("202", "Accepted")],
        }
    }
}

/// One operation of a route.
struct Op {
    method: &'static str,
    id: String,
    action: &'static str,
    description: String,
    /// Group, version and kind the operation is about.
    gvk: Value,
    args: Vec<Arg>,
    /// The body's schema and whether it is required.
    body: Option<(Value, bool)>,
    patch: bool,
    response: Value,
    answers: Answers,
    streams: bool,
}

/// Names of definitions the operations refer to.
pub struct Refs<'a> {
    /// The kind's definition.
    pub kind: &'a str,
    /// The definition of a body kind (`policy/v1` `Eviction`), by its group,
    /// version and kind.
    pub body: &'a dyn Fn(&str, &str, &str) -> Option<String>,
}

/// The paths of one kind, in OpenAPI 2 or 3 form.
pub fn kind_paths(info: &ResourceInfo, refs: &Refs<'_>, v3: bool) -> Map<String, Value> {
    let routes = Routes { info, refs, v3 };
    let mut out = Map::new();
    for (path, ops) in routes.all() {
        if !ops.is_empty() {
            out.insert(path, routes.render(ops));
        }
    }
    out
}

struct Routes<'a> {
    info: &'a ResourceInfo,
    refs: &'a Refs<'a>,
    v3: bool,
}

impl Routes<'_> {
    fn all(&self) -> Vec<(String, Vec<Op>)> {
        let info = self.info;
        let base = if info.group.is_empty() {
            format!("/api/{}", info.version)
        } else {
            format!("/apis/{}/{}", info.group, info.version)
        };
        let (scope, watch_scope) = if info.namespaced {
            (
                format!("namespaces/{{namespace}}/{}", info.plural),
                format!("watch/namespaces/{{namespace}}/{}", info.plural),
            )
        } else {
            (info.plural.to_owned(), format!("watch/{}", info.plural))
        };
        let mut routes = Vec::new();
        if info.namespaced && info.serves("list") {
            routes.push((format!("{base}/{}", info.plural), vec![self.list_all()]));
        }
        if info.namespaced && info.serves("watch") {
            routes.push((
                format!("{base}/watch/{}", info.plural),
                vec![self.watch_all()],
            ));
        }
        routes.push((format!("{base}/{scope}"), self.collection()));
        routes.push((format!("{base}/{scope}/{{name}}"), self.object()));
        if info.serves("watch") {
            routes.push((format!("{base}/{watch_scope}"), vec![self.watch_list()]));
            routes.push((
                format!("{base}/{watch_scope}/{{name}}"),
                vec![self.watch_object()],
            ));
        }
        for sub in subresources(info) {
            routes.push((
                format!("{base}/{scope}/{{name}}/{}", sub.name),
                self.subresource(&sub),
            ));
        }
        routes
    }

    fn names(&self) -> (String, &'static str, &'static str) {
        let ns = if self.info.namespaced {
            "Namespaced"
        } else {
            ""
        };
        (id_group_version(self.info), self.info.kind, ns)
    }

    fn kind_gvk(&self) -> Value {
        json!({ "group": self.info.group, "kind": self.info.kind, "version": self.info.version })
    }

    fn reference(&self, name: &str) -> Value {
        let prefix = if self.v3 {
            "#/components/schemas/"
        } else {
            "#/definitions/"
        };
        json!({ "$ref": format!("{prefix}{name}") })
    }

    fn meta(&self, name: &str) -> Value {
        self.reference(&format!("io.k8s.apimachinery.pkg.apis.meta.v1.{name}"))
    }

    fn kind_ref(&self) -> Value {
        self.reference(self.refs.kind)
    }

    fn list_ref(&self) -> Value {
        self.reference(&format!("{}List", self.refs.kind))
    }

    /// The path arguments of every operation on a path.
    fn scope_args(&self, named: bool) -> Vec<Arg> {
        let mut args = Vec::new();
        if named {
            args.push(Arg::Name(format!("Name of the {}.", self.info.kind)));
        }
        if self.info.namespaced {
            args.push(Arg::Shared(&NAMESPACE));
        }
        args
    }

    #[allow(clippy::too_many_arguments)]
    fn op(
        &self,
        method: &'static str,
        id: String,
        action: &'static str,
        description: String,
        args: Vec<Arg>,
        body: Option<(Value, bool)>,
        response: Value,
        answers: Answers,
    ) -> Op {
        Op {
            method,
            id,
            action,
            description,
            gvk: self.kind_gvk(),
            args,
            body,
            patch: method == "patch",
            response,
            answers,
            streams: matches!(action, "list" | "watch" | "watchlist"),
        }
    }

    fn with(mut args: Vec<Arg>, more: &[&'static Param]) -> Vec<Arg> {
        args.extend(more.iter().map(|p| Arg::Shared(p)));
        args
    }

    fn list_all(&self) -> Op {
        let (gv, kind, _) = self.names();
        self.op(
            "get",
            format!("list{gv}{kind}ForAllNamespaces"),
            "list",
            format!("Lists or watches the {kind} objects of every namespace."),
            Self::with(Vec::new(), LIST_PARAMS),
            None,
            self.list_ref(),
            Answers::Read,
        )
    }

    fn watch_all(&self) -> Op {
        let (gv, kind, _) = self.names();
        self.op(
            "get",
            format!("watch{gv}{kind}ListForAllNamespaces"),
            "watchlist",
            format!(
                "Watches the {kind} objects of every namespace (superseded by a list with watch=true)."
            ),
            Self::with(Vec::new(), LIST_PARAMS),
            None,
            self.meta("WatchEvent"),
            Answers::Read,
        )
    }

    fn collection(&self) -> Vec<Op> {
        let (gv, kind, ns) = self.names();
        let info = self.info;
        let scope = self.scope_args(false);
        let mut ops = Vec::new();
        if info.serves("list") {
            ops.push(self.op(
                "get",
                format!("list{gv}{ns}{kind}"),
                "list",
                format!("Lists or watches {kind} objects."),
                Self::with(scope.clone(), LIST_PARAMS),
                None,
                self.list_ref(),
                Answers::Read,
            ));
        }
        if info.serves("create") {
            ops.push(self.op(
                "post",
                format!("create{gv}{ns}{kind}"),
                "post",
                format!("Creates a {kind}."),
                Self::with(scope.clone(), WRITE_PARAMS),
                Some((self.kind_ref(), true)),
                self.kind_ref(),
                Answers::Create,
            ));
        }
        if info.serves("deletecollection") {
            ops.push(self.op(
                "delete",
                format!("delete{gv}Collection{ns}{kind}"),
                "deletecollection",
                format!("Deletes the {kind} objects selected."),
                Self::with(scope, DELETE_COLLECTION_PARAMS),
                Some((self.meta("DeleteOptions"), false)),
                self.meta("Status"),
                Answers::Read,
            ));
        }
        ops
    }

    fn object(&self) -> Vec<Op> {
        let (gv, kind, ns) = self.names();
        let info = self.info;
        let scope = self.scope_args(true);
        let mut ops = Vec::new();
        if info.serves("get") {
            ops.push(self.op(
                "get",
                format!("read{gv}{ns}{kind}"),
                "get",
                format!("Reads a {kind}."),
                scope.clone(),
                None,
                self.kind_ref(),
                Answers::Read,
            ));
        }
        if info.serves("update") {
            ops.push(self.op(
                "put",
                format!("replace{gv}{ns}{kind}"),
                "put",
                format!("Replaces a {kind}."),
                Self::with(scope.clone(), WRITE_PARAMS),
                Some((self.kind_ref(), true)),
                self.kind_ref(),
                Answers::Write,
            ));
        }
        if info.serves("patch") {
            ops.push(self.op(
                "patch",
                format!("patch{gv}{ns}{kind}"),
                "patch",
                format!("Patches a {kind}."),
                Self::with(scope.clone(), PATCH_PARAMS),
                Some((self.meta("Patch"), true)),
                self.kind_ref(),
                Answers::Write,
            ));
        }
        if info.serves("delete") {
            let answer = if info.return_deleted_object {
                self.kind_ref()
            } else {
                self.meta("Status")
            };
            ops.push(self.op(
                "delete",
                format!("delete{gv}{ns}{kind}"),
                "delete",
                format!("Deletes a {kind}."),
                Self::with(scope, DELETE_PARAMS),
                Some((self.meta("DeleteOptions"), false)),
                answer,
                Answers::Delete,
            ));
        }
        ops
    }

    fn watch_list(&self) -> Op {
        let (gv, kind, ns) = self.names();
        self.op(
            "get",
            format!("watch{gv}{ns}{kind}List"),
            "watchlist",
            format!("Watches {kind} objects (superseded by a list with watch=true)."),
            Self::with(self.scope_args(false), LIST_PARAMS),
            None,
            self.meta("WatchEvent"),
            Answers::Read,
        )
    }

    fn watch_object(&self) -> Op {
        let (gv, kind, ns) = self.names();
        self.op(
            "get",
            format!("watch{gv}{ns}{kind}"),
            "watch",
            format!(
                "Watches one {kind} (superseded by a list with watch=true and a fieldSelector on metadata.name)."
            ),
            Self::with(self.scope_args(true), LIST_PARAMS),
            None,
            self.meta("WatchEvent"),
            Answers::Read,
        )
    }

    fn subresource(&self, sub: &Subresource) -> Vec<Op> {
        let (gv, kind, ns) = self.names();
        let suffix = capitalize(sub.name);
        let (gvk, schema) = match sub.body {
            Some(body) => {
                let name =
                    (self.refs.body)(body.group, body.version, body.kind).unwrap_or_default();
                (
                    json!({ "group": body.group, "kind": body.kind, "version": body.version }),
                    self.reference(&name),
                )
            }
            None => (self.kind_gvk(), self.kind_ref()),
        };
        let what = format!("the {} of a {kind}", sub.name);
        let scope = self.scope_args(true);
        let mut ops = Vec::new();
        let mut add = |method, verb: &str, action, description: String, args, body, answers| {
            let mut op = self.op(
                method,
                format!("{verb}{gv}{ns}{kind}{suffix}"),
                action,
                description,
                args,
                body,
                schema.clone(),
                answers,
            );
            op.gvk = gvk.clone();
            ops.push(op);
        };
        if sub.serves("get") {
            add(
                "get",
                "read",
                "get",
                format!("Reads {what}."),
                scope.clone(),
                None,
                Answers::Read,
            );
        }
        if sub.serves("create") {
            let args = Self::with(scope.clone(), WRITE_PARAMS);
            let body = Some((schema.clone(), true));
            add(
                "post",
                "create",
                "post",
                format!("Creates {what}."),
                args,
                body,
                Answers::Create,
            );
        }
        if sub.serves("update") {
            let args = Self::with(scope.clone(), WRITE_PARAMS);
            let body = Some((schema.clone(), true));
            add(
                "put",
                "replace",
                "put",
                format!("Replaces {what}."),
                args,
                body,
                Answers::Write,
            );
        }
        if sub.serves("patch") {
            let args = Self::with(scope, PATCH_PARAMS);
            let body = Some((self.meta("Patch"), true));
            add(
                "patch",
                "patch",
                "patch",
                format!("Patches {what}."),
                args,
                body,
                Answers::Write,
            );
        }
        ops
    }

    /// A path item: the parameters all its operations share on the path, the
    /// rest on each operation (the body first, then by name).
    fn render(&self, ops: Vec<Op>) -> Value {
        let shared: Vec<Arg> = ops[0]
            .args
            .iter()
            .filter(|a| {
                ops.iter()
                    .all(|op| op.args.iter().any(|b| b.name() == a.name()))
            })
            .cloned()
            .collect();
        let mut item = Map::new();
        for op in ops {
            let mut own: Vec<&Arg> = op
                .args
                .iter()
                .filter(|a| !shared.iter().any(|s| s.name() == a.name()))
                .collect();
            own.sort_by(|a, b| a.name().cmp(b.name()));
            item.insert(op.method.into(), self.operation(&op, &own));
        }
        if !shared.is_empty() {
            let mut shared = shared;
            shared.sort_by(|a, b| a.name().cmp(b.name()));
            let params: Vec<Value> = shared.iter().map(|a| a.render(self.v3)).collect();
            item.insert("parameters".into(), Value::Array(params));
        }
        Value::Object(item)
    }

    fn operation(&self, op: &Op, args: &[&Arg]) -> Value {
        let produces = if op.streams {
            PRODUCES_STREAMS
        } else {
            PRODUCES
        };
        let consumes: &[&str] = if op.patch { PATCH_TYPES } else { &["*/*"] };
        let mut params: Vec<Value> = Vec::new();
        let mut out = json!({
            "description": op.description,
            "operationId": op.id,
            "tags": [tag(self.info)],
        });
        let mut responses = Map::new();
        for (code, text) in op.answers.codes() {
            let answer = if self.v3 {
                let content: Map<String, Value> = produces
                    .iter()
                    .map(|mt| ((*mt).to_owned(), json!({ "schema": op.response })))
                    .collect();
                json!({ "description": text, "content": content })
            } else {
                json!({ "description": text, "schema": op.response })
            };
            responses.insert((*code).to_owned(), answer);
        }
        if let Some((schema, required)) = &op.body {
            if self.v3 {
                let content: Map<String, Value> = consumes
                    .iter()
                    .map(|mt| ((*mt).to_owned(), json!({ "schema": schema })))
                    .collect();
                let mut body = json!({ "content": content });
                if *required {
                    body["required"] = json!(true);
                }
                out["requestBody"] = body;
            } else {
                let mut body = json!({ "name": "body", "in": "body", "schema": schema });
                if *required {
                    body["required"] = json!(true);
                }
                params.push(body);
            }
        }
        params.extend(args.iter().map(|a| a.render(self.v3)));
        if !params.is_empty() {
            out["parameters"] = Value::Array(params);
        }
        if !self.v3 {
            out["consumes"] = json!(consumes);
            out["produces"] = json!(produces);
        }
        out["responses"] = Value::Object(responses);
        out["x-kubernetes-action"] = json!(op.action);
        out["x-kubernetes-group-version-kind"] = op.gvk.clone();
        out
    }
}

/// The group and version as operation ids spell them: `CoreV1`, `AppsV1`,
/// `RbacAuthorizationV1` (the `.k8s.io` suffix dropped, each part capitalised).
fn id_group_version(info: &ResourceInfo) -> String {
    let mut out: String = group_parts(info).map(capitalize).collect();
    out.push_str(&capitalize(info.version));
    out
}

/// The tag of a group version's operations: `core_v1`, `apps_v1`,
/// `rbacAuthorization_v1`.
fn tag(info: &ResourceInfo) -> String {
    let mut out = String::new();
    for (i, part) in group_parts(info).enumerate() {
        out.push_str(&if i == 0 {
            part.to_owned()
        } else {
            capitalize(part)
        });
    }
    format!("{out}_{}", info.version)
}

fn group_parts(info: &ResourceInfo) -> impl Iterator<Item = &str> {
    let group = if info.group.is_empty() {
        "core"
    } else {
        info.group.trim_end_matches(".k8s.io")
    };
    group.split('.')
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
