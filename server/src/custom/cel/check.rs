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

use super::types::{MAX_REQUEST_BYTES, Ty};

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
    "reverse",
    "strings.quote",
    "format",
    // lists extension and Kubernetes lists library
    "slice",
    "flatten",
    "distinct",
    "sort",
    "sortBy",
    "lists.range",
    "isSorted",
    "sum",
    "min",
    "max",
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
    let mut checker = Checker {
        scopes: vec![
            ("self".to_owned(), self_ty.clone()),
            ("oldSelf".to_owned(), old_self.clone()),
        ],
        uses_old_self: false,
        lenient: false,
        overloads: false,
        depth: 0,
    };
    match checker.expr(program.expression()) {
        Ok((ty, cost)) => Ok(Checked {
            ty,
            cost,
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
    let mut checker = Checker {
        scopes: variables,
        uses_old_self: false,
        lenient: false,
        overloads: true,
        depth: 0,
    };
    match checker.expr(program.expression()) {
        Ok((ty, _)) => Ok(ty),
        Err(issue) => Err(locate(program, &issue)),
    }
}

/// The cost of `program` on the given values' types (sized by what they
/// hold, [`Ty::sized`]), for the run-time bound: the estimate on the
/// values at hand, which bounds what the evaluation can cost (a rule that
/// stops early costs less than this).
pub fn cost_of(program: &Program, self_ty: &Ty, old_self: &Ty) -> u64 {
    let mut checker = Checker {
        scopes: vec![
            ("self".to_owned(), self_ty.clone()),
            ("oldSelf".to_owned(), old_self.clone()),
        ],
        uses_old_self: false,
        lenient: true,
        overloads: false,
        depth: 0,
    };
    checker
        .expr(program.expression())
        .map(|(_, cost)| cost)
        .unwrap_or(0)
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

struct Checker {
    /// Variables in scope, innermost last.
    scopes: Vec<(String, Ty)>,
    uses_old_self: bool,
    /// Fields missing from an object type are null, not errors (the type
    /// is a value's, which may leave fields out).
    lenient: bool,
    /// Operators on scalars of types they have no overload for are errors.
    overloads: bool,
    /// How deep in the expression the checker is.
    depth: usize,
}

type Found = Result<(Ty, u64), Issue>;

impl Checker {
    /// The type of variable `name` (the innermost of that name); the
    /// rule's own `oldSelf` is the second scope entry.
    fn variable(&mut self, name: &str) -> Option<Ty> {
        let (i, (_, ty)) = self
            .scopes
            .iter()
            .enumerate()
            .rev()
            .find(|(_, (n, _))| n == name)?;
        if i == 1 {
            self.uses_old_self = true;
        }
        Some(ty.clone())
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
            Expr::Literal(literal) => Ok((literal_ty(literal), 0)),
            Expr::Ident(name) => {
                if let Some(ty) = self.variable(name) {
                    return Ok((ty, 1));
                }
                if TYPE_NAMES.contains(&name.as_str()) {
                    return Ok((Ty::Type, 1));
                }
                Err(undeclared(e.id, name))
            }
            Expr::Select(select) => {
                if let Some(name) = qualified(e)
                    && !self
                        .scopes
                        .iter()
                        .any(|(n, _)| Some(n.as_str()) == name.split('.').next())
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
                let (operand, cost) = self.expr(&select.operand)?;
                let ty = match field(&operand, &select.field) {
                    Ok(ty) => ty,
                    Err(_) if self.lenient => Ty::Null,
                    Err(message) => return Err(Issue { id: e.id, message }),
                };
                Ok((if select.test { Ty::Bool } else { ty }, cost + 1))
            }
            Expr::List(list) => {
                let mut cost: u64 = 10;
                let mut elem: Option<Ty> = None;
                for item in &list.elements {
                    let (ty, c) = self.expr(item)?;
                    cost = cost.saturating_add(c);
                    elem = Some(match elem {
                        None => ty,
                        Some(prev) if prev == ty => prev,
                        Some(_) => Ty::Dyn,
                    });
                }
                Ok((
                    Ty::List {
                        elem: Arc::new(elem.unwrap_or(Ty::Dyn)),
                        max: list.elements.len() as u64,
                    },
                    cost,
                ))
            }
            Expr::Map(map) => {
                let mut cost: u64 = 30;
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        cost = cost
                            .saturating_add(self.expr(&entry.key)?.1)
                            .saturating_add(self.expr(&entry.value)?.1);
                    }
                }
                Ok((
                    Ty::Map {
                        value: Arc::new(Ty::Dyn),
                        max: map.entries.len() as u64,
                    },
                    cost,
                ))
            }
            Expr::Struct(_) => Ok((Ty::Dyn, 40)),
            Expr::Comprehension(c) => {
                let (range, range_cost) = self.expr(&c.iter_range)?;
                let (accu, init_cost) = self.expr(&c.accu_init)?;
                let (iter_ty, size) = match &range {
                    Ty::List { elem, max } => ((**elem).clone(), *max),
                    Ty::Map { max, .. } | Ty::Object { max, .. } => (
                        Ty::String {
                            max: MAX_REQUEST_BYTES - 2,
                        },
                        *max,
                    ),
                    // A value at hand that is not a list or map is not
                    // iterated (the evaluation fails).
                    _ if self.lenient => (Ty::Dyn, 0),
                    _ => (Ty::Dyn, (MAX_REQUEST_BYTES - 2) / 2),
                };
                self.scopes.push((c.iter_var.clone(), iter_ty));
                if let Some(second) = &c.iter_var2 {
                    self.scopes.push((second.clone(), Ty::Dyn));
                }
                self.scopes.push((c.accu_var.clone(), accu));
                let cond = self.expr(&c.loop_cond);
                let step = self.expr(&c.loop_step);
                let result = self.expr(&c.result);
                self.scopes.pop();
                if c.iter_var2.is_some() {
                    self.scopes.pop();
                }
                self.scopes.pop();
                let ((_, cond), (_, step), (ty, result)) = (cond?, step?, result?);
                let cost = range_cost
                    .saturating_add(init_cost)
                    .saturating_add(size.saturating_mul(cond.saturating_add(step)))
                    .saturating_add(result);
                Ok((ty, cost))
            }
            Expr::Call(call) => self.call(e.id, call),
            Expr::Unspecified => Ok((Ty::Dyn, 0)),
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
                        .any(|(n, _)| Some(n.as_str()) == ns.split('.').next()) =>
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
        let mut cost = target.as_ref().map_or(0, |(_, c)| *c);
        for arg in &call.args {
            let (ty, c) = self.expr(arg)?;
            cost = cost.saturating_add(c);
            args.push(ty);
        }
        if self.overloads
            && let Some(message) = no_overload(name, &args)
        {
            return Err(Issue { id, message });
        }
        let recv = target.as_ref().map(|(ty, _)| ty);
        let first = recv.or(args.first());
        let tenth = |ty: Option<&Ty>| ty.and_then(Ty::size).map_or(1, |s| s.div_ceil(10).max(1));
        let text = |max: u64| Ty::String { max };
        let (ty, own) = match name {
            "_&&_" | "_||_" => (Ty::Bool, 0),
            "!_" | "@not_strictly_false" => (Ty::Bool, 1),
            "_?_:_" => {
                let ty = match (args.get(1), args.get(2)) {
                    (Some(a), Some(b)) if a == b => a.clone(),
                    _ => Ty::Dyn,
                };
                (ty, 0)
            }
            "_==_" | "_!=_" => {
                let traversal = match (args.first(), args.get(1)) {
                    (Some(a), Some(b)) => match (a.size(), b.size()) {
                        (Some(x), Some(y)) => x.max(y),
                        (Some(x), None) | (None, Some(x)) => x,
                        (None, None) => 0,
                    },
                    _ => 0,
                };
                let per = if matches!(args.first(), Some(Ty::String { .. } | Ty::Bytes { .. })) {
                    traversal.div_ceil(10)
                } else {
                    traversal
                };
                (Ty::Bool, 1 + per)
            }
            "_<_" | "_<=_" | "_>_" | "_>=_" => (Ty::Bool, tenth(args.first())),
            "@in" => (Ty::Bool, 1 + args.get(1).and_then(Ty::size).unwrap_or(1)),
            "_+_" => match (args.first(), args.get(1)) {
                (Some(Ty::String { max: a }), Some(Ty::String { max: b })) => (
                    text(a.saturating_add(*b)),
                    (a.saturating_add(*b)).div_ceil(10),
                ),
                (Some(Ty::List { elem, max: a }), Some(Ty::List { max: b, .. })) => (
                    Ty::List {
                        elem: elem.clone(),
                        max: a.saturating_add(*b),
                    },
                    (a.saturating_add(*b)).div_ceil(10),
                ),
                (Some(Ty::Timestamp), _) | (_, Some(Ty::Timestamp)) => (Ty::Timestamp, 1),
                (Some(a), Some(b)) if a == b => (a.clone(), 1),
                _ => (Ty::Dyn, 1),
            },
            "_-_" => match (args.first(), args.get(1)) {
                (Some(Ty::Timestamp), Some(Ty::Timestamp)) => (Ty::Duration, 1),
                (Some(a), Some(b)) if a == b => (a.clone(), 1),
                _ => (Ty::Dyn, 1),
            },
            "_*_" | "_/_" | "_%_" => match (args.first(), args.get(1)) {
                (Some(a), Some(b)) if a == b => (a.clone(), 1),
                _ => (Ty::Dyn, 1),
            },
            "-_" => (args.first().cloned().unwrap_or(Ty::Dyn), 1),
            "_[_]" => {
                let ty = match args.first() {
                    Some(Ty::List { elem, .. }) => (**elem).clone(),
                    Some(Ty::Map { value, .. }) => (**value).clone(),
                    _ => Ty::Dyn,
                };
                (ty, 1)
            }
            "_?._" | "_[?_]" => {
                let ty = match (args.first(), call.args.get(1).map(|a| &a.expr)) {
                    (Some(t), Some(Expr::Literal(LiteralValue::String(f)))) if name == "_?._" => {
                        field(t, f.inner()).unwrap_or(Ty::Dyn)
                    }
                    (Some(Ty::List { elem, .. }), _) => (**elem).clone(),
                    (Some(Ty::Map { value, .. }), _) => (**value).clone(),
                    _ => Ty::Dyn,
                };
                (Ty::Optional(Arc::new(ty)), 1)
            }
            "size" => (Ty::Int, 1),
            "int" | "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
            | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds"
            | "asInteger" | "sign" | "compareTo" => (Ty::Int, 1),
            "indexOf" | "lastIndexOf" => (
                Ty::Int,
                1 + tenth(first).max(
                    first
                        .and_then(Ty::size)
                        .filter(|_| matches!(first, Some(Ty::List { .. })))
                        .unwrap_or(0),
                ),
            ),
            "uint" => (Ty::Uint, 1),
            "double" | "asApproximateFloat" => (Ty::Double, 1),
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
            | "containsCIDR" => (Ty::Bool, 1 + tenth(first)),
            "family" | "prefixLength" => (Ty::Int, 1),
            "getScheme" | "getHost" | "getHostname" | "getPort" | "getEscapedPath" => {
                (text(MAX_REQUEST_BYTES), 1)
            }
            // A conversion's result is sized only when it is a string
            // already; otherwise it is unbounded, as cel-go estimates it.
            "string" => match first {
                Some(Ty::String { max }) => (text(*max), 1),
                // A value at hand prints in a few bytes.
                _ if self.lenient => (text(24), 1),
                _ => (text(u64::MAX / 2), 1),
            },
            "bytes" => (
                Ty::Bytes {
                    max: first.and_then(Ty::size).unwrap_or(0),
                },
                1,
            ),
            "duration" => (Ty::Duration, 1),
            "timestamp" => (Ty::Timestamp, 1),
            "type" => (Ty::Type, 1),
            "dyn" => (Ty::Dyn, 0),
            "contains" | "startsWith" | "endsWith" => (Ty::Bool, tenth(first)),
            "matches" => (
                Ty::Bool,
                tenth(first).saturating_mul(tenth(args.last()).max(1)),
            ),
            "find" => (text(first.and_then(Ty::size).unwrap_or(0)), tenth(first)),
            "findAll" | "split" => (
                Ty::List {
                    elem: Arc::new(text(first.and_then(Ty::size).unwrap_or(0))),
                    max: first.and_then(Ty::size).unwrap_or(0),
                },
                tenth(first),
            ),
            // A list of strings joined: every element's length, at most.
            "join" if matches!(first, Some(Ty::List { elem, .. }) if matches!(**elem, Ty::String { .. })) =>
            {
                let (count, each) = match first {
                    Some(Ty::List { elem, max }) => (*max, elem.size().unwrap_or(0)),
                    _ => (0, 0),
                };
                let total = count.saturating_mul(each);
                (text(total), total.div_ceil(10).max(1))
            }
            // The problems a format finds: messages of unknown number and
            // length (as cel-go estimates them).
            "validate" => {
                let problems = if self.lenient {
                    Ty::List {
                        elem: Arc::new(text(256)),
                        max: 4,
                    }
                } else {
                    Ty::List {
                        elem: Arc::new(text(MAX_REQUEST_BYTES)),
                        max: MAX_REQUEST_BYTES,
                    }
                };
                (Ty::Optional(Arc::new(problems)), 1 + tenth(args.first()))
            }
            "charAt" | "lowerAscii" | "upperAscii" | "replace" | "substring" | "trim"
            | "reverse" | "strings.quote" | "format" | "join" => (
                match first {
                    Some(Ty::List { .. }) if name == "reverse" => first.cloned().unwrap_or(Ty::Dyn),
                    _ => text(first.and_then(Ty::size).unwrap_or(0)),
                },
                tenth(first),
            ),
            "isSorted" | "sum" | "min" | "max" | "distinct" | "sort" | "flatten" | "slice" => {
                let size = first.and_then(Ty::size).unwrap_or(1);
                let ty = match (name, first) {
                    ("isSorted", _) => Ty::Bool,
                    ("sum" | "min" | "max", Some(Ty::List { elem, .. })) => (**elem).clone(),
                    ("distinct" | "sort" | "flatten" | "slice", Some(list)) => list.clone(),
                    _ => Ty::Dyn,
                };
                (ty, 1 + size)
            }
            "optional.of" | "optional.ofNonZeroValue" => (
                Ty::Optional(Arc::new(args.first().cloned().unwrap_or(Ty::Dyn))),
                1,
            ),
            "optional.none" => (Ty::Optional(Arc::new(Ty::Dyn)), 1),
            "value" | "orValue" => match recv {
                Some(Ty::Optional(inner)) => ((**inner).clone(), 1),
                _ => (Ty::Dyn, 1),
            },
            "or" => (recv.cloned().unwrap_or(Ty::Dyn), 1),
            "quantity" | "add" | "sub" => (Ty::Dyn, 1),
            _ => (Ty::Dyn, 1),
        };
        Ok((ty, cost.saturating_add(own)))
    }
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
