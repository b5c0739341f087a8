//! CEL validation rules (`x-kubernetes-validations`) of custom resource
//! schemas, as kube-apiserver 1.32 runs them: compiled and checked when a
//! definition is written ([`crd`]), evaluated on every create and update
//! of a custom object with `self` (and `oldSelf` for transition rules),
//! with upstream's messages, reasons, field paths and cost limits.
//!
//! Parsing, macros and evaluation are the `cel` crate's (cel-rust); the
//! type checker and cost estimate ([`check`]) and the Kubernetes library
//! functions ([`library`]) are ours.

pub mod actual;
pub mod authz;
pub mod check;
pub mod crd;
pub mod library;
pub mod types;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use cel::objects::{Key, OptionalValue};
use cel::{Context, Env, ExecutionError, Program};
use kapi_runtime::validation::{FieldErrors, FieldPath};
use serde_json::Value;

use types::{Ty, escape};

/// The most one rule may cost on one value (cel-go's per-call limit).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// cel-go's error for an evaluation cancelled at the per-call limit.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";
/// The most a webhook's match conditions may cost together.
pub const MATCH_CONDITIONS_BUDGET: u64 = 2_500_000;
/// kube-apiserver's words when the expressions of a rule set spent their
/// budget.
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";
/// The most all the rules of one object may cost together.
pub const RUNTIME_BUDGET: u64 = 10_000_000;
/// The most one rule may be estimated to cost when a definition is written.
pub const ESTIMATED_RULE_LIMIT: u64 = 10_000_000;
/// The most all the rules of a schema may be estimated to cost together.
pub const ESTIMATED_SCHEMA_LIMIT: u64 = 100_000_000;

/// The stack parsing and checking a rule gets: cel-rust's parser and our
/// checker recurse per nesting level, deeper than a worker thread's stack
/// allows in the worst case (a fresh segment, committed only as used).
const COMPILE_STACK: usize = 256 << 20;

/// The stack evaluating the rules of one object gets (see
/// `COMPILE_STACK`; expressions are at most [`check`]'s depth limit).
pub const EVAL_STACK: usize = 64 << 20;

/// Runs `f` on a stack of `size` bytes.
pub fn with_stack<R>(size: usize, f: impl FnOnce() -> R) -> R {
    stacker::grow(size, f)
}

/// The environment every rule is compiled in: the standard library, the
/// strings and lists extensions, optionals.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    // The extensions register overloads under fixed names; registering them
    // once on a fresh environment cannot conflict.
    let _ = env.add_extension(cel::extensions::strings);
    let _ = env.add_extension(cel::extensions::lists);
    env.set_error_on_duplicate_map_keys(false);
    Arc::new(env)
});

/// Which rules a validation runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// The rules that decide a write: all of them on a create; on an
    /// update, transition rules and the rules of values the update changed.
    Decide,
    /// The rules an update does not run again on the values it left as they
    /// were (ratcheting), whose failures upstream returns as warnings.
    Ratcheted,
}

/// The reason a failed rule reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

/// One compiled rule of a schema node.
pub struct Rule {
    /// The rule's source text.
    pub text: String,
    program: Program,
    message: Option<String>,
    message_expression: Option<Program>,
    reason: Reason,
    /// `fieldPath`, as the path segments below the node it names.
    field_path: Vec<PathSegment>,
    /// The rule reads `oldSelf`: a transition rule.
    pub uses_old_self: bool,
    optional_old_self: bool,
}

/// One step of a rule's `fieldPath`.
#[derive(Clone, Debug, PartialEq)]
pub enum PathSegment {
    Field(String),
    Index(usize),
    Key(String),
}

/// The rules of one schema node, compiled.
pub struct NodeRules {
    pub rules: Vec<Rule>,
    /// The node's `type` (what a failed rule prints as the value).
    type_text: String,
    ty: Ty,
}

impl std::fmt::Debug for NodeRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.rules.iter().map(|r| &r.text))
            .finish()
    }
}

/// The estimated costs of a rule and of its message expression.
#[derive(Clone, Copy, Debug)]
pub struct Costs {
    pub rule: u64,
    pub message: Option<u64>,
    /// Whether the rule reads `oldSelf` (a transition rule).
    pub uses_old_self: bool,
}

/// A rule of a schema that could not be compiled, with upstream's words.
#[derive(Debug)]
pub enum RuleError {
    /// The rule is empty.
    Empty,
    /// The rule does not compile or check.
    Rule(String),
    /// The message expression does not compile or check.
    MessageExpression(String),
}

impl NodeRules {
    /// Compiles the `x-kubernetes-validations` of `schema` (a node of an
    /// `openAPIV3Schema`; `root`: the schema's root, whose `self` is the
    /// whole object). Each rule gives its compiled form or its error.
    pub fn compile(schema: &Value, root: bool) -> (NodeRules, Vec<Result<Costs, RuleError>>) {
        let ty = if root {
            Ty::of_root(schema)
        } else {
            Ty::of_schema(schema)
        };
        let type_text = if schema
            .get("x-kubernetes-int-or-string")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            String::new()
        } else {
            schema
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let mut rules = Vec::new();
        let mut results = Vec::new();
        for rule in schema
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match compile_rule(rule, &ty) {
                Ok((compiled, cost)) => {
                    rules.push(compiled);
                    results.push(Ok(cost));
                }
                Err(e) => results.push(Err(e)),
            }
        }
        (
            NodeRules {
                rules,
                type_text,
                ty,
            },
            results,
        )
    }

    /// Evaluates the rules on `value` (with `old`, the correlated value of
    /// the stored object on an update, `None` when there is none) at
    /// `path`, spending from `budget`; failures go to `errs`. Returns
    /// `false` once the budget is spent (no further rule runs).
    pub fn validate(
        &self,
        value: &Value,
        old: Option<&Value>,
        mode: Mode,
        path: &FieldPath,
        budget: &mut u64,
        errs: &mut FieldErrors,
    ) -> bool {
        let unchanged = old == Some(value);
        if mode == Mode::Ratcheted && !unchanged {
            return true;
        }
        let self_value = to_cel(value, &self.ty);
        let old_value = old.map(|old| to_cel(old, &self.ty));
        ROOT.with(|root| {
            for rule in &self.rules {
                let old_self = match (&old_value, rule.uses_old_self, rule.optional_old_self) {
                    // A transition rule runs only where the stored object has
                    // a value to compare with, unless it takes an optional.
                    (None, true, false) => continue,
                    (None, _, true) => Some(cel::Value::Opaque(Arc::new(OptionalValue::none()))),
                    (Some(old), _, true) => {
                        Some(cel::Value::Opaque(Arc::new(OptionalValue::of(old.clone()))))
                    }
                    (Some(old), _, false) => Some(old.clone()),
                    (None, false, false) => None,
                };
                // Ratcheting: a rule that does not read oldSelf decides nothing
                // on a value an update left as it was.
                let ratcheted = !rule.uses_old_self && unchanged;
                if ratcheted != (mode == Mode::Ratcheted) {
                    continue;
                }
                let mut scope = root.new_inner_scope();
                scope.add_variable_from_value("self", self_value.clone());
                if let Some(old_self) = old_self {
                    scope.add_variable_from_value("oldSelf", old_self);
                }
                // What the evaluation costs, counted as cel-go counts it:
                // over the object's budget, or over one call's limit, and
                // no further rule runs.
                let (result, cost) =
                    actual::evaluate(rule.program.expression(), &scope, PER_CALL_LIMIT);
                if cost > *budget {
                    errs.invalid(
                        path.clone(),
                        self.type_text.as_str(),
                        OUT_OF_BUDGET,
                    );
                    return false;
                }
                *budget -= cost;
                let Some(result) = result else {
                    errs.invalid(
                        path.clone(),
                        self.type_text.as_str(),
                        &format!(
                            "'{COST_LIMIT_EXCEEDED}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                            rule.error_text()
                        ),
                    );
                    return false;
                };
                match result {
                    Ok(cel::Value::Bool(true)) => {}
                    Ok(_) => rule.report(&scope, path, &self.type_text, errs),
                    Err(e) => {
                        let detail = match &e {
                            ExecutionError::NoSuchOverload(_)
                            | ExecutionError::UnsupportedBinaryOperator(..) => format!(
                                "'{}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                                go_error(&e),
                                rule.error_text()
                            ),
                            _ => format!("{} evaluating rule: {}", go_error(&e), rule.error_text()),
                        };
                        errs.invalid(path.clone(), self.type_text.as_str(), &detail);
                    }
                }
            }
            true
        })
    }
}

impl Rule {
    /// The message of a failed rule: its own, or upstream's default.
    fn message_or_default(&self) -> String {
        match &self.message {
            Some(message) => message.trim().to_owned(),
            None => format!("failed rule: {}", self.text.trim()),
        }
    }

    /// How an error evaluating the rule names it.
    fn error_text(&self) -> &str {
        self.message.as_deref().unwrap_or(&self.text).trim()
    }

    /// Reports the rule as failed on the value at `path`.
    fn report(
        &self,
        scope: &Context<'_, '_>,
        path: &FieldPath,
        type_text: &str,
        errs: &mut FieldErrors,
    ) {
        let mut message = self.message_or_default();
        if let Some(expression) = &self.message_expression
            && let Ok(cel::Value::String(text)) = expression.execute(scope)
            && !text.trim().is_empty()
            && !text.contains('\n')
            && text.len() <= 5000
        {
            message = text.trim().to_owned();
        }
        let mut at = path.clone();
        for segment in &self.field_path {
            at = match segment {
                PathSegment::Field(f) => at.child(f),
                PathSegment::Index(i) => at.index(*i),
                PathSegment::Key(k) => at.key(k),
            };
        }
        match self.reason {
            Reason::Invalid => errs.invalid(at, type_text, &message),
            Reason::Forbidden => errs.forbidden(at, &message),
            Reason::Required => errs.required(at, &message),
            Reason::Duplicate => errs.duplicate(at, type_text),
        }
    }
}

/// Compiles one entry of `x-kubernetes-validations` for values of type
/// `ty`, giving the rule and its estimated costs.
fn compile_rule(rule: &Value, ty: &Ty) -> Result<(Rule, Costs), RuleError> {
    with_stack(COMPILE_STACK, || compile_rule_here(rule, ty))
}

fn compile_rule_here(rule: &Value, ty: &Ty) -> Result<(Rule, Costs), RuleError> {
    let text = rule.get("rule").and_then(Value::as_str).unwrap_or("");
    if text.trim().is_empty() {
        return Err(RuleError::Empty);
    }
    let optional_old_self = rule
        .get("optionalOldSelf")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let old_ty = if optional_old_self {
        Ty::Optional(Arc::new(ty.clone()))
    } else {
        ty.clone()
    };
    let program = parse(text).map_err(|e| RuleError::Rule(format!("compilation failed: {e}")))?;
    let checked = check::check(&program, ty, &old_ty)
        .map_err(|e| RuleError::Rule(format!("compilation failed: {e}")))?;
    if !matches!(checked.ty, Ty::Bool | Ty::Dyn | Ty::IntOrString) {
        return Err(RuleError::Rule(
            "cel expression must evaluate to a bool".to_owned(),
        ));
    }
    let mut message_cost = None;
    let message_expression = match rule.get("messageExpression").and_then(Value::as_str) {
        Some(source) if !source.trim().is_empty() => {
            let program = parse(source).map_err(|e| {
                RuleError::MessageExpression(format!("messageExpression compilation failed: {e}"))
            })?;
            let checked_message = check::check(&program, ty, &old_ty).map_err(|e| {
                RuleError::MessageExpression(format!("messageExpression compilation failed: {e}"))
            })?;
            if !matches!(checked_message.ty, Ty::String { .. } | Ty::Dyn) {
                return Err(RuleError::MessageExpression(
                    "messageExpression must evaluate to a string".to_owned(),
                ));
            }
            message_cost = Some(checked_message.cost);
            Some(program)
        }
        _ => None,
    };
    let reason = match rule.get("reason").and_then(Value::as_str) {
        Some("FieldValueForbidden") => Reason::Forbidden,
        Some("FieldValueRequired") => Reason::Required,
        Some("FieldValueDuplicate") => Reason::Duplicate,
        _ => Reason::Invalid,
    };
    let field_path = rule
        .get("fieldPath")
        .and_then(Value::as_str)
        .map(|p| parse_field_path(p).unwrap_or_default())
        .unwrap_or_default();
    Ok((
        Rule {
            text: text.to_owned(),
            program,
            message: rule
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
            message_expression,
            reason,
            field_path,
            uses_old_self: checked.uses_old_self,
            optional_old_self,
        },
        Costs {
            rule: checked.cost,
            message: message_cost,
            uses_old_self: checked.uses_old_self,
        },
    ))
}

/// Parses `source`, with cel-go's text for syntax errors (each error's
/// source line and caret indented by one space, as cel-go prints them).
pub fn parse(source: &str) -> Result<Program, String> {
    ENV.compile(source)
        .map_err(|e| e.to_string().replace("\n| ", "\n | "))
}

/// Runs `f`, which evaluates CEL, on a stack of [`EVAL_STACK`] when less
/// than a megabyte of the current one is left (a fresh stack costs a
/// mapping each time; a worker thread's is enough for most expressions).
pub fn with_eval_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(1 << 20, EVAL_STACK, f)
}

thread_local! {
    /// Each thread's root context, with the library installed once
    /// (cel-rust's contexts are not `Sync`, so there is one per thread).
    pub(crate) static ROOT: Context<'static, 'static> = {
        let mut root = Context::with_env(ENV.clone());
        library::install(&mut root);
        authz::install(&mut root);
        root
    };
}

/// Variables bound once to evaluate several expressions with them, in a
/// scope of the thread's root context (each value converted once).
pub struct Activation<'r>(Context<'r, 'static>);

/// Runs `f` with an activation of `variables` (JSON values, seen as
/// dynamic CEL values).
pub fn with_activation<R>(
    variables: &[(&str, &Value)],
    f: impl FnOnce(&mut Activation<'_>) -> R,
) -> R {
    ROOT.with(|root| {
        let mut scope = root.new_inner_scope();
        for (name, value) in variables {
            scope.add_variable_from_value(*name, to_cel(value, &Ty::Dyn));
        }
        f(&mut Activation(scope))
    })
}

impl Activation<'_> {
    /// Binds (or binds again) one variable.
    pub fn set(&mut self, name: &str, value: &Value) {
        self.0
            .add_variable_from_value(name.to_owned(), to_cel(value, &Ty::Dyn));
    }

    /// Binds (or binds again) one variable to a CEL value (the
    /// `authorizer`, [`authz::authorizer_value`]).
    pub fn set_value(&mut self, name: &str, value: cel::Value) {
        self.0.add_variable_from_value(name.to_owned(), value);
    }

    /// Evaluates `program`: its value, or cel-go's words for what failed.
    /// Call it within [`with_eval_stack`].
    pub fn evaluate(&self, program: &Program) -> Result<cel::Value, String> {
        program.execute(&self.0).map_err(|e| go_error(&e))
    }

    /// [`Activation::evaluate`], with what the evaluation costs as cel-go
    /// counts it; past [`PER_CALL_LIMIT`] it is cancelled with cel-go's
    /// words.
    pub fn evaluate_counted(&self, program: &Program) -> (Result<cel::Value, String>, u64) {
        let (value, cost) = actual::evaluate(program.expression(), &self.0, PER_CALL_LIMIT);
        let value = match value {
            Some(value) => value.map_err(|e| go_error(&e)),
            None => Err(COST_LIMIT_EXCEEDED.to_owned()),
        };
        (value, cost)
    }
}

/// A rule's `fieldPath` (`.a.b`, `.a['b.c']`, `.list[2]`) as its
/// segments; `None` when it is not a path expression.
pub fn parse_field_path(path: &str) -> Option<Vec<PathSegment>> {
    let mut segments = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() {
                return None;
            }
            segments.push(PathSegment::Field(name.to_owned()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inner = &after[..end];
            if let Some(quoted) = inner.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
                segments.push(PathSegment::Key(quoted.to_owned()));
            } else {
                segments.push(PathSegment::Index(inner.parse().ok()?));
            }
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(segments)
}

/// cel-go's words for an evaluation error.
fn go_error(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::IndexOutOfBounds(index) => format!("index out of bounds: {}", plain(index)),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::NoSuchOverload(_) | ExecutionError::UnsupportedBinaryOperator(..) => {
            "no such overload".to_owned()
        }
        ExecutionError::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// A CEL value as cel-go prints it in an error.
fn plain(value: &cel::Value) -> String {
    match value {
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        cel::Value::String(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

/// A JSON value as CEL sees it under a node of type `ty`: declared fields
/// by their escaped names, date-times as timestamps, durations, bytes.
pub fn to_cel(value: &Value, ty: &Ty) -> cel::Value {
    match (ty, value) {
        (_, Value::Null) => cel::Value::Null,
        (Ty::Timestamp { date: false }, Value::String(s)) => {
            match chrono::DateTime::parse_from_rfc3339(s) {
                Ok(t) => cel::Value::Timestamp(t),
                Err(_) => cel::Value::String(Arc::new(s.clone())),
            }
        }
        // A date is its midnight in UTC.
        (Ty::Timestamp { date: true }, Value::String(s)) => {
            match chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
                Ok(day) => cel::Value::Timestamp(
                    day.and_time(chrono::NaiveTime::MIN)
                        .and_utc()
                        .fixed_offset(),
                ),
                Err(_) => cel::Value::String(Arc::new(s.clone())),
            }
        }
        (Ty::Duration, Value::String(s)) => match crate::go_duration::parse(s)
            .ok()
            .and_then(|nanos| i64::try_from(nanos).ok())
        {
            Some(nanos) => cel::Value::Duration(chrono::Duration::nanoseconds(nanos)),
            None => cel::Value::String(Arc::new(s.clone())),
        },
        (Ty::Bytes { .. }, Value::String(s)) => {
            use base64::Engine;
            match base64::engine::general_purpose::STANDARD.decode(s) {
                Ok(bytes) => cel::Value::Bytes(Arc::new(bytes)),
                Err(_) => cel::Value::String(Arc::new(s.clone())),
            }
        }
        (Ty::Double, Value::Number(n)) => cel::Value::Float(n.as_f64().unwrap_or(0.0)),
        (Ty::Object { fields, .. }, Value::Object(map)) => {
            let mut out: HashMap<Key, cel::Value> = HashMap::with_capacity(map.len());
            for (name, v) in map {
                let Some(escaped) = escape(name) else {
                    continue;
                };
                if let Some(field_ty) = fields.get(&escaped) {
                    out.insert(Key::String(Arc::new(escaped)), to_cel(v, field_ty));
                }
            }
            cel::Value::Map(out.into())
        }
        (
            Ty::Map {
                value: value_ty, ..
            },
            Value::Object(map),
        ) => {
            let out: HashMap<Key, cel::Value> = map
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v, value_ty)))
                .collect();
            cel::Value::Map(out.into())
        }
        (Ty::List { elem, .. }, Value::Array(items)) => {
            cel::Value::List(Arc::new(items.iter().map(|v| to_cel(v, elem)).collect()))
        }
        (_, Value::Bool(b)) => cel::Value::Bool(*b),
        (_, Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                cel::Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                cel::Value::UInt(u)
            } else {
                cel::Value::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        (_, Value::String(s)) => cel::Value::String(Arc::new(s.clone())),
        (_, Value::Array(items)) => cel::Value::List(Arc::new(
            items.iter().map(|v| to_cel(v, &Ty::Dyn)).collect(),
        )),
        (_, Value::Object(map)) => {
            let out: HashMap<Key, cel::Value> = map
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v, &Ty::Dyn)))
                .collect();
            cel::Value::Map(out.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::custom::schema::Structural;

    /// The messages of the rule failures of `object` (and `old`) under the
    /// spec schema `spec`.
    fn failures(spec: Value, object: Value, old: Option<Value>) -> Vec<String> {
        let schema = Structural::of(&json!({"type": "object", "properties": {"spec": spec}}));
        let mut errs = FieldErrors::default();
        let whole = |spec: Value| json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}, "spec": spec});
        schema.validate_rules_root(
            &whole(object),
            old.map(whole).as_ref(),
            Mode::Decide,
            &mut errs,
        );
        errs.0.iter().map(ToString::to_string).collect()
    }

    fn rule_errors(spec: Value) -> Vec<String> {
        let crd = json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema":
            {"type": "object", "properties": {"spec": spec}}}}]}});
        let mut errs = FieldErrors::default();
        crd::validate(&crd, &mut errs);
        errs.0.iter().map(ToString::to_string).collect()
    }

    /// kube-apiserver 1.32's CEL environment: cel-go's sets extension is
    /// in it, its lists extension and the strings extension's `reverse`
    /// are not.
    #[test]
    fn the_environment_is_kube_apiserver_1_32s() {
        let errs = rule_errors(json!({"type": "object", "properties": {
            "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}}},
            "x-kubernetes-validations": [
                {"rule": "sets.contains(self.tags, ['a']) && !sets.intersects(self.tags, ['b']) && sets.equivalent(self.tags, self.tags)"},
                {"rule": "self.tags.slice(0, 1) == ['a']"},
                {"rule": "self.tags[0].reverse() == 'a'"}]}));
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(
            errs[0].contains("undeclared reference to 'slice'"),
            "{errs:?}"
        );
        assert!(
            errs[1].contains("undeclared reference to 'reverse'"),
            "{errs:?}"
        );
        let rules = json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": [
            {"rule": "sets.contains(self, ['a', 'b']) && !sets.intersects(self, ['x'])"},
            {"rule": "sets.equivalent(self, ['b', 'a', 'a'])"}]});
        let (compiled, results) = NodeRules::compile(&rules, false);
        assert!(results.iter().all(Result::is_ok));
        let mut errs = FieldErrors::default();
        let mut budget = RUNTIME_BUDGET;
        compiled.validate(
            &json!(["a", "b"]),
            None,
            Mode::Decide,
            &FieldPath::new("tags"),
            &mut budget,
            &mut errs,
        );
        assert!(errs.0.is_empty(), "{:?}", errs.0);
        compiled.validate(
            &json!(["a", "x"]),
            None,
            Mode::Decide,
            &FieldPath::new("tags"),
            &mut budget,
            &mut errs,
        );
        assert_eq!(errs.0.len(), 2, "{:?}", errs.0);
    }

    /// What CEL sees of schemas that keep unknown fields or have no type,
    /// as upstream's declarations: only declared fields, and nothing of a
    /// node without a type.
    #[test]
    fn unknown_fields_and_untyped_nodes_are_not_seen() {
        let errs = rule_errors(json!({"type": "object", "properties": {
            "cfg": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "any": {"x-kubernetes-preserve-unknown-fields": true}},
            "x-kubernetes-validations": [
                {"rule": "self.cfg.foo == 'x'"},
                {"rule": "has(self.any)"},
                {"rule": "self.cfg == oldSelf.cfg"}]}));
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0].contains("undefined field 'foo'"), "{errs:?}");
        assert!(errs[1].contains("undefined field 'any'"), "{errs:?}");
    }

    #[test]
    fn rules_are_checked_against_the_schema_when_a_definition_is_written() {
        let errs = rule_errors(
            json!({"type": "object", "properties": {"x": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.z == 100"}]}),
        );
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains("compilation failed: ERROR: <input>:1:5: undefined field 'z'\n | self.z == 100\n | ....^"), "{errs:?}");
        let errs = rule_errors(
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.size >"}]}),
        );
        assert!(
            errs[0].contains("Syntax error: mismatched input '<EOF>'"),
            "{errs:?}"
        );
        assert!(
            errs[0].contains("\n | self.size >\n | ...........^"),
            "{errs:?}"
        );
        let errs = rule_errors(
            json!({"type": "object", "properties": {"x": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.x + 1"}]}),
        );
        assert!(
            errs[0].ends_with("cel expression must evaluate to a bool"),
            "{errs:?}"
        );
        let ok = rule_errors(
            json!({"type": "object", "properties": {"x": {"type": "integer"}, "l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}}},
            "x-kubernetes-validations": [{"rule": "self.x > 0 && self.l.all(s, s.startsWith('a')) && self.l.isSorted()"}]}),
        );
        assert_eq!(ok, Vec::<String>::new());
    }

    #[test]
    fn unbounded_nested_lists_exceed_the_estimated_cost() {
        let errs = rule_errors(
            json!({"type": "object", "properties": {"x": {"type": "array", "items": {
            "type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(s, s == 'string constant')"}]}}}}),
        );
        assert!(
            errs.iter().any(|e| e.contains("exceeds budget")),
            "{errs:?}"
        );
        let bounded = rule_errors(
            json!({"type": "object", "properties": {"x": {"type": "array", "maxItems": 10, "items": {
            "type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10},
            "x-kubernetes-validations": [{"rule": "self.all(s, s == 'string constant')"}]}}}}),
        );
        assert_eq!(bounded, Vec::<String>::new());
    }

    #[test]
    fn transition_rules_need_a_value_to_compare_with() {
        let errs = rule_errors(
            json!({"type": "object", "properties": {"l": {"type": "array",
            "items": {"type": "string", "maxLength": 5, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}, "maxItems": 5}}}),
        );
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].ends_with("oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[spec].properties[l]"), "{errs:?}");
    }

    fn widget() -> Value {
        json!({"type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.x + self.y > 0"},
            {"rule": "self.name.startsWith('a')", "message": "name must start with a", "reason": "FieldValueForbidden", "fieldPath": ".name"},
            {"rule": "self.y >= 0", "messageExpression": "'y is ' + string(self.y)"}],
        "properties": {
            "x": {"type": "integer"}, "y": {"type": "integer"}, "name": {"type": "string", "maxLength": 20},
            "num": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > oldSelf", "message": "num must grow"}]},
            "opt": {"type": "integer", "x-kubernetes-validations": [{"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "optionalOldSelf": true}]},
            "items": {"type": "array", "maxItems": 5, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["key"],
                "items": {"type": "object", "properties": {"key": {"type": "string", "maxLength": 5}, "val": {"type": "integer"}},
                    "x-kubernetes-validations": [{"rule": "self.val >= oldSelf.val", "message": "val must not shrink"}]}},
            "when": {"type": "string", "format": "date-time", "x-kubernetes-validations": [{"rule": "self > timestamp('2020-01-01T00:00:00Z')"}]},
            "ttl": {"type": "string", "format": "duration", "x-kubernetes-validations": [{"rule": "self < duration('1h')"}]},
            "qty": {"type": "string", "maxLength": 20, "x-kubernetes-validations": [{"rule": "isQuantity(self) && quantity(self).isLessThan(quantity('10Gi'))"}]},
            "re": {"type": "string", "maxLength": 20, "x-kubernetes-validations": [{"rule": "self.find('[0-9]+') == '42'"}]},
            "large": {"type": "array", "maxItems": 725, "items": {"type": "integer"},
                "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, y == x))"}]}
        }})
    }

    #[test]
    fn failed_rules_report_as_kube_apiserver_reports_them() {
        assert_eq!(
            failures(widget(), json!({"x": 1, "y": 0, "name": "abc"}), None),
            Vec::<String>::new()
        );
        assert_eq!(
            failures(widget(), json!({"x": 0, "y": -1, "name": "zzz"}), None),
            vec![
                "spec: Invalid value: \"object\": failed rule: self.x + self.y > 0",
                "spec.name: Forbidden: name must start with a",
                "spec: Invalid value: \"object\": y is -1",
            ]
        );
        assert_eq!(
            failures(widget(), json!({"y": 1, "name": "a"}), None),
            vec![
                "spec: Invalid value: \"object\": no such key: x evaluating rule: self.x + self.y > 0"
            ]
        );
    }

    #[test]
    fn transition_rules_compare_with_the_correlated_stored_value() {
        let base = json!({"x": 1, "y": 0, "name": "a", "num": 10, "opt": 5, "items": [{"key": "a", "val": 5}]});
        // A create has no old value: transition rules do not run.
        assert_eq!(failures(widget(), base.clone(), None), Vec::<String>::new());
        let mut shrunk = base.clone();
        shrunk["num"] = json!(9);
        shrunk["opt"] = json!(4);
        shrunk["items"] = json!([{"key": "a", "val": 4}, {"key": "b", "val": 0}]);
        assert_eq!(
            failures(widget(), shrunk, Some(base.clone())),
            vec![
                "spec.items[0]: Invalid value: \"object\": val must not shrink",
                "spec.num: Invalid value: \"integer\": num must grow",
                "spec.opt: Invalid value: \"integer\": failed rule: !oldSelf.hasValue() || self >= oldSelf.value()",
            ]
        );
    }

    #[test]
    fn unchanged_values_are_not_checked_again_on_update() {
        let stored = json!({"x": 0, "y": 0, "name": "a"});
        let mut changed = stored.clone();
        changed["name"] = json!("ab");
        // spec changed, so its rules run: x + y > 0 fails.
        assert_eq!(failures(widget(), changed, Some(stored.clone())).len(), 1);
        let errs = failures(
            json!({"type": "object", "properties": {"x": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 5"}]}, "n": {"type": "integer"}}}),
            json!({"x": 1, "n": 2}),
            Some(json!({"x": 1, "n": 1})),
        );
        assert_eq!(errs, Vec::<String>::new());
    }

    #[test]
    fn kubernetes_libraries_and_formats() {
        let good = json!({"x": 1, "y": 0, "name": "a", "when": "2024-05-01T00:00:00Z", "ttl": "30m", "qty": "2Gi", "re": "ab42c"});
        assert_eq!(failures(widget(), good, None), Vec::<String>::new());
        let bad = json!({"x": 1, "y": 0, "name": "a", "when": "2019-01-01T00:00:00Z", "ttl": "2h", "qty": "20Gi", "re": "abc"});
        assert_eq!(
            failures(widget(), bad, None),
            vec![
                "spec.qty: Invalid value: \"string\": failed rule: isQuantity(self) && quantity(self).isLessThan(quantity('10Gi'))",
                "spec.re: Invalid value: \"string\": failed rule: self.find('[0-9]+') == '42'",
                "spec.ttl: Invalid value: \"string\": failed rule: self < duration('1h')",
                "spec.when: Invalid value: \"string\": failed rule: self > timestamp('2020-01-01T00:00:00Z')",
            ]
        );
    }

    #[test]
    fn deep_rules_are_refused_or_run_without_exhausting_the_stack() {
        let rule = |text: String| {
            json!({"type": "object", "properties": {"x": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": text}]})
        };
        let chain = format!("self.x{} > 0", " + 1".repeat(400));
        let errs = rule_errors(rule(chain));
        assert!(
            errs[0].contains("expression recursion limit exceeded: 250"),
            "{errs:?}"
        );
        let parens = format!("{}self.x{} > 0", "(".repeat(200), ")".repeat(200));
        assert_eq!(rule_errors(rule(parens)).len(), 1);
        let nots = format!("{}(self.x > 0)", "!!".repeat(100));
        assert_eq!(rule_errors(rule(nots.clone())), Vec::<String>::new());
        assert_eq!(
            failures(rule(nots.clone()), json!({"x": 1}), None),
            Vec::<String>::new()
        );
        assert_eq!(failures(rule(nots), json!({"x": 0}), None).len(), 1);
    }

    #[test]
    fn the_format_library_checks_named_formats() {
        let spec = json!({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [
                {"rule": "!format.dns1123Label().validate(self).hasValue()", "message": "not a DNS label"},
                {"rule": "format.named('uuid').hasValue() && !format.named('nope').hasValue()"}]},
            "id": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [
                {"rule": "!format.named('uuid').value().validate(self).hasValue()", "message": "not a uuid"}]}}});
        assert!(
            rule_errors(spec.clone()).is_empty(),
            "{:?}",
            rule_errors(spec.clone())
        );
        // The problems joined are of unknown number and length: refused, as
        // upstream's estimate refuses them.
        let mut joined = spec.clone();
        joined["properties"]["name"]["x-kubernetes-validations"][0]["messageExpression"] =
            json!("format.dns1123Label().validate(self).value().join(', ')");
        assert!(rule_errors(joined)[0].contains("estimated messageExpression cost exceeds budget"));
        assert_eq!(
            failures(
                spec.clone(),
                json!({"name": "ok-name", "id": "5f2b9c1e-8a1d-4c2e-9f3b-0a1b2c3d4e5f"}),
                None
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            failures(spec, json!({"name": "Not_OK", "id": "x"}), None),
            vec![
                "spec.id: Invalid value: \"string\": not a uuid",
                "spec.name: Invalid value: \"string\": not a DNS label",
            ]
        );
    }

    #[test]
    fn a_rule_too_costly_for_its_value_is_refused() {
        let spec = json!({"x": 1, "y": 0, "name": "a", "large": vec![20; 725]});
        assert_eq!(
            failures(widget(), spec, None),
            vec![
                "spec.large: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, y == x))"
            ]
        );
        let spec = json!({"x": 1, "y": 0, "name": "a", "large": vec![20; 100]});
        assert_eq!(failures(widget(), spec, None), Vec::<String>::new());
    }
}
