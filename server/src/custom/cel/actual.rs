//! What an evaluation really costs, counted as cel-go's interpreter counts
//! it (its `CostTracker`, with Kubernetes' `CallCost` for the library
//! functions): one unit per variable and per field or index step, a list
//! literal ten and a map thirty, each call by the sizes of the values it
//! is given (strings by tenths of their length, lists by their length),
//! and only the parts that run: the side of `&&`, `||` and `?:` that is
//! skipped costs nothing, nor do the iterations after a comprehension's
//! loop condition turns false.
//!
//! kube-apiserver refuses a rule whose evaluation passes the per-call
//! limit and stops validating once the costs of an object's rules pass
//! its budget; both need this count, not the estimate made when the
//! definition is written.
//!
//! The walk asks the CEL engine for the value of each expression it needs
//! (a call's arguments, a condition, a comprehension's range), so it
//! evaluates an expression about as many times as it is deep. It stops
//! once the count passes the limit.

use std::sync::Arc;

use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr};
use cel::{Context, ExecutionError, Value};

use super::check::{
    AUTHZ_CHECK, LIST_CREATE, MAP_CREATE, MAX_NAME_FORMAT_REGEX, REGEX_PER_CHAR, STRING_TRAVERSAL,
    STRUCT_CREATE, by_factor,
};

/// Evaluates `expr` in `ctx`, counting its cost: its value (`None` when
/// the count passed `limit`, where cel-go cancels the evaluation) and the
/// cost.
pub fn evaluate(
    expr: &IdedExpr,
    ctx: &Context<'_, '_>,
    limit: u64,
) -> (Option<Result<Value, ExecutionError>>, u64) {
    let mut tracker = Tracker { cost: 0, limit };
    let walked = tracker.eval(expr, ctx);
    let value = match walked {
        Err(Stop::Limit) => None,
        // The engine's own words for what failed; a comprehension's value
        // as the engine folds it (its errors are deferred as cel-go
        // defers them).
        Err(Stop::Failed) => Some(ctx.resolve(expr)),
        Ok(_) if matches!(expr.expr, Expr::Comprehension(_)) => Some(ctx.resolve(expr)),
        Ok(value) => Some(Ok(value)),
    };
    (value, tracker.cost)
}

/// The cost of evaluating `expr` in `ctx` (at most a little over
/// `limit`: the count stops once it passes).
pub fn cost(expr: &IdedExpr, ctx: &Context<'_, '_>, limit: u64) -> u64 {
    let mut tracker = Tracker { cost: 0, limit };
    let _ = tracker.eval(expr, ctx);
    tracker.cost
}

/// Why a walk stopped early.
enum Stop {
    /// The expression fails (its cost so far stands).
    Failed,
    /// The count passed the limit.
    Limit,
}

struct Tracker {
    cost: u64,
    limit: u64,
}

type Walked = Result<Value, Stop>;

impl Tracker {
    fn charge(&mut self, units: u64) -> Result<(), Stop> {
        self.cost = self.cost.saturating_add(units);
        if self.cost > self.limit {
            return Err(Stop::Limit);
        }
        Ok(())
    }

    /// The value of `expr`, as the engine computes it.
    fn value(expr: &IdedExpr, ctx: &Context<'_, '_>) -> Walked {
        ctx.resolve(expr).map_err(|_| Stop::Failed)
    }

    fn eval(&mut self, expr: &IdedExpr, ctx: &Context<'_, '_>) -> Walked {
        // What cel-go folds when it plans the program costs nothing.
        if constant(expr) {
            return Self::value(expr, ctx);
        }
        match &expr.expr {
            Expr::Literal(_) => Self::value(expr, ctx),
            Expr::Ident(_) => {
                self.charge(1)?;
                Self::value(expr, ctx)
            }
            Expr::Select(select) => {
                self.eval(&select.operand, ctx)?;
                // A presence test costs nothing of its own (Kubernetes runs
                // cel-go with `PresenceTestHasCost(false)`); a field of a
                // variable's path is one qualifier, of any other value an
                // attribute and its qualifier.
                if !select.test {
                    self.charge(if is_attribute(&select.operand) { 1 } else { 2 })?;
                }
                Self::value(expr, ctx)
            }
            Expr::List(list) => {
                for item in &list.elements {
                    self.eval(item, ctx)?;
                }
                self.charge(LIST_CREATE)?;
                Self::value(expr, ctx)
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        self.eval(&entry.key, ctx)?;
                        self.eval(&entry.value, ctx)?;
                    }
                }
                self.charge(MAP_CREATE)?;
                Self::value(expr, ctx)
            }
            Expr::Struct(_) => {
                self.charge(STRUCT_CREATE)?;
                Self::value(expr, ctx)
            }
            Expr::Comprehension(c) => self.comprehension(c, ctx),
            Expr::Call(call) => self.call(expr, call, ctx),
            Expr::Unspecified => Err(Stop::Failed),
        }
    }

    fn call(&mut self, expr: &IdedExpr, call: &CallExpr, ctx: &Context<'_, '_>) -> Walked {
        let name = call.func_name.as_str();
        match (name, call.args.as_slice()) {
            ("_&&_" | "_||_", [lhs, rhs]) => {
                // The right side runs only when the left does not decide.
                let left = self.eval(lhs, ctx);
                let decided = matches!(
                    (&left, name),
                    (Ok(Value::Bool(false)), "_&&_") | (Ok(Value::Bool(true)), "_||_")
                );
                if let Err(Stop::Limit) = left {
                    return Err(Stop::Limit);
                }
                if decided {
                    return left;
                }
                match self.eval(rhs, ctx) {
                    Err(Stop::Limit) => Err(Stop::Limit),
                    _ => Self::value(expr, ctx),
                }
            }
            // Membership in a list of constant scalars is a set lookup
            // (an empty one is false without looking at the left side).
            ("@in", [item, list]) if constant(list) => match Self::value(list, ctx)? {
                Value::List(items) if items.is_empty() => Ok(Value::Bool(false)),
                Value::List(items) if items.iter().all(is_primitive) => {
                    self.eval(item, ctx)?;
                    Self::value(expr, ctx)
                }
                _ => self.generic_call(expr, call, ctx),
            },
            // The branch taken; one that is a variable's path does not
            // count the variable (cel-go evaluates it as part of the
            // conditional attribute).
            ("_?_:_", [cond, yes, no]) => {
                let branch = match self.eval(cond, ctx)? {
                    Value::Bool(true) => yes,
                    Value::Bool(false) => no,
                    _ => return Err(Stop::Failed),
                };
                self.eval_qualifier(branch, ctx)
            }
            // An index is a qualifier of the indexed value: one unit (two
            // on a value that is no variable's path), and the index's own
            // cost without its variable.
            ("_[_]", [target, index]) => {
                self.eval(target, ctx)?;
                self.eval_qualifier(index, ctx)?;
                self.charge(if is_attribute(target) { 1 } else { 2 })?;
                Self::value(expr, ctx)
            }
            _ => self.generic_call(expr, call, ctx),
        }
    }

    /// `expr` where cel-go takes it as part of an attribute: a variable's
    /// path costs its qualifiers, not the variable.
    fn eval_qualifier(&mut self, expr: &IdedExpr, ctx: &Context<'_, '_>) -> Walked {
        let value = self.eval(expr, ctx);
        if is_attribute(expr) && !constant(expr) {
            self.cost = self.cost.saturating_sub(1);
        }
        value
    }

    /// A call of a function: its target and arguments, then its own cost.
    fn generic_call(&mut self, expr: &IdedExpr, call: &CallExpr, ctx: &Context<'_, '_>) -> Walked {
        // A namespaced function (`optional.of`) has no target value.
        // Every argument is evaluated, and the call counted, even when one
        // fails (cel-go's observer sees the call's error too); a failed
        // argument counts as size one.
        let mut values = Vec::with_capacity(call.args.len() + 1);
        let mut qualified = None;
        let mut failed = false;
        let mut take = |walked: Walked, values: &mut Vec<Value>| match walked {
            Ok(value) => {
                values.push(value);
                Ok(())
            }
            Err(Stop::Limit) => Err(Stop::Limit),
            Err(Stop::Failed) => {
                failed = true;
                values.push(Value::Null);
                Ok(())
            }
        };
        if let Some(target) = &call.target {
            match &target.expr {
                Expr::Ident(namespace) if ctx.resolve(target).is_err() => {
                    qualified = Some(format!("{namespace}.{}", call.func_name));
                }
                _ => take(self.eval(target, ctx), &mut values)?,
            }
        }
        let name = qualified.as_deref().unwrap_or(&call.func_name);
        let member = call.target.is_some() && qualified.is_none();
        for arg in &call.args {
            take(self.eval(arg, ctx), &mut values)?;
        }
        let result = if failed {
            Err(Stop::Failed)
        } else {
            Self::value(expr, ctx)
        };
        let own = call_cost(name, member, &values, result.as_ref().ok());
        self.charge(own)?;
        result
    }

    /// A comprehension, step by step as cel-go folds it: the loop
    /// condition before each element, the step while it holds, then the
    /// result.
    fn comprehension(&mut self, c: &ComprehensionExpr, ctx: &Context<'_, '_>) -> Walked {
        let range = self.eval(&c.iter_range, ctx)?;
        let mut accu = self.eval(&c.accu_init, ctx)?;
        let items: Vec<Value> = match &range {
            Value::List(items) => items.iter().cloned().collect(),
            Value::Map(map) => map.map.keys().map(Value::from).collect(),
            _ => return Err(Stop::Failed),
        };
        // `map` and `filter` append to a list: built here in place, with
        // the cost cel-go counts for `@result + [x]`.
        let append = appended(c);
        let mut built: Vec<Value> = Vec::new();
        let mut failed = false;
        for item in items {
            let mut scope = ctx.new_inner_scope();
            scope.add_variable_from_value(c.accu_var.as_str(), accu.clone());
            scope.add_variable_from_value(c.iter_var.as_str(), item);
            match self.eval(&c.loop_cond, &scope)? {
                Value::Bool(true) => {}
                Value::Bool(false) => break,
                _ => return Err(Stop::Failed),
            }
            match &append {
                Some((filter, element)) => {
                    if let Some(filter) = filter {
                        match self.eval(filter, &scope)? {
                            Value::Bool(true) => {}
                            // The accumulator is the step's value, a branch
                            // of the conditional: no cost.
                            Value::Bool(false) => continue,
                            _ => return Err(Stop::Failed),
                        }
                    }
                    let value = self.eval(element, &scope)?;
                    // The accumulator (1), the one-element list (10, or
                    // nothing when it is a constant) and the concatenation.
                    let list = if constant(element) { 0 } else { LIST_CREATE };
                    self.charge(1 + list + 1)?;
                    built.push(value);
                }
                // A step that fails does not end the fold: cel-go goes on
                // with the error as the accumulator (which a later step may
                // absorb), and the next steps cost what they cost with the
                // last value.
                None => match self.eval(&c.loop_step, &scope) {
                    Ok(value) => {
                        accu = value;
                        failed = false;
                    }
                    Err(Stop::Limit) => return Err(Stop::Limit),
                    Err(Stop::Failed) => failed = true,
                },
            }
        }
        if append.is_some() {
            accu = Value::List(Arc::new(built));
        }
        let mut scope = ctx.new_inner_scope();
        scope.add_variable_from_value(c.accu_var.as_str(), accu);
        let result = self.eval(&c.result, &scope);
        if failed {
            return Err(Stop::Failed);
        }
        result
    }
}

/// Whether cel-go folds `expr` into a constant when it plans the program
/// (its `OptOptimize`): a literal, a list or map literal of constants, a
/// type conversion of a constant.
fn constant(expr: &IdedExpr) -> bool {
    match &expr.expr {
        Expr::Literal(_) => true,
        Expr::List(list) => list.elements.iter().all(constant),
        Expr::Map(map) => map.entries.iter().all(|entry| match &entry.expr {
            EntryExpr::MapEntry(entry) => constant(&entry.key) && constant(&entry.value),
            EntryExpr::StructField(_) => false,
        }),
        Expr::Call(call) => {
            call.target.is_none()
                && matches!(
                    call.func_name.as_str(),
                    "bool"
                        | "bytes"
                        | "double"
                        | "duration"
                        | "dyn"
                        | "int"
                        | "string"
                        | "timestamp"
                        | "type"
                        | "uint"
                )
                && matches!(call.args.as_slice(), [arg] if constant(arg))
        }
        _ => false,
    }
}

/// Whether `expr` is a variable's path (a variable, its fields and
/// indexes), which cel-go plans as one attribute.
fn is_attribute(expr: &IdedExpr) -> bool {
    match &expr.expr {
        Expr::Ident(_) => true,
        Expr::Select(select) => !select.test && is_attribute(&select.operand),
        Expr::Call(call) => call.func_name == "_[_]" && call.args.first().is_some_and(is_attribute),
        _ => false,
    }
}

/// A scalar other than bytes (what a constant set may hold).
fn is_primitive(value: &Value) -> bool {
    matches!(
        value,
        Value::Bool(_) | Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::String(_)
    )
}

/// For a comprehension that only appends to its accumulator (`map`,
/// `filter`): the filter, if any, and the appended element.
fn appended(c: &ComprehensionExpr) -> Option<(Option<&IdedExpr>, &IdedExpr)> {
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(name) if *name == c.accu_var);
    fn append<'a>(e: &'a IdedExpr, accu_var: &str) -> Option<&'a IdedExpr> {
        let Expr::Call(call) = &e.expr else {
            return None;
        };
        match (call.func_name.as_str(), call.args.as_slice()) {
            ("_+_", [accu, list]) if matches!(&accu.expr, Expr::Ident(n) if n == accu_var) => {
                match &list.expr {
                    Expr::List(list) if list.elements.len() == 1 => list.elements.first(),
                    _ => None,
                }
            }
            _ => None,
        }
    }
    if !matches!(&c.accu_init.expr, Expr::List(list) if list.elements.is_empty()) {
        return None;
    }
    if let Some(element) = append(&c.loop_step, &c.accu_var) {
        return Some((None, element));
    }
    let Expr::Call(call) = &c.loop_step.expr else {
        return None;
    };
    match (call.func_name.as_str(), call.args.as_slice()) {
        ("_?_:_", [filter, step, accu]) if is_accu(accu) => {
            append(step, &c.accu_var).map(|element| (Some(filter), element))
        }
        _ => None,
    }
}

/// cel-go's size of a value: a string's characters, bytes, a list's or
/// map's entries; one for anything else.
fn size(value: &Value) -> u64 {
    match value {
        Value::String(s) => s.chars().count() as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::List(items) => items.len() as u64,
        Value::Map(map) => map.map.len() as u64,
        _ => 1,
    }
}

/// The cost of walking a value as a tree (Kubernetes' `traversalCost`):
/// strings by tenths of their length, one for each other scalar.
fn traversal(value: &Value) -> u64 {
    match value {
        Value::String(s) => (s.len() as f64 * STRING_TRAVERSAL) as u64,
        Value::Bytes(b) => (b.len() as f64 * STRING_TRAVERSAL) as u64,
        Value::List(items) => items.iter().map(traversal).sum(),
        Value::Map(map) => map
            .map
            .iter()
            .map(|(k, v)| traversal(&Value::from(k)) + traversal(v))
            .sum(),
        _ => 1,
    }
}

/// What a call costs itself, from the values it was given (`args`: the
/// target first, for a method) and its result: Kubernetes' `CallCost`
/// for its libraries, then cel-go's `costCall`.
fn call_cost(name: &str, member: bool, args: &[Value], result: Option<&Value>) -> u64 {
    let arg = |i: usize| args.get(i).map_or(1, size);
    let text = |i: usize| by_factor(arg(i), STRING_TRAVERSAL);
    match name {
        // cel-go's sets extension.
        "sets.contains" | "sets.intersects" | "sets.equivalent" if args.len() >= 2 => {
            let factor = if name == "sets.equivalent" { 2.0 } else { 1.0 };
            1 + (arg(0).saturating_mul(arg(1)) as f64 * factor) as u64
        }
        // Kubernetes' libraries.
        "check" => AUTHZ_CHECK,
        "serviceAccount" | "path" | "group" | "resource" | "subresource" | "namespace" | "name"
        | "allowed" | "reason" | "error" | "errored" => 1,
        "fieldSelector" | "labelSelector" if args.len() >= 2 => {
            let length = arg(1);
            let parse = by_factor(length, STRING_TRAVERSAL);
            let requirements = by_factor(length, 0.5);
            LIST_CREATE.saturating_add(parse).saturating_add(by_factor(
                requirements,
                (LIST_CREATE + STRUCT_CREATE) as f64,
            ))
        }
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            args.first().map_or(0, traversal)
        }
        "url"
        | "lowerAscii"
        | "upperAscii"
        | "substring"
        | "trim"
        | "jsonpatch.escapeKey"
        | "cidr"
        | "isIP"
        | "isCIDR"
        | "quantity"
        | "isQuantity"
            if !args.is_empty() =>
        {
            text(0)
        }
        "replace" | "split" if !args.is_empty() => by_factor(arg(0), 2.0 * STRING_TRAVERSAL),
        "join" if !args.is_empty() => by_factor(result.map_or(1, size), 2.0 * STRING_TRAVERSAL),
        "find" | "findAll" if args.len() >= 2 => {
            let text_cost = by_factor(1 + arg(0), STRING_TRAVERSAL);
            text_cost.saturating_mul(by_factor(arg(1), REGEX_PER_CHAR))
        }
        // A CIDR's address is one of its fields.
        "ip" if member => 1,
        "ip" if !args.is_empty() => text(0),
        "ip.isCanonical" if !args.is_empty() => by_factor(arg(0), 2.0 * STRING_TRAVERSAL),
        "masked"
        | "prefixLength"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast" => 1,
        "containsIP" | "containsCIDR" if args.len() >= 2 => {
            let prefix = arg(0);
            let mut cost = by_factor(prefix + prefix, STRING_TRAVERSAL);
            if name == "containsCIDR" {
                cost += by_factor(prefix, STRING_TRAVERSAL) + 1;
            }
            if matches!(args.get(1), Some(Value::String(_))) {
                cost += text(1);
            }
            cost
        }
        "validate" if args.len() >= 2 => {
            let text_cost = by_factor(1 + arg(1), STRING_TRAVERSAL);
            text_cost.saturating_mul(by_factor(1, MAX_NAME_FORMAT_REGEX * REGEX_PER_CHAR))
        }
        "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
        | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "getScheme"
        | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => 1,
        // Kubernetes' types compare in constant time.
        "_==_" if matches!(args, [Value::Opaque(_), Value::Opaque(_)]) => 1,
        // cel-go's own.
        "startsWith" | "endsWith" | "strings.quote" | "format" => text(0),
        "bytes" if matches!(args.first(), Some(Value::String(_))) => text(0),
        "string" if matches!(args.first(), Some(Value::Bytes(_))) => text(0),
        "@in" if matches!(args.get(1), Some(Value::List(_))) => arg(1),
        "_==_" | "_!=_" => by_factor(arg(0).min(arg(1)), STRING_TRAVERSAL),
        "_<_" | "_<=_" | "_>_" | "_>=_"
            if matches!(
                (args.first(), args.get(1)),
                (Some(Value::String(_)), Some(Value::String(_)))
                    | (Some(Value::Bytes(_)), Some(Value::Bytes(_)))
            ) =>
        {
            by_factor(arg(0).min(arg(1)), STRING_TRAVERSAL)
        }
        "_+_"
            if matches!(
                (args.first(), args.get(1)),
                (Some(Value::String(_)), Some(Value::String(_)))
                    | (Some(Value::Bytes(_)), Some(Value::Bytes(_)))
            ) =>
        {
            by_factor(arg(0) + arg(1), STRING_TRAVERSAL)
        }
        "matches" if member && args.len() >= 2 => {
            let text_cost = by_factor(1 + arg(0), STRING_TRAVERSAL);
            text_cost.saturating_mul(by_factor(arg(1), REGEX_PER_CHAR))
        }
        "contains" if args.len() >= 2 => text(0).saturating_mul(text(1)),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::custom::cel::types::Ty;
    use crate::custom::cel::{ROOT, parse, to_cel};

    fn counted(source: &str, this: serde_json::Value) -> u64 {
        let program = parse(source).unwrap();
        let value = to_cel(&this, &Ty::Dyn);
        ROOT.with(|root| {
            let mut ctx = root.new_inner_scope();
            ctx.add_variable_from_value("self", value);
            cost(program.expression(), &ctx, u64::MAX)
        })
    }

    #[test]
    fn only_what_runs_is_counted() {
        // self (1), .a (1), == on scalars (1).
        assert_eq!(counted("self.a == 1", serde_json::json!({"a": 1})), 3);
        // The right side of `||` is skipped once the left holds.
        assert_eq!(
            counted(
                "self.a == 1 || self.b.all(x, x > 0)",
                serde_json::json!({"a": 1, "b": [1, 2, 3]})
            ),
            3
        );
        // `all` stops at the first element that fails.
        let all = counted("self.all(x, x > 0)", serde_json::json!([1, -1, 2, 3]));
        let first_fails = counted("self.all(x, x > 0)", serde_json::json!([-1, 1, 2, 3]));
        assert!(first_fails < all, "{first_fails} < {all}");
        // A string compared by the shorter side's length.
        assert_eq!(
            counted("self == 'x'", serde_json::json!("a".repeat(100))),
            1 + 1
        );
        assert_eq!(
            counted("self.contains('test')", serde_json::json!("a".repeat(100))),
            1 + 10
        );
    }

    /// cel-go's own runtime cost cases (interpreter/runtimecost_test.go),
    /// with what Kubernetes changes: constants folded when the program is
    /// planned (`OptOptimize`) and presence tests free.
    #[test]
    fn counted_as_cel_go_counts() {
        let none = serde_json::json!({});
        // A key of a map read by a variable: the key's variable is part of
        // the attribute.
        assert_eq!(
            counted(
                "self.all(k, self[k].single_int32 > 3)",
                serde_json::json!({"val": {"single_int32": 0}})
            ),
            9
        );
        assert_eq!(counted("false ? false : 1 > 3", none.clone()), 1);
        assert_eq!(
            counted(
                "'12345678901234567890' == '123456789012345678901234567890'",
                none.clone()
            ),
            2
        );
        // cel-go gives 62 without folding; the two list literals are
        // constants here (20 less).
        assert_eq!(
            counted("[1,2,3,4,5].filter(x, x % 2 == 0)", none.clone()),
            42
        );
        // 86 without folding.
        assert_eq!(counted("[1,2,3,4,5].map(x, x)", none.clone()), 66);
        assert_eq!(
            counted("self.all(k, self[k].all(x, true))", none.clone()),
            2
        );
        // Free: a presence test, a constant conversion, membership in a
        // constant set.
        assert_eq!(counted("has(self.a)", serde_json::json!({"a": 1})), 1);
        assert_eq!(counted("duration('1h') > duration('30m')", none.clone()), 1);
        assert_eq!(
            counted("self.a in ['x', 'y', 'z']", serde_json::json!({"a": "y"})),
            2
        );
        // A failing element does not stop the count: `all` goes on over
        // the rest (self 1, per element 2 + the step).
        let with_error = counted(
            "self.all(x, x.a > 0)",
            serde_json::json!([{"b": 1}, {"a": 1}, {"a": 2}]),
        );
        let without = counted(
            "self.all(x, x.a > 0)",
            serde_json::json!([{"a": 3}, {"a": 1}, {"a": 2}]),
        );
        assert_eq!(with_error, without);
        // A field of a call's result: an attribute and its qualifier.
        assert_eq!(
            counted(
                "self.a.split('/')[0] == 'x'",
                serde_json::json!({"a": "x/y"})
            ),
            // self.a (2), split (ceil(3 * 0.2) = 1), [0] (2), == (1)
            6
        );
    }
}
