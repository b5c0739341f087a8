//! What kube-apiserver's CEL type checker and cost estimator decide about a
//! rule before it is stored: the names it uses exist (`undefined field`,
//! `undeclared reference`), what type it yields (a rule must yield a
//! `bool`), whether it reads `oldSelf`, and the most it can cost on the
//! largest value its schema allows (or, at run time, on the value it is
//! given).
//!
//! The type inference is partial: where it cannot tell, a type is `dyn`
//! and the expression is accepted (cel-go's checker refuses more, such as
//! mismatched operand types). The cost model follows cel-go's shape (one
//! unit per variable, field and call, string work by tenths of its length,
//! comprehensions by their range's size) without its exact constants.

use std::collections::BTreeMap;
use std::sync::Arc;

use cel::Program;
use cel::common::ast::{CallExpr, EntryExpr, Expr, IdedExpr, LiteralValue};

use super::types::{
    CIDR, IP, JSON_DATE_SIZE, MAX_DATETIME_SIZE, MAX_FORMAT_SIZE, MAX_REQUEST_BYTES, NAMED_FORMAT,
    QUANTITY, Ty, URL,
};

/// The functions and operators an expression may call (the CEL standard
/// library, its strings and lists extensions, the optional library and
/// the Kubernetes libraries kapi provides).
const FUNCTIONS: &[&str] = &[
    // operators and the standard library
    "_+_",
    "_-_",
    "_*_",
    "_/_",
    "_%_",
    "-_",
    "!_",
    "_&&_",
    "_||_",
    "_?_:_",
    "_==_",
    "_!=_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "_[_]",
    "@in",
    "@not_strictly_false",
    "size",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "type",
    "dyn",
    "duration",
    "timestamp",
    "matches",
    "contains",
    "startsWith",
    "endsWith",
    "getFullYear",
    "getMonth",
    "getDayOfYear",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
    "exists",
    "all",
    "exists_one",
    "map",
    "filter",
    "has",
    // strings extension
    "charAt",
    "indexOf",
    "lastIndexOf",
    "lowerAscii",
    "upperAscii",
    "replace",
    "split",
    "substring",
    "trim",
    "join",
    "strings.quote",
    "format",
    // Kubernetes lists library (cel-go's own lists extension is not in
    // kube-apiserver 1.32's environment, nor the strings extension's
    // `reverse`)
    "isSorted",
    "sum",
    "min",
    "max",
    // sets extension
    "sets.contains",
    "sets.equivalent",
    "sets.intersects",
    // optional library
    "optional.of",
    "optional.ofNonZeroValue",
    "optional.none",
    "hasValue",
    "value",
    "orValue",
    "or",
    "_?._",
    "_[?_]",
    // Kubernetes regex and quantity libraries
    "find",
    "findAll",
    "isQuantity",
    "quantity",
    "isLessThan",
    "isGreaterThan",
    "compareTo",
    "add",
    "sub",
    "asInteger",
    "asApproximateFloat",
    "isInteger",
    "sign",
    // Kubernetes URL, IP and CIDR libraries
    "isURL",
    "url",
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    "isIP",
    "ip",
    "ip.isCanonical",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "isCIDR",
    "cidr",
    "containsIP",
    "containsCIDR",
    "prefixLength",
    "masked",
    // Kubernetes format library
    "format.named",
    "validate",
    "format.dns1123Label",
    "format.dns1123Subdomain",
    "format.dns1035Label",
    "format.qualifiedName",
    "format.dns1123LabelPrefix",
    "format.dns1123SubdomainPrefix",
    "format.dns1035LabelPrefix",
    "format.labelValue",
    "format.uri",
    "format.uuid",
    "format.byte",
    "format.date",
    "format.datetime",
];

/// The deepest expression a rule may be (cel-go's parser limit): deeper
/// ones are refused when the definition is written, so that no evaluation
/// recurses further.
const MAX_DEPTH: usize = 250;

/// Names that are types, usable as values (`type(x) == int`).
const TYPE_NAMES: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
];

/// What the checker found.
#[derive(Debug)]
pub struct Checked {
    pub ty: Ty,
    /// The most the expression costs.
    pub cost: u64,
    pub uses_old_self: bool,
}

/// A checker error at an expression, as cel-go words it.
struct Issue {
    id: u64,
    message: String,
}

/// Checks `program` with `self` of type `self_ty` and `oldSelf` of type
/// `old_self` (the same type, or an optional of it), giving cel-go's error
/// text (`ERROR: <input>:1:5: undefined field 'z'` and the source line)
/// when it refers to what does not exist.
pub fn check(program: &Program, self_ty: &Ty, old_self: &Ty) -> Result<Checked, String> {
    let mut checker = Checker::new(
        vec![
            Scope::variable("self", self_ty.clone()),
            Scope::variable("oldSelf", old_self.clone()),
        ],
        false,
    );
    match checker.expr(program.expression()) {
        Ok(node) => Ok(Checked {
            ty: node.ty,
            cost: node.cost,
            uses_old_self: checker.uses_old_self,
        }),
        Err(issue) => Err(locate(program, &issue)),
    }
}

/// Checks `program` with the variables `variables` (name and type), as
/// upstream's type checking of a ValidatingAdmissionPolicy's expressions
/// does: besides names, an operator applied to operands it has no overload
/// for (`'_>_' applied to '(int, string)'`) is an error, where both
/// operands' types are known scalars. The expression's type, or cel-go's
/// error text.
pub fn check_typed(program: &Program, variables: Vec<(String, Ty)>) -> Result<Ty, String> {
    let scopes = variables
        .into_iter()
        .map(|(name, ty)| Scope::variable(&name, ty))
        .collect();
    let mut checker = Checker::new(scopes, true);
    match checker.expr(program.expression()) {
        Ok(node) => Ok(node.ty),
        Err(issue) => Err(locate(program, &issue)),
    }
}

/// cel-go's checker error for operator `name` applied to `args` when it has
/// no overload for them; only scalars are judged (anything else may be
/// dynamic, which every overload takes).
fn no_overload(name: &str, args: &[Ty]) -> Option<String> {
    let scalar = |ty: &Ty| {
        let judged = matches!(
            ty,
            Ty::Bool | Ty::Int | Ty::Uint | Ty::Double | Ty::String { .. } | Ty::Bytes { .. }
        );
        judged.then(|| ty.name())
    };
    let [a, b] = args else {
        return None;
    };
    let (a, b) = (scalar(a)?, scalar(b)?);
    let numeric = |t: &str| matches!(t, "int" | "uint" | "double");
    let fits = match name {
        // Numbers compare across their types.
        "_<_" | "_<=_" | "_>_" | "_>=_" => a == b || (numeric(a) && numeric(b)),
        "_+_" => a == b && a != "bool",
        "_-_" | "_*_" | "_/_" => a == b && numeric(a),
        "_%_" => a == b && matches!(a, "int" | "uint"),
        _ => return None,
    };
    (!fits).then(|| format!("found no matching overload for '{name}' applied to '({a}, {b})'"))
}

/// cel-go's error text: the position, the message and the source line with
/// a caret under the column.
fn locate(program: &Program, issue: &Issue) -> String {
    let source = &program.source_info().source;
    let offset = program
        .source_info()
        .offset_for(issue.id)
        .map_or(0, |(start, _)| start as usize);
    let mut line_no = 1;
    let mut column = offset;
    let mut line_text = source.lines().next().unwrap_or("");
    let mut seen = 0;
    for (i, line) in source.split_inclusive('\n').enumerate() {
        let chars = line.chars().count();
        if offset < seen + chars {
            line_no = i + 1;
            column = offset - seen;
            line_text = line.trim_end_matches('\n');
            break;
        }
        seen += chars;
    }
    format!(
        "ERROR: <input>:{line_no}:{}: {}\n | {line_text}\n | {}^",
        column + 1,
        issue.message,
        ".".repeat(column)
    )
}

/// A size range, as cel-go's `SizeEstimate`: a string's or bytes' length,
/// a list's or map's entries.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Size {
    min: u64,
    max: u64,
}

impl Size {
    const UNKNOWN: Size = Size {
        min: 0,
        max: u64::MAX,
    };

    fn exact(n: u64) -> Size {
        Size { min: n, max: n }
    }

    fn add(self, other: Size) -> Size {
        Size {
            min: self.min.saturating_add(other.min),
            max: self.max.saturating_add(other.max),
        }
    }

    fn mul(self, other: Size) -> Size {
        Size {
            min: self.min.saturating_mul(other.min),
            max: self.max.saturating_mul(other.max),
        }
    }

    fn union(self, other: Size) -> Size {
        Size {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The largest cost of work proportional to the size, `per` units
    /// each, rounded up (cel-go's `MultiplyByCostFactor`).
    fn times(self, per: f64) -> u64 {
        by_factor(self.max, per)
    }
}

/// `n * per` rounded up, saturating (cel-go's `multiplyByCostFactor`).
pub(super) fn by_factor(n: u64, per: f64) -> u64 {
    let product = (n as f64 * per).ceil();
    if product >= u64::MAX as f64 {
        u64::MAX
    } else {
        product as u64
    }
}

/// cel-go's cost of walking one character of a string.
pub(super) const STRING_TRAVERSAL: f64 = 0.1;
/// cel-go's guess of a regular expression's cost per character.
pub(super) const REGEX_PER_CHAR: f64 = 0.25;
/// The CEL sizes of a list literal's, a map literal's and a message's
/// creation (cel-go's `ListCreateBaseCost` and the others).
pub(super) const LIST_CREATE: u64 = 10;
pub(super) const MAP_CREATE: u64 = 30;
pub(super) const STRUCT_CREATE: u64 = 40;
/// What one authorization check costs (Kubernetes' authorizer library).
pub(super) const AUTHZ_CHECK: u64 = 350_000;
/// The longest regular expression behind a named format.
pub(super) const MAX_NAME_FORMAT_REGEX: f64 = 128.0;

/// A step of the path from a variable to a value, as cel-go's cost
/// estimator names them.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// The variable the path starts from.
    Root,
    Field(String),
    Items,
    Keys,
    Values,
}

/// What the checker finds for one expression: its type, the most it can
/// cost, and what tells its size.
struct Node {
    ty: Ty,
    cost: u64,
    /// The size the expression itself shows: a literal's, a list or map
    /// literal's, a call's result or a comprehension's range.
    computed: Option<Size>,
    /// The path from a variable to the value, when the expression reaches
    /// one (its declared type bounds the size).
    path: Option<Vec<Step>>,
}

impl Node {
    fn new(ty: Ty, cost: u64) -> Node {
        Node {
            ty,
            cost,
            computed: None,
            path: None,
        }
    }

    fn at(mut self, path: Option<Vec<Step>>) -> Node {
        self.path = path;
        self
    }

    fn sized(mut self, size: Option<Size>) -> Node {
        self.computed = size;
        self
    }

    /// The path of a value reached from this one by `step`.
    fn child_path(&self, step: Step) -> Vec<Step> {
        let mut path = self.path.clone().unwrap_or_default();
        path.push(step);
        path
    }
}

struct Checker {
    /// Variables in scope, innermost last, each with whether it is a
    /// comprehension's accumulator (which cel-go's estimator gives no path)
    /// and, for an iteration variable, the path of what it ranges over.
    scopes: Vec<Scope>,
    uses_old_self: bool,
    /// Operators on scalars of types they have no overload for are errors.
    overloads: bool,
    /// How deep in the expression the checker is.
    depth: usize,
}

struct Scope {
    name: String,
    ty: Ty,
    /// The path the variable's value has (`None`: the accumulator).
    path: Option<Vec<Step>>,
}

impl Scope {
    fn variable(name: &str, ty: Ty) -> Scope {
        Scope {
            name: name.to_owned(),
            ty,
            path: Some(vec![Step::Root]),
        }
    }
}

type Found = Result<Node, Issue>;

/// The declared size of values of type `ty` reached by a path (what
/// Kubernetes' size estimator gives: `maxLength`, `maxItems`,
/// `maxProperties` or what the largest request holds; nothing for scalars
/// and objects).
fn declared_size(ty: &Ty) -> u64 {
    match ty {
        Ty::String { max } | Ty::Bytes { max } => *max,
        Ty::List { max, .. } | Ty::Map { max, .. } => *max,
        Ty::Timestamp { date: true } => JSON_DATE_SIZE,
        Ty::Timestamp { date: false } | Ty::Duration => MAX_DATETIME_SIZE,
        Ty::IntOrString | Ty::Dyn => MAX_REQUEST_BYTES - 2,
        Ty::Optional(inner) => declared_size(inner),
        _ => 0,
    }
}

/// The type a key of a map has when reached by a path: a string of no
/// declared length.
const MAP_KEY: Ty = Ty::String { max: 0 };

fn is_scalar(ty: &Ty) -> bool {
    matches!(
        ty,
        Ty::Bool | Ty::Double | Ty::Duration | Ty::Int | Ty::Timestamp { .. } | Ty::Uint
    )
}

/// Whether a value of this type may be a string or bytes (what picks the
/// overloads whose cost grows with length).
fn may_be_text(ty: &Ty) -> bool {
    matches!(
        ty,
        Ty::String { .. } | Ty::Bytes { .. } | Ty::Dyn | Ty::IntOrString
    )
}

impl Checker {
    fn new(scopes: Vec<Scope>, overloads: bool) -> Checker {
        Checker {
            scopes,
            uses_old_self: false,
            overloads,
            depth: 0,
        }
    }

    /// The variable `name` (the innermost of that name); the rule's own
    /// `oldSelf` is the second scope entry.
    fn variable(&mut self, name: &str) -> Option<(Ty, Option<Vec<Step>>)> {
        let (i, scope) = self
            .scopes
            .iter()
            .enumerate()
            .rev()
            .find(|(_, s)| s.name == name)?;
        if i == 1 {
            self.uses_old_self = true;
        }
        Some((scope.ty.clone(), scope.path.clone()))
    }

    /// The declared type at `path`, followed from the first variable's
    /// type as Kubernetes' estimator follows it (whatever variable the
    /// path starts from).
    fn declared(&self, path: &[Step]) -> Option<Ty> {
        let mut at = match &self.scopes.first()?.ty {
            Ty::Optional(inner) => (**inner).clone(),
            ty => ty.clone(),
        };
        for step in path.iter().skip(1) {
            at = match (step, &at) {
                (Step::Items | Step::Values, Ty::List { elem, .. }) => (**elem).clone(),
                (Step::Values, Ty::Map { value, .. }) => (**value).clone(),
                (Step::Keys, Ty::Map { .. }) => MAP_KEY,
                (Step::Field(name), Ty::Object { fields, .. }) => fields.get(name)?.clone(),
                _ => return None,
            };
        }
        Some(at)
    }

    /// cel-go's size estimate of `node`: what it shows, else what its
    /// path declares, else one for a scalar, else anything.
    fn size(&self, node: &Node) -> Size {
        if let Some(size) = node.computed {
            return size;
        }
        if let Some(size) = self.declared_size_of(node) {
            return size;
        }
        if is_scalar(&node.ty) {
            return Size::exact(1);
        }
        Size::UNKNOWN
    }

    /// Kubernetes' size estimate of `node` (its library's functions): as
    /// cel-go's, without the scalar rule.
    fn lib_size(&self, node: &Node) -> Size {
        node.computed
            .or_else(|| self.declared_size_of(node))
            .unwrap_or(Size::UNKNOWN)
    }

    fn declared_size_of(&self, node: &Node) -> Option<Size> {
        let ty = self.declared(node.path.as_deref()?)?;
        Some(Size {
            min: 0,
            max: declared_size(&ty),
        })
    }

    fn expr(&mut self, e: &IdedExpr) -> Found {
        if self.depth >= MAX_DEPTH {
            return Err(Issue {
                id: e.id,
                message: format!("expression recursion limit exceeded: {MAX_DEPTH}"),
            });
        }
        self.depth += 1;
        let found = self.expr_at(e);
        self.depth -= 1;
        found
    }

    fn expr_at(&mut self, e: &IdedExpr) -> Found {
        match &e.expr {
            Expr::Literal(literal) => {
                let size = match literal {
                    LiteralValue::String(s) => s.inner().chars().count() as u64,
                    LiteralValue::Bytes(b) => b.inner().len() as u64,
                    _ => 1,
                };
                Ok(Node::new(literal_ty(literal), 0).sized(Some(Size::exact(size))))
            }
            Expr::Ident(name) => {
                if let Some((ty, path)) = self.variable(name) {
                    return Ok(Node::new(ty, 1).at(path));
                }
                if TYPE_NAMES.contains(&name.as_str()) {
                    return Ok(Node::new(Ty::Type, 1).at(Some(vec![Step::Root])));
                }
                Err(undeclared(e.id, name))
            }
            Expr::Select(select) => {
                if let Some(name) = qualified(e)
                    && !self
                        .scopes
                        .iter()
                        .any(|s| Some(s.name.as_str()) == name.split('.').next())
                {
                    // cel-go names the identifier the selection starts from.
                    let mut root = e;
                    while let Expr::Select(inner) = &root.expr {
                        root = &inner.operand;
                    }
                    let root_name = match &root.expr {
                        Expr::Ident(ident) => ident.as_str(),
                        _ => name.as_str(),
                    };
                    return Err(undeclared(root.id, root_name));
                }
                let operand = self.expr(&select.operand)?;
                let ty = field(&operand.ty, &select.field)
                    .map_err(|message| Issue { id: e.id, message })?;
                if select.test {
                    // `has()`: Kubernetes gives presence tests no cost of
                    // their own (cel-go's `PresenceTestHasCost(false)`).
                    return Ok(Node::new(Ty::Bool, operand.cost));
                }
                // Selecting from a map or object costs one; from a value of
                // unknown type, nothing (cel-go's checker knows no more).
                let own = u64::from(matches!(
                    operand.ty,
                    Ty::Map { .. } | Ty::Object { .. } | Ty::Opaque(_)
                ));
                let path = operand.child_path(Step::Field(select.field.clone()));
                Ok(Node::new(ty, operand.cost.saturating_add(own)).at(Some(path)))
            }
            Expr::List(list) => {
                let mut cost = LIST_CREATE;
                let mut elem: Option<Ty> = None;
                for item in &list.elements {
                    let node = self.expr(item)?;
                    cost = cost.saturating_add(node.cost);
                    elem = Some(match elem {
                        None => node.ty,
                        Some(prev) if prev == node.ty => prev,
                        Some(_) => Ty::Dyn,
                    });
                }
                let count = list.elements.len() as u64;
                Ok(Node::new(
                    Ty::List {
                        elem: Arc::new(elem.unwrap_or(Ty::Dyn)),
                        max: count,
                    },
                    cost,
                )
                .sized(Some(Size::exact(count))))
            }
            Expr::Map(map) => {
                let mut cost = MAP_CREATE;
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        cost = cost
                            .saturating_add(self.expr(&entry.key)?.cost)
                            .saturating_add(self.expr(&entry.value)?.cost);
                    }
                }
                let count = map.entries.len() as u64;
                Ok(Node::new(
                    Ty::Map {
                        value: Arc::new(Ty::Dyn),
                        max: count,
                    },
                    cost,
                )
                .sized(Some(Size::exact(count))))
            }
            Expr::Struct(_) => Ok(Node::new(Ty::Dyn, STRUCT_CREATE)),
            Expr::Comprehension(c) => {
                let range = self.expr(&c.iter_range)?;
                let init = self.expr(&c.accu_init)?;
                let iter_ty = match &range.ty {
                    Ty::List { elem, .. } => (**elem).clone(),
                    Ty::Map { .. } | Ty::Object { .. } => Ty::String {
                        max: MAX_REQUEST_BYTES - 2,
                    },
                    _ => Ty::Dyn,
                };
                let iter_path = match &range.ty {
                    Ty::Map { .. } | Ty::Object { .. } => range.child_path(Step::Keys),
                    _ => range.child_path(Step::Items),
                };
                let count = self.size(&range);
                self.scopes.push(Scope {
                    name: c.iter_var.clone(),
                    ty: iter_ty,
                    path: Some(iter_path),
                });
                if let Some(second) = &c.iter_var2 {
                    self.scopes.push(Scope {
                        name: second.clone(),
                        ty: Ty::Dyn,
                        path: None,
                    });
                }
                self.scopes.push(Scope {
                    name: c.accu_var.clone(),
                    ty: init.ty.clone(),
                    path: None,
                });
                let cond = self.expr(&c.loop_cond);
                let step = self.expr(&c.loop_step);
                // The result sees the accumulator but not the iteration
                // variables.
                let accu = self.scopes.pop();
                if c.iter_var2.is_some() {
                    self.scopes.pop();
                }
                self.scopes.pop();
                self.scopes.extend(accu);
                let result = self.expr(&c.result);
                self.scopes.pop();
                let (cond, step, result) = (cond?, step?, result?);
                let per_item = cond.cost.saturating_add(step.cost);
                let cost = range
                    .cost
                    .saturating_add(init.cost)
                    .saturating_add(result.cost)
                    .saturating_add(count.max.saturating_mul(per_item));
                Ok(Node::new(result.ty, cost).sized(Some(count)))
            }
            Expr::Call(call) => self.call(e.id, call),
            Expr::Unspecified => Ok(Node::new(Ty::Dyn, 0)),
        }
    }

    fn call(&mut self, id: u64, call: &CallExpr) -> Found {
        let qualified_name;
        let mut name = call.func_name.as_str();
        let mut target = None;
        if let Some(t) = &call.target {
            match qualified(t) {
                // `optional.of(x)`, `lists.range(n)`: a namespaced function.
                Some(ns)
                    if !self
                        .scopes
                        .iter()
                        .any(|s| Some(s.name.as_str()) == ns.split('.').next()) =>
                {
                    qualified_name = format!("{ns}.{name}");
                    name = &qualified_name;
                }
                _ => target = Some(self.expr(t)?),
            }
        }
        // Policies also have the authorizer library.
        let known = FUNCTIONS.contains(&name)
            || (self.overloads && super::authz::FUNCTIONS.contains(&name));
        if !known {
            return Err(undeclared(id, name));
        }
        let mut args = Vec::with_capacity(call.args.len());
        for arg in &call.args {
            args.push(self.expr(arg)?);
        }
        if self.overloads {
            let types: Vec<Ty> = args.iter().map(|a| a.ty.clone()).collect();
            if let Some(message) = no_overload(name, &types) {
                return Err(Issue { id, message });
            }
        }
        let ty = self.result_type(name, target.as_ref(), &args, call);
        let arg_costs = args.iter().fold(0u64, |sum, a| sum.saturating_add(a.cost));
        let target_cost = target.as_ref().map_or(0, |t| t.cost);
        let (cost, size) = match name {
            // Short-circuiting: at most both sides, nothing of its own.
            "_&&_" | "_||_" => (arg_costs, None),
            "_?_:_" => match args.as_slice() {
                [cond, yes, no] => (
                    cond.cost.saturating_add(yes.cost.max(no.cost)),
                    Some(self.size(yes).union(self.size(no))),
                ),
                _ => (arg_costs, None),
            },
            _ => {
                let (own, size) = self.call_cost(name, target.as_ref(), &args, call);
                (
                    own.saturating_add(arg_costs).saturating_add(target_cost),
                    size,
                )
            }
        };
        let path = match (name, args.first().map(|a| &a.ty)) {
            ("_[_]", Some(Ty::List { .. })) => args.first().map(|a| a.child_path(Step::Items)),
            ("_[_]", Some(Ty::Map { .. })) => args.first().map(|a| a.child_path(Step::Values)),
            _ => None,
        };
        Ok(Node::new(ty, cost).sized(size).at(path))
    }

    /// What a call costs itself (cel-go's and Kubernetes' estimates of
    /// each function, its operands' own costs aside) and, where they tell
    /// it, the size of its result.
    fn call_cost(
        &self,
        name: &str,
        target: Option<&Node>,
        args: &[Node],
        call: &CallExpr,
    ) -> (u64, Option<Size>) {
        let traversal = |size: Size| size.times(STRING_TRAVERSAL);
        let first = args.first();
        let second = args.get(1);
        match name {
            "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" => {
                let (Some(a), Some(b)) = (first, second) else {
                    return (1, None);
                };
                if name == "_==_"
                    && a.ty == b.ty
                    && let Ty::Opaque(kind) = a.ty
                {
                    // Kubernetes' types compare in constant time, a named
                    // format by its short name, a URL by the right side's
                    // length when the expression shows it.
                    let cost = match kind {
                        NAMED_FORMAT => by_factor(MAX_FORMAT_SIZE, STRING_TRAVERSAL),
                        URL => b
                            .computed
                            .map_or(1, |size| by_factor(size.max, STRING_TRAVERSAL)),
                        _ => 1,
                    };
                    return (cost, None);
                }
                let compared = || {
                    let smallest = self.size(a).max.min(self.size(b).max);
                    by_factor(smallest, STRING_TRAVERSAL)
                };
                let equality = matches!(name, "_==_" | "_!=_");
                let both_text = matches!(
                    (&a.ty, &b.ty),
                    (Ty::String { .. }, Ty::String { .. }) | (Ty::Bytes { .. }, Ty::Bytes { .. })
                );
                if equality || both_text {
                    (compared(), None)
                } else if may_be_text(&a.ty) && may_be_text(&b.ty) {
                    // Either a string comparison or a number's.
                    (compared().max(1), None)
                } else {
                    (1, None)
                }
            }
            "@in" => match second.map(|n| (&n.ty, n)) {
                Some((Ty::List { .. }, list)) => (self.size(list).max, None),
                Some((Ty::Dyn | Ty::IntOrString, list)) => (self.size(list).max.max(1), None),
                _ => (1, None),
            },
            "_+_" => {
                let (Some(a), Some(b)) = (first, second) else {
                    return (1, None);
                };
                let joined = self.size(a).add(self.size(b));
                match (&a.ty, &b.ty) {
                    (Ty::String { .. }, Ty::String { .. })
                    | (Ty::Bytes { .. }, Ty::Bytes { .. }) => (traversal(joined), Some(joined)),
                    (Ty::List { .. }, Ty::List { .. }) => (1, Some(joined)),
                    (x, y)
                        if (may_be_text(x) || matches!(x, Ty::List { .. }))
                            && (may_be_text(y) || matches!(y, Ty::List { .. })) =>
                    {
                        (traversal(joined).max(1), Some(joined))
                    }
                    _ => (1, None),
                }
            }
            "bytes" if matches!(first.map(|a| &a.ty), Some(Ty::String { .. })) => {
                let size = first.map_or(Size::UNKNOWN, |a| self.size(a));
                (
                    traversal(size),
                    Some(Size {
                        min: size.min,
                        max: size.max.saturating_mul(4),
                    }),
                )
            }
            "string" if matches!(first.map(|a| &a.ty), Some(Ty::Bytes { .. })) => {
                let size = first.map_or(Size::UNKNOWN, |a| self.size(a));
                (
                    traversal(size),
                    Some(Size {
                        min: size.min / 4,
                        max: size.max,
                    }),
                )
            }
            "strings.quote" => {
                let size = first.map_or(Size::UNKNOWN, |a| self.size(a));
                (
                    traversal(size),
                    Some(Size {
                        min: size.min.saturating_add(2),
                        max: size.max.saturating_mul(2).saturating_add(2),
                    }),
                )
            }
            "format" => (target.map_or(1, |t| traversal(self.size(t))), None),
            "startsWith" | "endsWith" => (first.map_or(1, |a| traversal(self.size(a))), None),
            // The global form, `matches(s, re)`, is another overload, of
            // constant cost.
            "matches" => match (target, first) {
                (Some(text), Some(regex)) => {
                    let text_cost = traversal(self.size(text).add(Size::exact(1)));
                    let regex_cost = self.size(regex).times(REGEX_PER_CHAR);
                    (text_cost.saturating_mul(regex_cost), None)
                }
                _ => (1, None),
            },
            "contains" => match (target, first) {
                (Some(text), Some(part)) => (
                    traversal(self.size(text)).saturating_mul(traversal(self.size(part))),
                    None,
                ),
                _ => (1, None),
            },
            // cel-go's sets extension: every pair compared (twice for
            // equivalence).
            "sets.contains" | "sets.intersects" | "sets.equivalent" => match (first, second) {
                (Some(a), Some(b)) => {
                    let factor = if name == "sets.equivalent" { 2.0 } else { 1.0 };
                    let pairs = self.lib_size(a).mul(self.lib_size(b));
                    (pairs.times(factor).saturating_add(1), None)
                }
                _ => (1, None),
            },
            // Kubernetes' libraries.
            "check" => (AUTHZ_CHECK, None),
            "fieldSelector" | "labelSelector" if args.len() == 1 => {
                (first.map_or(1, |a| selector_cost(self.lib_size(a))), None)
            }
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => match target {
                Some(
                    list @ Node {
                        ty: Ty::List { elem, .. },
                        ..
                    },
                ) => {
                    let mut each: u64 = 1;
                    if matches!(**elem, Ty::String { .. } | Ty::Bytes { .. }) {
                        let item = Node::new((**elem).clone(), 0)
                            .at(list.path.as_ref().map(|_| list.child_path(Step::Items)));
                        each = each.saturating_add(traversal(self.lib_size(&item)));
                    }
                    (self.lib_size(list).max.saturating_mul(each), None)
                }
                Some(text) => (traversal(self.lib_size(text)), None),
                None => (1, None),
            },
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let size = first.map_or(Size::UNKNOWN, |a| self.lib_size(a));
                (traversal(size), Some(size))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" if target.is_some() => {
                let size = target.map_or(Size::UNKNOWN, |t| self.lib_size(t));
                (traversal(size), Some(size))
            }
            "replace" if target.is_some() && args.len() >= 2 => {
                let size = target.map_or(Size::UNKNOWN, |t| self.lib_size(t));
                let (from, to) = (
                    first.map_or(Size::UNKNOWN, |a| self.lib_size(a)),
                    second.map_or(Size::UNKNOWN, |a| self.lib_size(a)),
                );
                (
                    size.times(2.0 * STRING_TRAVERSAL),
                    Some(replaced_size(size, from, to)),
                )
            }
            "split" if target.is_some() => {
                let size = target.map_or(Size::UNKNOWN, |t| self.lib_size(t));
                let mut max = size.max;
                if let Some(IdedExpr {
                    expr: Expr::Literal(LiteralValue::Int(limit)),
                    ..
                }) = call.args.get(1)
                {
                    max = i64::from(*limit) as u64;
                }
                (
                    size.times(2.0 * STRING_TRAVERSAL),
                    Some(Size { min: 0, max }),
                )
            }
            "join" if target.is_some() => {
                let Some(list) = target else {
                    return (1, None);
                };
                let count = self.lib_size(list);
                let mut size = Size::exact(0);
                if let Ty::List { elem, .. } = &list.ty {
                    let item = Node::new((**elem).clone(), 0)
                        .at(list.path.as_ref().map(|_| list.child_path(Step::Items)));
                    size = count.mul(self.lib_size(&item));
                }
                if let Some(separator) = first {
                    let separators = Size {
                        min: count.min.saturating_sub(1),
                        max: count.max.saturating_sub(1),
                    };
                    size = size.add(self.lib_size(separator).mul(separators));
                }
                (traversal(size), Some(size))
            }
            "find" | "findAll" if target.is_some() && !args.is_empty() => {
                let size = target.map_or(Size::UNKNOWN, |t| self.lib_size(t));
                let text_cost = traversal(size.add(Size::exact(1)));
                let regex_cost = first.map_or(1, |a| self.lib_size(a).times(REGEX_PER_CHAR));
                (
                    text_cost.saturating_mul(regex_cost),
                    Some(Size {
                        min: 0,
                        max: size.max,
                    }),
                )
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" => {
                (first.map_or(1, |a| traversal(self.lib_size(a))), None)
            }
            "ip" => match first {
                Some(text) => (traversal(self.lib_size(text)), None),
                // A CIDR's address.
                None => (1, None),
            },
            "ip.isCanonical" => (
                first.map_or(1, |a| self.lib_size(a).times(2.0 * STRING_TRAVERSAL)),
                None,
            ),
            "containsIP" | "containsCIDR" => {
                // Two addresses of 4 to 16 bytes compared, a CIDR's prefix
                // once more, and a string argument parsed.
                let mut cost = by_factor(32, STRING_TRAVERSAL);
                if name == "containsCIDR" {
                    cost += by_factor(16, STRING_TRAVERSAL) + 1;
                }
                if let Some(
                    arg @ Node {
                        ty: Ty::String { .. },
                        ..
                    },
                ) = first
                {
                    cost = cost.saturating_add(traversal(self.lib_size(arg)));
                }
                (cost, None)
            }
            "validate" => (
                first.map_or(1, |a| {
                    by_factor(
                        traversal(self.lib_size(a)),
                        MAX_NAME_FORMAT_REGEX * REGEX_PER_CHAR,
                    )
                }),
                None,
            ),
            // Everything else takes constant time.
            _ => (1, None),
        }
    }

    /// The type a call yields.
    fn result_type(&self, name: &str, target: Option<&Node>, args: &[Node], call: &CallExpr) -> Ty {
        let recv = target.map(|t| &t.ty);
        let first = recv.or(args.first().map(|a| &a.ty));
        let arg = |i: usize| args.get(i).map(|a| &a.ty);
        let text = |max: u64| Ty::String { max };
        let size_of = |ty: Option<&Ty>| ty.and_then(Ty::size).unwrap_or(0);
        match name {
            "_&&_"
            | "_||_"
            | "!_"
            | "@not_strictly_false"
            | "_==_"
            | "_!=_"
            | "_<_"
            | "_<=_"
            | "_>_"
            | "_>=_"
            | "@in" => Ty::Bool,
            "_?_:_" => match (arg(1), arg(2)) {
                (Some(a), Some(b)) if a == b => a.clone(),
                _ => Ty::Dyn,
            },
            "_+_" => match (arg(0), arg(1)) {
                (Some(Ty::String { max: a }), Some(Ty::String { max: b })) => {
                    text(a.saturating_add(*b))
                }
                (Some(Ty::List { elem, max: a }), Some(Ty::List { max: b, .. })) => Ty::List {
                    elem: elem.clone(),
                    max: a.saturating_add(*b),
                },
                (Some(Ty::Timestamp { .. }), _) | (_, Some(Ty::Timestamp { .. })) => {
                    Ty::Timestamp { date: false }
                }
                (Some(a), Some(b)) if a == b => a.clone(),
                _ => Ty::Dyn,
            },
            "_-_" => match (arg(0), arg(1)) {
                (Some(Ty::Timestamp { .. }), Some(Ty::Timestamp { .. })) => Ty::Duration,
                (Some(Ty::Timestamp { .. }), Some(Ty::Duration)) => Ty::Timestamp { date: false },
                (Some(a), Some(b)) if a == b => a.clone(),
                _ => Ty::Dyn,
            },
            "_*_" | "_/_" | "_%_" => match (arg(0), arg(1)) {
                (Some(a), Some(b)) if a == b => a.clone(),
                _ => Ty::Dyn,
            },
            "-_" => arg(0).cloned().unwrap_or(Ty::Dyn),
            "_[_]" => match arg(0) {
                Some(Ty::List { elem, .. }) => (**elem).clone(),
                Some(Ty::Map { value, .. }) => (**value).clone(),
                _ => Ty::Dyn,
            },
            "_?._" | "_[?_]" => {
                let ty = match (arg(0), call.args.get(1).map(|a| &a.expr)) {
                    (Some(t), Some(Expr::Literal(LiteralValue::String(f)))) if name == "_?._" => {
                        field(t, f.inner()).unwrap_or(Ty::Dyn)
                    }
                    (Some(Ty::List { elem, .. }), _) => (**elem).clone(),
                    (Some(Ty::Map { value, .. }), _) => (**value).clone(),
                    _ => Ty::Dyn,
                };
                Ty::Optional(Arc::new(ty))
            }
            "size" | "int" | "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth"
            | "getDate" | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds"
            | "getMilliseconds" | "asInteger" | "sign" | "compareTo" | "indexOf"
            | "lastIndexOf" | "family" | "prefixLength" => Ty::Int,
            "uint" => Ty::Uint,
            "double" | "asApproximateFloat" => Ty::Double,
            "bool"
            | "isQuantity"
            | "isLessThan"
            | "isGreaterThan"
            | "isInteger"
            | "hasValue"
            | "isURL"
            | "isIP"
            | "ip.isCanonical"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast"
            | "isCIDR"
            | "containsIP"
            | "containsCIDR"
            | "contains"
            | "startsWith"
            | "endsWith"
            | "matches"
            | "isSorted"
            | "exists"
            | "all"
            | "exists_one"
            | "sets.contains"
            | "sets.equivalent"
            | "sets.intersects" => Ty::Bool,
            "getScheme" | "getHost" | "getHostname" | "getPort" | "getEscapedPath" => {
                text(MAX_REQUEST_BYTES)
            }
            // A conversion's result is sized only when it is a string
            // already; otherwise it is unbounded, as cel-go estimates it.
            "string" => match first {
                Some(Ty::String { max }) => text(*max),
                _ => text(u64::MAX / 2),
            },
            "bytes" => Ty::Bytes {
                max: size_of(first),
            },
            "duration" => Ty::Duration,
            "timestamp" => Ty::Timestamp { date: false },
            "type" => Ty::Type,
            "dyn" => Ty::Dyn,
            "find" => text(size_of(first)),
            "findAll" | "split" => Ty::List {
                elem: Arc::new(text(size_of(first))),
                max: size_of(first),
            },
            // A list of strings joined: every element's length, at most.
            "join" => match first {
                Some(Ty::List { elem, max }) => text(max.saturating_mul(elem.size().unwrap_or(0))),
                _ => text(size_of(first)),
            },
            // The problems a format finds: messages of unknown number and
            // length (as cel-go estimates them).
            "validate" => {
                let problems = Ty::List {
                    elem: Arc::new(text(MAX_REQUEST_BYTES)),
                    max: MAX_REQUEST_BYTES,
                };
                Ty::Optional(Arc::new(problems))
            }
            "charAt" | "lowerAscii" | "upperAscii" | "replace" | "substring" | "trim"
            | "strings.quote" | "format" => text(size_of(first)),
            "sum" | "min" | "max" => match first {
                Some(Ty::List { elem, .. }) => (**elem).clone(),
                _ => Ty::Dyn,
            },
            "optional.of" | "optional.ofNonZeroValue" => {
                Ty::Optional(Arc::new(arg(0).cloned().unwrap_or(Ty::Dyn)))
            }
            "optional.none" => Ty::Optional(Arc::new(Ty::Dyn)),
            "value" | "orValue" => match recv {
                Some(Ty::Optional(inner)) => (**inner).clone(),
                _ => Ty::Dyn,
            },
            "or" => recv.cloned().unwrap_or(Ty::Dyn),
            "quantity" | "add" | "sub" => Ty::Opaque(QUANTITY),
            "ip" => Ty::Opaque(IP),
            "cidr" | "masked" => Ty::Opaque(CIDR),
            "url" => Ty::Opaque(URL),
            "format.named" => Ty::Optional(Arc::new(Ty::Opaque(NAMED_FORMAT))),
            n if n.starts_with("format.") => Ty::Opaque(NAMED_FORMAT),
            _ => Ty::Dyn,
        }
    }
}

/// What parsing a label or field selector of `length` characters costs
/// (Kubernetes' authorizer library: the parse, and each requirement's
/// list and struct).
fn selector_cost(length: Size) -> u64 {
    let parse = length.times(STRING_TRAVERSAL);
    let requirements = length.times(0.5);
    let each = by_factor(requirements, (LIST_CREATE + STRUCT_CREATE) as f64);
    LIST_CREATE.saturating_add(parse).saturating_add(each)
}

/// The size of `text.replace(from, to)` (Kubernetes' strings library
/// estimate: as many replacements as fit, each as long as it can be).
fn replaced_size(text: Size, from: Size, to: Size) -> Size {
    let (mut count, mut kept) = (Size::exact(0), Size::exact(0));
    if from.min == 0 {
        count.max = text.max.saturating_add(1);
        kept.max = text.max;
    } else if to.max <= from.min {
        count.max = 0;
        kept.max = text.max;
    } else {
        count.max = (text.max as f64 / from.min as f64).ceil() as u64;
    }
    if from.max == 0 {
        count.min = text.min.saturating_add(1);
        kept.min = text.min;
    } else if from.max <= to.min {
        count.min = 0;
        kept.min = text.min;
    } else {
        count.min = (text.min as f64 / from.max as f64).ceil() as u64;
    }
    count.mul(to).add(kept)
}

/// The type of field `name` of a value of type `ty`, or cel-go's error.
fn field(ty: &Ty, name: &str) -> Result<Ty, String> {
    match ty {
        Ty::Object { fields, .. } => fields
            .get(name)
            .cloned()
            .ok_or_else(|| format!("undefined field '{name}'")),
        Ty::Map { value, .. } => Ok((**value).clone()),
        Ty::Dyn | Ty::IntOrString => Ok(Ty::Dyn),
        Ty::Optional(inner) => field(inner, name).map(|t| Ty::Optional(Arc::new(t))),
        other => Err(format!(
            "type '{}' does not support field selection",
            other.name()
        )),
    }
}

fn undeclared(id: u64, name: &str) -> Issue {
    Issue {
        id,
        message: format!("undeclared reference to '{name}' (in container '')"),
    }
}

/// `a.b.c` as the name it spells, when the expression is only identifiers
/// and field selections.
fn qualified(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(select) if !select.test => {
            Some(format!("{}.{}", qualified(&select.operand)?, select.field))
        }
        _ => None,
    }
}

fn literal_ty(literal: &LiteralValue) -> Ty {
    match literal {
        LiteralValue::Boolean(_) => Ty::Bool,
        LiteralValue::Bytes(b) => Ty::Bytes {
            max: b.inner().len() as u64,
        },
        LiteralValue::Double(_) => Ty::Double,
        LiteralValue::Int(_) => Ty::Int,
        LiteralValue::Null => Ty::Null,
        LiteralValue::String(s) => Ty::String {
            max: s.inner().len() as u64,
        },
        LiteralValue::UInt(_) => Ty::Uint,
    }
}

/// A map of field types, for tests and callers building object types.
pub fn object(fields: impl IntoIterator<Item = (&'static str, Ty)>) -> Ty {
    let fields: BTreeMap<String, Ty> = fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    let max = fields.len() as u64;
    Ty::Object {
        fields: Arc::new(fields),
        max,
    }
}

#[cfg(test)]
mod typed_tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn deployment() -> Vec<(String, Ty)> {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}});
        vec![("object".to_owned(), Ty::of_schema(&schema))]
    }

    fn checked(text: &str) -> Result<Ty, String> {
        check_typed(&crate::custom::cel::parse(text).unwrap(), deployment())
    }

    #[test]
    fn operators_without_an_overload_are_worded_as_cel_go() {
        assert_eq!(
            checked("object.spec.replicas > '1'").unwrap_err(),
            "ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n \
             | object.spec.replicas > '1'\n | .....................^"
        );
        assert_eq!(
            checked("'wants replicas > 1, got ' + object.spec.replicas").unwrap_err(),
            "ERROR: <input>:1:28: found no matching overload for '_+_' applied to '(string, int)'\n \
             | 'wants replicas > 1, got ' + object.spec.replicas\n \
             | ...........................^"
        );
        assert_eq!(
            checked("object.spec.maxRetries < 10").unwrap_err(),
            "ERROR: <input>:1:12: undefined field 'maxRetries'\n \
             | object.spec.maxRetries < 10\n | ...........^"
        );
        assert_eq!(checked("object.spec.replicas > 1").unwrap(), Ty::Bool);
        assert_eq!(checked("object.spec.replicas > 1.5").unwrap(), Ty::Bool);
        assert!(checked("object.spec.replicas + 1.5 > 2.0").is_err());
        assert!(checked("object.spec.replicas + 1 > 2").is_ok());
        let e = checked("params.x > 1").unwrap_err();
        assert!(
            e.contains("undeclared reference to 'params' (in container '')"),
            "{e}"
        );
    }
}

/// Estimated costs of single rules, against the figures kube-apiserver's
/// own tests expect of cel-go's estimator (apiextensions-apiserver's
/// `TestCostEstimation`): each schema without limits, and with the limit
/// given set as `maxItems`, `maxProperties` or `maxLength`.
#[cfg(test)]
mod cost_tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::{Value, json};

    use crate::custom::cel::NodeRules;

    /// The type and format of a schema named as the upstream table names
    /// them.
    fn scalar(kind: &str) -> Value {
        match kind {
            "duration" | "date" | "date-time" => json!({"type": "string", "format": kind}),
            "int-or-string" => json!({"x-kubernetes-int-or-string": true}),
            _ => json!({"type": kind}),
        }
    }

    fn with(mut schema: Value, key: &str, max: Option<u64>) -> Value {
        if let Some(max) = max {
            schema[key] = json!(max);
        }
        schema
    }

    fn array(items: Value, max: Option<u64>) -> Value {
        with(json!({"type": "array", "items": items}), "maxItems", max)
    }

    fn map(values: Value, max: Option<u64>) -> Value {
        with(
            json!({"type": "object", "additionalProperties": values}),
            "maxProperties",
            max,
        )
    }

    fn required_optional() -> Value {
        json!({"type": "object", "required": ["required"], "properties": {
            "required": {"type": "string"}, "optional": {"type": "string"}}})
    }

    fn cost(mut schema: Value, rule: &str) -> u64 {
        schema["x-kubernetes-validations"] = json!([{"rule": rule}]);
        let (_, results) = NodeRules::compile(&schema, false);
        match results.into_iter().next() {
            Some(Ok(costs)) => costs.rule,
            other => panic!("{rule}: {other:?}"),
        }
    }

    /// A schema (given the limit to set, if any), a rule, its cost
    /// without limits, the limit, its cost with it.
    type Case = (
        Box<dyn Fn(Option<u64>) -> Value>,
        &'static str,
        u64,
        u64,
        u64,
    );

    #[test]
    fn rule_costs_are_estimated_as_cel_go_estimates_them() {
        let array_of = |kind: &'static str| move |max| array(scalar(kind), max);
        let cases: Vec<Case> = vec![
            (
                Box::new(array_of("number")),
                "self.all(x, true)",
                4718591,
                10,
                32,
            ),
            (
                Box::new(array_of("string")),
                "self.all(x, true)",
                3145727,
                20,
                62,
            ),
            (
                Box::new(array_of("boolean")),
                "self.all(x, true)",
                1887437,
                5,
                17,
            ),
            (
                Box::new(|max| array(json!({"type": "array", "items": {"type": "number"}}), max)),
                "self.all(x, true)",
                3145727,
                100,
                302,
            ),
            (
                Box::new(|max| array(required_optional(), max)),
                "self.all(x, true)",
                555128,
                50,
                152,
            ),
            (
                Box::new(|max| map(scalar("number"), max)),
                "self.all(x, true)",
                1348169,
                10,
                32,
            ),
            (
                Box::new(|max| map(scalar("string"), max)),
                "self.all(x, true)",
                1179647,
                3,
                11,
            ),
            (
                Box::new(|max| map(scalar("boolean"), max)),
                "self.all(x, true)",
                943718,
                100,
                302,
            ),
            (
                Box::new(|max| with(json!({"type": "string"}), "maxLength", max)),
                "self.contains('test')",
                314574,
                10,
                5,
            ),
            (
                Box::new(|max| with(json!({"type": "string"}), "maxLength", max)),
                "self.startsWith('test')",
                2,
                15,
                2,
            ),
            (
                Box::new(|max| with(json!({"type": "string"}), "maxLength", max)),
                r#"size(self + "hello") > size("hello")"#,
                314578,
                4,
                7,
            ),
            (Box::new(array_of("number")), "self[1] == 0.0", 2, 5000, 2),
            (
                Box::new(array_of("string")),
                "self[1] == self[1]",
                314577,
                8,
                314577,
            ),
            (
                Box::new(|max| with(json!({"type": "string"}), "maxLength", max)),
                r#"self.matches("x")"#,
                314574,
                50,
                22,
            ),
            (
                Box::new(|max| with(json!({"type": "string"}), "maxLength", max)),
                r#""".matches("(((((((((())))))))))[0-9]")"#,
                7,
                10,
                7,
            ),
            (
                Box::new(|max| with(json!({"type": "string"}), "maxLength", max)),
                r#"self.matches("")"#,
                1,
                100,
                1,
            ),
            (
                Box::new(|max| map(with(json!({"type": "string"}), "maxLength", max), max)),
                "self.all(x, x.contains(self[x]))",
                2752507,
                10,
                72,
            ),
            (Box::new(array_of("number")), "self[3] == 0.0", 2, 0, 2),
            (
                Box::new(|max| map(scalar("number"), max)),
                r#"self["x"] == 0.0"#,
                2,
                0,
                2,
            ),
            (
                Box::new(|max| with(json!({"type": "string"}), "maxLength", max)),
                r#"self == "x""#,
                2,
                0,
                1,
            ),
            (
                Box::new(|max| {
                    with(
                        json!({"type": "string", "format": "byte"}),
                        "maxLength",
                        max,
                    )
                }),
                r#"self == b"x""#,
                2,
                0,
                1,
            ),
            (
                Box::new(array_of("number")),
                "self.all(x, x == 0.0)",
                6291454,
                3 * 1024 * 2048,
                25165826,
            ),
            (
                Box::new(|max| {
                    let inner = with(required_optional(), "maxProperties", max);
                    array(map(inner, max), max)
                }),
                r#"self.all(x, x["y"].required == "z")"#,
                7340027,
                10,
                72,
            ),
            (
                Box::new(|max| array(map(required_optional(), max), None)),
                r#"self.all(x, x["y"].required == "z")"#,
                7340027,
                10,
                7340027,
            ),
            (
                Box::new(array_of("int-or-string")),
                "self.all(x, true)",
                4718591,
                10,
                32,
            ),
            (
                Box::new(array_of("int-or-string")),
                "self[0] == 5",
                3,
                10,
                3,
            ),
            (Box::new(array_of("boolean")), "self[0] == false", 2, 25, 2),
            (
                Box::new(|max| array(required_optional(), max)),
                "self[0] == null",
                2,
                422,
                2,
            ),
            (
                Box::new(|max| array(json!({"type": "array", "items": {"type": "number"}}), max)),
                "self[0][0] == -1.0",
                3,
                51,
                3,
            ),
            (
                Box::new(|max| array(map(scalar("number"), None), max)),
                "self.all(x, x.y == 25.2)",
                6291452,
                12,
                74,
            ),
            (
                Box::new(|max| array(map(scalar("number"), None), max)),
                "self[0].x > 2.0",
                4,
                3000,
                4,
            ),
            (
                Box::new(array_of("duration")),
                "self.all(x, true)",
                2359295,
                5,
                17,
            ),
            (
                Box::new(array_of("duration")),
                "self[0].getHours() == 2",
                4,
                525,
                4,
            ),
            (
                Box::new(array_of("date")),
                "self.all(x, true)",
                725936,
                15,
                47,
            ),
            (
                Box::new(array_of("date")),
                "self[2].getDayOfMonth() == 13",
                4,
                42,
                4,
            ),
            (
                Box::new(array_of("date-time")),
                "self.all(x, true)",
                428963,
                25,
                77,
            ),
            (
                Box::new(array_of("date-time")),
                "self[2].getMinutes() == 45",
                4,
                99,
                4,
            ),
            (
                Box::new(|max| map(scalar("int-or-string"), max)),
                "self.all(x, true)",
                1348169,
                15,
                47,
            ),
            (
                Box::new(|max| map(required_optional(), max)),
                "self.all(x, true)",
                428963,
                20,
                62,
            ),
            (
                Box::new(|max| map(map(scalar("number"), None), max)),
                "self.all(x, true)",
                1179647,
                10,
                32,
            ),
            (
                Box::new(|max| map(array(scalar("number"), None), max)),
                "self.all(x, true)",
                1179647,
                25,
                77,
            ),
            (
                Box::new(|max| map(scalar("duration"), max)),
                "self.all(x, true)",
                1048577,
                5,
                17,
            ),
            (
                Box::new(|max| map(scalar("date"), max)),
                "self.all(x, true)",
                524288,
                10,
                32,
            ),
            (
                Box::new(|max| map(scalar("date-time"), max)),
                "self.all(x, true)",
                349526,
                25,
                77,
            ),
            (
                Box::new(|max| with(json!({"type": "string"}), "maxLength", max)),
                "self.find('[0-9]+') == ''",
                629147,
                10,
                11,
            ),
            (
                Box::new(|max| array(with(json!({"type": "string"}), "maxLength", max), max)),
                "self.join(' ') == 'aa bb'",
                329853068905,
                10,
                43,
            ),
            (
                Box::new(|max| array(with(json!({"type": "string"}), "maxLength", max), max)),
                "self.isSorted() == true",
                329854432052,
                10,
                52,
            ),
            (
                Box::new(|max| {
                    json!({"type": "object", "properties": {
                        "str": with(json!({"type": "string"}), "maxLength", max),
                        "before": {"type": "string", "maxLength": 2},
                        "after": {"type": "string", "maxLength": 4}}})
                }),
                "self.str.replace(self.before, self.after) == 'does not matter'",
                629154,
                4,
                12,
            ),
            (
                Box::new(|max| {
                    let text = with(json!({"type": "string"}), "maxLength", max);
                    json!({"type": "object", "properties": {"str": text.clone(), "separator": text}})
                }),
                "self.str.split(self.separator) == []",
                629160,
                10,
                22,
            ),
            (
                Box::new(|max| with(json!({"type": "string"}), "maxLength", max)),
                "self.lowerAscii() == 'lower!'",
                314575,
                10,
                6,
            ),
            (
                Box::new(|max| map(scalar("integer"), max)),
                "oldSelf.size() == self.size()",
                5,
                10,
                5,
            ),
            (
                Box::new(|max| map(scalar("date-time"), max)),
                r#"self["a"] == self["b"]"#,
                8,
                7,
                8,
            ),
            (
                Box::new(|max| map(scalar("duration"), max)),
                r#"self["c"] == self["d"]"#,
                8,
                42,
                8,
            ),
            (
                Box::new(|max| {
                    with(
                        json!({"type": "string", "enum": ["A", "B", "C", "LongValue"]}),
                        "maxLength",
                        max,
                    )
                }),
                "self.contains('A')",
                2,
                1000,
                401,
            ),
        ];
        let mut wrong = Vec::new();
        for (schema, rule, unbounded, limit, bounded) in &cases {
            let got = cost(schema(None), rule);
            if got != *unbounded {
                wrong.push(format!("{rule} (no limits): {got}, cel-go {unbounded}"));
            }
            let got = cost(schema(Some(*limit)), rule);
            if got != *bounded {
                wrong.push(format!("{rule} (limit {limit}): {got}, cel-go {bounded}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn nested_loops_on_unbounded_lists_exceed_the_limit() {
        let numbers = |max| array(json!({"type": "number"}), max);
        assert!(cost(numbers(None), "self.all(x, self.all(y, true))") > 100_000_000);
        assert_eq!(
            cost(numbers(Some(10)), "self.all(x, self.all(y, true))"),
            352
        );
        assert!(cost(numbers(None), "self.all(x, self.all(y, self.all(z, true)))") > 100_000_000);
        assert_eq!(
            cost(
                numbers(Some(10)),
                "self.all(x, self.all(y, self.all(z, true)))"
            ),
            3552
        );
    }
}
